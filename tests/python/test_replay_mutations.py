"""Differential mutation test of the replay readers: the C++ reader (replay/replay_file.cc, driven
through tests/replay/replay_check.cc) and the Python reader (python/myriad/replay.py) get the same
few thousand damaged files, made deterministically from small valid replays that the C++ writer
writes here, and must give the same verdict on every one. Refusals are each library's own
ReplayError; accepted files read back arrays of the declared shapes; no case crashes, hangs
(each case's time is bounded) or needs more memory than a few hundred MB (each reader runs in a
child process under RLIMIT_AS).

    PYTHONPATH=build/python python -m pytest -q -s tests/python/test_replay_mutations.py
"""
import json
import os
import random
import resource
import struct
import subprocess
import sys
import zlib
from pathlib import Path

import pytest

from conftest import BUILD_DIR, SOURCE_DIR

CHECK = BUILD_DIR / "tests" / "replay" / "replay_check"
READER = SOURCE_DIR / "python" / "myriad" / "replay.py"
CPP_MEMORY = 256 << 20  # RLIMIT_AS of the C++ child
PY_MEMORY = 1 << 30  # the Python child (numpy alone maps a few hundred MB)
CASE_SECONDS = 2.0  # each case, in either reader
BATCH_SECONDS = 120  # one child's whole run: past it, a hang

# The Python child: loads replay.py on its own (no _core, no torch) and reads the paths on stdin,
# printing what replay_check prints.
PY_CHILD = r"""
import importlib.util, sys, time
spec = importlib.util.spec_from_file_location("replay_under_test", sys.argv[1])
replay = importlib.util.module_from_spec(spec)
spec.loader.exec_module(replay)
for path in sys.stdin.read().splitlines():
    start = time.perf_counter()
    try:
        r = replay.decode_replay(open(path, "rb").read(), path)
        verdict = "ok " + "".join(
            f"{name}:{a.dtype}:{'x'.join(map(str, a.shape))};"
            for name, a in sorted(r.arrays.items()))
    except replay.ReplayError as e:
        verdict = f"refused {e}"
    except BaseException as e:
        verdict = f"other {type(e).__name__} {e}"
    verdict = verdict.replace("\n", " ").replace("\r", " ")
    print(f"{(time.perf_counter() - start) * 1e3:.3f} {verdict}", flush=True)
"""


def _limit(nbytes):
    def apply():
        resource.setrlimit(resource.RLIMIT_AS, (nbytes, nbytes))
        resource.setrlimit(resource.RLIMIT_CORE, (0, 0))
    return apply


def run_reader(command, paths, memory):
    """Verdicts per path: (ms, text), or ("crash", rc) / ("hang", None) for a case that killed
    the child; the child restarts after the case that crashed it."""
    out, rest = [], list(paths)
    env = {**os.environ, "OPENBLAS_NUM_THREADS": "1", "OMP_NUM_THREADS": "1"}
    while rest:
        try:
            p = subprocess.run(command, input="\n".join(rest) + "\n", capture_output=True,
                               text=True, errors="replace", timeout=BATCH_SECONDS,
                               preexec_fn=_limit(memory), env=env)
            lines, rc = p.stdout.splitlines(), p.returncode
        except subprocess.TimeoutExpired as e:
            lines, rc = (e.stdout or b"").decode(errors="replace").splitlines(), None
        for line in lines[:len(rest)]:
            ms, _, text = line.partition(" ")
            out.append((float(ms), text))
        done = min(len(lines), len(rest))
        rest = rest[done:]
        if rest:  # the child died (or hung) on rest[0]
            out.append(("hang", None) if rc is None else ("crash", rc))
            rest = rest[1:]
    return out


# ---------------------------------------------------------------------------------------------
# Mutations
# ---------------------------------------------------------------------------------------------

def split(data):
    _, major, minor, hlen, plen = struct.unpack_from("<8sHHIQ", data)
    return major, minor, data[24:24 + hlen], data[24 + hlen:]


def join(header, payload, major=1, minor=1, hlen=None, plen=None):
    return struct.pack("<8sHHIQ", b"MYRIADRP", major, minor,
                       len(header) if hlen is None else hlen,
                       len(payload) if plen is None else plen) + header + payload


def with_text(data, text):
    """The file with its header text replaced (lengths fixed up)."""
    major, minor, _, payload = split(data)
    return join(text, payload, major, minor)


def with_json(data, edit):
    header = json.loads(split(data)[2])
    edit(header)
    return with_text(data, json.dumps(header).encode())


def set_path(obj, path, value):
    for key in path[:-1]:
        obj = obj[key]
    obj[path[-1]] = value


def number_paths(header):
    """Every place in the header that the readers read as a size, offset or dimension, plus a
    few that they pass through."""
    paths = [("payload_bytes",)]
    paths += [(k,) for k in ("num_envs", "num_frames", "seed", "frame_dt") if k in header]
    for name, spec in header["arrays"].items():
        paths += [("arrays", name, "offset"), ("arrays", name, "bytes")]
        paths += [("arrays", name, "shape", k) for k in range(len(spec["shape"]))]
    return paths


HOSTILE_VALUES = [-1, 0, 1, 7, 8, 2**31, 2**32, 2**53 + 1, 2**63 - 1, 2**63, 2**64 - 1, 2**64,
                  10**30, 1.5, 1e300, -0.0, "12", True, None, [], {}, [3]]
# Raw JSON number texts that json.dumps cannot write.
RAW_NUMBERS = [b"1e400", b"1e-400", b"2.5e308", b"-1e400", b"NaN", b"Infinity", b"-Infinity",
               b"1" * 5000, b"-0",
               b"1E2", b"0.0", b"18446744073709551615", b"18446744073709551616",
               b"9223372036854775808", b"-9223372036854775809", b"1" * 25]


def json_cases(data, rng):
    header = json.loads(split(data)[2])
    text = json.dumps(header).encode()
    cases = []
    for path in number_paths(header):
        for value in HOSTILE_VALUES:
            cases.append((f"json {'/'.join(map(str, path))}={value!r}",
                          with_json(data, lambda h, p=path, v=value: set_path(h, p, v))))
        marker = 987654321012345  # replaced by the raw number text after dumping
        h = json.loads(text)
        set_path(h, path, marker)
        marked = json.dumps(h).encode()
        for raw in rng.sample(RAW_NUMBERS, 5):
            cases.append((f"json {'/'.join(map(str, path))}={raw[:20]!r}",
                          with_text(data, marked.replace(str(marker).encode(), raw))))
    names = list(header["arrays"])
    for name in names:
        spec_edits = {
            "dtype": ["float64", "int8", "", 4, None, ["float32"]],
            "shape": ["23", {}, [[2]], [2.0], [-2], [], [1] * 33, None],
            "shuffle": [1, 0, "true", None, [], False, True],
        }
        for key, values in spec_edits.items():
            for value in values:
                cases.append((f"json arrays/{name}/{key}={value!r}",
                              with_json(data, lambda h, n=name, k=key, v=value:
                                        h["arrays"][n].__setitem__(k, v))))
        for key in ("dtype", "shape", "offset", "bytes", "shuffle"):
            cases.append((f"json arrays/{name} without {key}",
                          with_json(data, lambda h, n=name, k=key: h["arrays"][n].pop(k, None))))
        cases.append((f"json arrays/{name} removed",
                      with_json(data, lambda h, n=name: h["arrays"].pop(n))))
        cases.append((f"json arrays/{name} renamed",
                      with_json(data, lambda h, n=name: h["arrays"].__setitem__(
                          n + "_x", h["arrays"].pop(n)))))
        for value in (3, "x", [], None):
            cases.append((f"json arrays/{name}={value!r}",
                          with_json(data, lambda h, n=name, v=value:
                                    h["arrays"].__setitem__(n, v))))
        other = rng.choice(names)
        cases.append((f"json arrays/{name} at {other}'s offset",
                      with_json(data, lambda h, n=name, o=other: h["arrays"][n].__setitem__(
                          "offset", h["arrays"][o]["offset"]))))
        cases.append((f"json arrays/{name} offset+4",
                      with_json(data, lambda h, n=name: h["arrays"][n].__setitem__(
                          "offset", h["arrays"][n]["offset"] + 4))))
    for key, values in {"arrays": [[], 3, "a", None, {}], "format": ["zip", 1, None],
                        "payload_bytes": ["x"], "num_envs": [3, "2"], "num_frames": [6, "5"],
                        "env": [1, None, {"a": [1]}], "version": [[9, 9], "x"]}.items():
        for value in values:
            cases.append((f"json {key}={value!r}",
                          with_json(data, lambda h, k=key, v=value: h.__setitem__(k, v))))
    for key in ("arrays", "payload_bytes", "format", "scene", "num_envs"):
        cases.append((f"json without {key}", with_json(data, lambda h, k=key: h.pop(k, None))))
    # The scene's references to bodies, meshes and height fields.
    scene_values = [-1, 0, 1, 2, 3, 1.0, "1", None, True, 2**63]
    for key, values in {("scene",): [None, [], {}, {"bodies": []}, {"bodies": "abc"}],
                        ("scene", "bodies"): [[], ["w"], ["w", "a"], ["w", "a", "b", "c"], 3],
                        ("scene", "geoms"): [None, 3, [1], [{}], [{"body": 0, "type": "mesh"}]],
                        ("scene", "lines"): [None, [{"body": 9}], [[]]],
                        ("scene", "meshes"): [None, [], [{}], 5],
                        ("scene", "hfields"): [None, [], [{}], 5]}.items():
        for value in values:
            cases.append((f"json {'/'.join(key)}={value!r}",
                          with_json(data, lambda h, k=key, v=value: set_path(h, k, v))))
    scene = header.get("scene", {})
    for kind in ("geoms", "lines"):
        for k in range(len(scene.get(kind, []))):
            for value in scene_values:
                cases.append((f"json scene/{kind}/{k}/body={value!r}",
                              with_json(data, lambda h, p=("scene", kind, k, "body"), v=value:
                                        set_path(h, p, v))))
    def scene_case(path, value):
        cases.append((f"json scene/{'/'.join(map(str, path))}={value!r}",
                      with_json(data, lambda h, p=("scene", *path), v=value: set_path(h, p, v))))

    # A mesh or hfield geom's row, and every key of the rows they name.
    for k, geom in enumerate(scene.get("geoms", [])):
        if geom.get("type") in ("mesh", "hfield"):
            for value in scene_values:
                scene_case(("geoms", k, geom["type"]), value)
    for kind, extra in (("meshes", []), ("hfields", [[], 6])):
        for k, row in enumerate(scene.get(kind, [])):
            for key in row:
                for value in scene_values + extra:
                    scene_case((kind, k, key), value)
    # Plotted series: names against the array.
    if "series" in header:
        for value in [None, [], ["a"], ["a", "b", "c"], ["a", 1], "ab", {"a": 1}]:
            cases.append((f"json series={value!r}",
                          with_json(data, lambda h, v=value: h.__setitem__("series", v))))
        cases.append(("json without series", with_json(data, lambda h: h.pop("series"))))
    # Deep nesting, as a new key and in place of the scene.
    for depth in (1, 62, 63, 64, 65, 200, 5000, 100000):
        for opener, closer in ((b"[", b"]"), (b'{"a":', b"}")):
            nested = opener * depth + b"0" + closer * depth
            cases.append((f"json deep {opener[:1]!r}*{depth}",
                          with_text(data, text[:-1] + b', "deep": ' + nested + b"}")))
        cases.append((f"json unbalanced [*{depth}",
                      with_text(data, text[:-1] + b', "deep": ' + b"[" * depth + b"}")))
    # Whole headers that are not objects; text-level damage.
    raws = [b"", b"null", b"[]", b"3", b'"x"', b"{}", b"[" * 70000, b"\xef\xbb\xbf" + text,
            text + b" ", b" " + text, text + b"{}", text[:-1], text + b"\x00",
            text.replace(b'"env"', b'"\\ud800"'), text.replace(b'"env"', b'"\\udc00"'),
            text.replace(b'"env"', b'"\\ud83d\\ude00"'), text.replace(b'"env"', b'"\xed\xa0\x80"'),
            text.replace(b'"env"', b'"\xc0\xae"'), text.replace(b'"env"', b'"e\tv"'),
            text.replace(b'"env"', b'"e\\u0000v"'), text.replace(b'"env"', b'"e\x7fv"'),
            text[:-1] + b', "env": "dup"}', text[:-1] + b', "arrays": {}}',
            text.replace(b'"offset"', b'"offset": 0, "offset"', 1),
            text.replace(b"{", b"{ ", 3), text.replace(b",", b",\n"), text.replace(b":", b"\t:\r"),
            text.replace(b'"', b"'"), text[:-1] + b", }", text.replace(b"true", b"True"),
            text[:-1] + b', "x": 1e99999}', text[:-1] + b', "x": -}',
            text[:-1] + b', "x": 01}', text[:-1] + b', "x": .5}', text[:-1] + b', "x": 1.}',
            text[:-1] + b', "x": "\\x41"}', text[:-1] + b', "x": /* c */ 1}']
    for k, raw in enumerate(raws):
        cases.append((f"json text #{k}", with_text(data, raw)))
    return cases


def byte_cases(data, rng, flips, sets, cuts):
    _, _, text, payload = split(data)
    n, hend = len(data), 24 + len(text)
    cases = []
    # Positions: all of the prefix, then header and payload bytes at random.
    positions = list(range(24)) + rng.sample(range(24, hend), min(flips // 2, hend - 24))
    positions += rng.sample(range(hend, n), min(flips - len(positions), n - hend))
    for at in positions:
        bit = rng.randrange(8)
        bad = bytearray(data)
        bad[at] ^= 1 << bit
        cases.append((f"flip byte {at} bit {bit}", bytes(bad)))
    for at in rng.sample(range(n), min(sets, n)):
        for value in (0x00, 0xFF, 0x7F):
            if data[at] != value:
                bad = bytearray(data)
                bad[at] = value
                cases.append((f"set byte {at}={value:#x}", bytes(bad)))
    for keep in sorted(set(list(range(0, 26)) + list(range(0, n, max(1, n // cuts))) + [n - 1])):
        cases.append((f"cut to {keep} bytes", data[:keep]))
    for count in (1, 3, 8, 100):
        cases.append((f"append {count} bytes", data + bytes(count)))
        cases.append((f"append {count} bytes, payload length fixed",
                      join(text, payload + b"\x01" * count, *split(data)[:2])))
    for at in rng.sample(range(n), 20):
        span = rng.choice((1, 4, 16))
        cases.append((f"duplicate {span} bytes at {at}", data[:at + span] + data[at:]))
    return cases


def prefix_cases(data):
    major, minor, text, payload = split(data)
    cases = []
    for v in (0, 1, 2, 0xFFFF):
        cases.append((f"major={v}", join(text, payload, v, minor)))
        cases.append((f"minor={v}", join(text, payload, major, v)))
    for v in (0, 1, len(text) - 1, len(text) + 1, 2**31, 2**32 - 1):
        cases.append((f"header length={v}", join(text, payload, major, minor, hlen=v)))
    for v in (0, 1, len(payload) - 1, len(payload) + 1, 2**32, 2**63, 2**64 - 1):
        cases.append((f"payload length={v}", join(text, payload, major, minor, plen=v)))
    return cases


def payload_cases(data):
    """Payloads that are valid zlib but not what the header says, and zlib bombs."""
    major, minor, text, payload = split(data)
    header = json.loads(text)
    raw = zlib.decompress(payload)
    size = header["payload_bytes"]

    def with_payload(body, payload_bytes=None, **kw):
        h = dict(header, payload_bytes=size if payload_bytes is None else payload_bytes)
        return join(json.dumps(h).encode(), body, major, minor, **kw)

    cases = [
        ("payload one byte short", with_payload(zlib.compress(raw[:-1]))),
        ("payload one byte long", with_payload(zlib.compress(raw + b"\0"))),
        ("payload twice", with_payload(zlib.compress(raw) * 2)),
        ("payload empty stream", with_payload(zlib.compress(b""))),
        ("payload no stream", with_payload(b"")),
        ("payload raw deflate", with_payload(zlib.compress(raw, 9)[2:-4])),
        ("payload stored blocks", with_payload(zlib.compress(raw, 0))),
        ("payload level 9", with_payload(zlib.compress(raw, 9))),
        ("payload gzip", with_payload(__import__("gzip").compress(raw))),
        ("payload bad adler", with_payload(zlib.compress(raw)[:-1] + b"\0")),
        ("payload_bytes 0, empty stream", with_payload(zlib.compress(b""), payload_bytes=0)),
        ("payload_bytes 0, one byte", with_payload(zlib.compress(b"\0"), payload_bytes=0)),
    ]
    d = zlib.compressobj(zdict=raw[:64])
    cases.append(("payload with a preset dictionary", with_payload(d.compress(raw) + d.flush())))
    # Each env's frame count, in the payload, outside 0..F.
    frames = header["arrays"]["num_frames"]
    at, frames_count = frames["offset"], frames["shape"][0]
    F = header["arrays"]["body_pose"]["shape"][1]
    for value in (-1, F + 1, 2**31 - 1, F, 0):
        stored = struct.pack(f"<{frames_count}i", *([value] * frames_count))
        if frames.get("shuffle"):  # byte planes
            stored = bytes(stored[i * 4 + k] for k in range(4) for i in range(frames_count))
        cases.append((f"payload num_frames={value}",
                      with_payload(zlib.compress(raw[:at] + stored + raw[at + len(stored):]))))
    # Bombs: 8 MB of zeros is a valid (if silly) payload; a lie about it is not.
    bomb_raw = raw + bytes(8 << 20)
    bomb = zlib.compress(bomb_raw, 9)
    cases.append(("bomb, honest payload_bytes", with_payload(bomb, len(bomb_raw))))
    cases.append(("bomb, payload_bytes too small", with_payload(bomb, len(raw))))
    cases.append(("bomb, payload_bytes 1032x", with_payload(bomb, len(bomb) * 1032 + 64)))
    cases.append(("bomb, payload_bytes past 1032x", with_payload(bomb, len(bomb) * 1032 + 65)))
    cases.append(("lie, payload_bytes 1032x", with_payload(payload, len(payload) * 1032)))
    # A 1 MB stream of noise claiming 1 GB: under RLIMIT_AS only a reader that sizes its
    # buffer by the stream, not by the claim, gets to refuse it.
    noise = zlib.compress(raw + random.Random(5).randbytes(1 << 20), 1)
    cases.append(("lie, 1 MB of noise claims 1032x", with_payload(noise, len(noise) * 1032)))
    return cases


def all_cases(samples):
    rng = random.Random(20261130)
    cases = []
    for name, data in samples.items():
        big = name == "recording"
        sample_cases = [("unchanged", data)] + prefix_cases(data) + payload_cases(data)
        sample_cases += byte_cases(data, rng, flips=700 if big else 200, sets=150 if big else 60,
                                   cuts=120 if big else 40)
        sample_cases += json_cases(data, rng)
        cases += [(f"{name}: {label}", bad) for label, bad in sample_cases]
    return cases


# ---------------------------------------------------------------------------------------------
# The test
# ---------------------------------------------------------------------------------------------

def declared_shapes(data):
    header = json.loads(split(data)[2])
    return "".join(f"{name}:{spec['dtype']}:{'x'.join(map(str, spec['shape']))};"
                   for name, spec in sorted(header["arrays"].items()))


@pytest.mark.skipif(not CHECK.exists(), reason=f"{CHECK} is not built (target replay_check)")
def test_cpp_and_python_readers_agree_on_mutated_files(tmp_path):
    subprocess.run([str(CHECK), "--samples", str(tmp_path)], check=True)
    samples = {name: (tmp_path / f"{name}.replay").read_bytes() for name in ("recording", "plain")}
    cases = all_cases(samples)
    work = tmp_path / "cases"
    work.mkdir()
    paths = []
    for k, (_, data) in enumerate(cases):
        path = work / f"{k:05d}.replay"
        path.write_bytes(data)
        paths.append(str(path))

    cpp = run_reader([str(CHECK)], paths, CPP_MEMORY)
    py = run_reader([sys.executable, "-c", PY_CHILD, str(READER)], paths, PY_MEMORY)

    counts = dict(total=len(cases), accepted=0, refused=0, crashes=0, hangs=0, slow=0,
                  foreign_errors=0, disagreements=0, wrong_shapes=0)
    problems = []
    for (label, data), (c_ms, c), (p_ms, p) in zip(cases, cpp, py):
        bad = []
        for who, ms, verdict in (("C++", c_ms, c), ("Python", p_ms, p)):
            if ms in ("crash", "hang"):
                counts["crashes" if ms == "crash" else "hangs"] += 1
                bad.append(f"{who} {ms} ({verdict})")
            elif ms > CASE_SECONDS * 1e3:
                counts["slow"] += 1
                bad.append(f"{who} took {ms:.0f} ms")
            elif verdict.startswith("other"):
                counts["foreign_errors"] += 1
                bad.append(f"{who} raised {verdict}")
        if not bad:
            c_ok, p_ok = c.startswith("ok "), p.startswith("ok ")
            if c_ok != p_ok:
                counts["disagreements"] += 1
                bad.append(f"C++ says {c[:200]!r}, Python {p[:200]!r}")
            elif c_ok:
                counts["accepted"] += 1
                if not (c[3:] == p[3:] == declared_shapes(data)):
                    counts["wrong_shapes"] += 1
                    bad.append(f"shapes: C++ {c[3:]}, Python {p[3:]}, declared "
                               f"{declared_shapes(data)}")
            else:
                counts["refused"] += 1
        if bad:
            problems.append(f"{label}: {'; '.join(bad)}")
    print("\nreplay mutations: " + ", ".join(f"{k}={v}" for k, v in counts.items()))
    assert counts["total"] >= 2000
    assert counts["accepted"] > 0 and counts["refused"] > 0
    assert not problems, f"{len(problems)} problem cases:\n" + "\n".join(problems[:40])
