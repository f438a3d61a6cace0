"""The prebuilt GPU binaries that scripts/gpu-check.sh may run instead of compiling on the host.

  gpu_prebuilt.py hash ROOT
      The hash of the sources the binaries are compiled from (see `compiled`).
  gpu_prebuilt.py pack --build B --out P --hash H --limit-mib L [--carry DIR ...] FILE ...
      Compresses FILEs (paths under B, in priority order) into P with a manifest; a file that
      would take the carry (P plus every --carry DIR) past L MiB is left out, and so are the
      ones after it (a file not built is left out alone).
  gpu_prebuilt.py check --pack P --root ROOT --build B
      On the host: unpacks P's binaries under B when its manifest matches ROOT's sources and the
      host's PyTorch; prints one JSON object, {"use": true|false, "why": ..., "files": [...]}.

Only the standard library (and, for the PyTorch version, torch itself) is used.
"""

import argparse
import datetime
import hashlib
import json
import lzma
import os
import shutil
import subprocess
import sys

MANIFEST = "manifest.json"
FORMAT = 1

# Top-level folders and files that no binary is compiled from (docs, scripts, configs read at
# run time, the carry, build and run outputs), folders below the top, and suffixes likewise;
# hidden folders (tools' caches) anywhere.
SKIP_TOP = {
    ".git", ".github", ".gitignore", ".gitattributes", ".clang-format", ".ci", ".venv", ".whl", ".debs", ".gpu-prebuilt", ".gl", "build", "runs",
    "docs", "scripts", "spikes", "examples", "configs", "Makefile", "LICENSE", "NOTICE",
    "mkdocs.yml", "pyproject.toml",
}
SKIP_BELOW = {os.path.join("tests", "python"), os.path.join("tests", "docs")}
SKIP_SUFFIXES = (".md", ".py", ".pyc", ".yaml", ".yml", ".toml", ".cff")


def compiled(root):
    """The files under root that a binary may be compiled from, relative, sorted. Everything but
    what SKIP_* names: a false positive only makes a pack stale, a false negative would run a
    binary built from other sources."""
    found = []
    for here, dirs, files in os.walk(root):
        rel = os.path.relpath(here, root)
        if rel == ".":
            dirs[:] = [d for d in dirs if d not in SKIP_TOP and not d.startswith("build-")]
            files = [f for f in files if f not in SKIP_TOP]
        dirs[:] = sorted(d for d in dirs if d != "__pycache__" and not d.startswith(".")
                         and os.path.normpath(os.path.join(rel, d)) not in SKIP_BELOW)
        for f in files:
            if not f.endswith(SKIP_SUFFIXES):
                found.append(os.path.normpath(os.path.join(rel, f)))
    return sorted(found)


def source_hash(root):
    h = hashlib.sha256()
    for rel in compiled(root):
        h.update(rel.encode() + b"\0")
        with open(os.path.join(root, rel), "rb") as f:
            h.update(hashlib.sha256(f.read()).digest())
    return h.hexdigest()


def torch_version():
    try:
        import torch  # noqa: PLC0415 (only here: hash and pack need no torch)
    except ImportError:
        return None
    return torch.__version__


def dir_bytes(path):
    total = 0
    for here, _, files in os.walk(path):
        total += sum(os.path.getsize(os.path.join(here, f)) for f in files)
    return total


def pack(args):
    torch = torch_version()
    if torch is None:
        sys.exit("gpu_prebuilt.py pack: this Python has no torch; run it with the one whose "
                 "LibTorch the binaries link (the project's .venv)")
    shutil.rmtree(args.out, ignore_errors=True)
    os.makedirs(args.out)
    limit = args.limit_mib * 1024 * 1024
    used = sum(dir_bytes(d) for d in args.carry if os.path.isdir(d))
    kept, left_out = [], []
    full = False  # a file was left out for the limit: the ones after it too, in priority order
    for rel in args.files:
        src = os.path.join(args.build, rel)
        if full or not os.path.isfile(src):
            left_out.append({"path": rel, "why": "after one left out" if full else "not built"})
            continue
        with open(src, "rb") as f:
            data = f.read()
        packed = lzma.compress(data, preset=6)
        if used + len(packed) + 4096 > limit:
            left_out.append({"path": rel, "why": f"{len(packed)} bytes packed would take the "
                             f"carry past {args.limit_mib} MiB"})
            full = True
            continue
        name = rel.replace("/", "__") + ".xz"
        with open(os.path.join(args.out, name), "wb") as f:
            f.write(packed)
        used += len(packed)
        kept.append({"path": rel, "packed": name, "bytes": len(data), "packed_bytes": len(packed),
                     "sha256": hashlib.sha256(data).hexdigest()})
    commit = subprocess.run(["git", "rev-parse", "--short", "HEAD"], capture_output=True,
                            text=True, cwd=os.path.dirname(os.path.abspath(__file__)))
    manifest = {
        "format": FORMAT, "source_hash": args.hash, "torch": torch,
        "cuda_architectures": "90", "built": datetime.datetime.now(datetime.timezone.utc)
        .strftime("%Y-%m-%dT%H:%M:%SZ"), "commit": commit.stdout.strip() or None,
        "files": kept, "left_out": left_out, "carry_bytes": used,
    }
    with open(os.path.join(args.out, MANIFEST), "w") as f:
        json.dump(manifest, f, indent=1)
    print(f"gpu-prebuild: {len(kept)} binaries packed in {args.out} "
          f"(the carry {used / 2**20:.1f} MiB of {args.limit_mib})")
    for item in left_out:
        print(f"  left out (built on the host): {item['path']}: {item['why']}")


def check(args):
    def answer(use, why, files=()):
        print(json.dumps({"use": use, "why": why, "files": list(files)}))
        return 0

    path = os.path.join(args.pack, MANIFEST)
    if not os.path.isfile(path):
        return answer(False, "no pack (scripts/gpu-prebuild.sh makes one)")
    with open(path) as f:
        manifest = json.load(f)
    if manifest.get("format") != FORMAT:
        return answer(False, f"pack format {manifest.get('format')}, wanted {FORMAT}")
    here = source_hash(args.root)
    if manifest["source_hash"] != here:
        return answer(False, f"stale: built from sources {manifest['source_hash'][:12]} "
                      f"(commit {manifest.get('commit')}), these are {here[:12]}")
    torch = torch_version()
    if manifest["torch"] != torch:
        return answer(False, f"built against torch {manifest['torch']}, the host has {torch}")
    files = []
    for item in manifest["files"]:
        with open(os.path.join(args.pack, item["packed"]), "rb") as f:
            data = lzma.decompress(f.read())
        if hashlib.sha256(data).hexdigest() != item["sha256"]:
            return answer(False, f"{item['packed']} does not unpack to what was packed")
        dst = os.path.join(args.build, item["path"])
        os.makedirs(os.path.dirname(dst), exist_ok=True)
        with open(dst, "wb") as f:
            f.write(data)
        os.chmod(dst, 0o755)
        files.append(item["path"])
    return answer(True, f"built {manifest['built']} from commit {manifest.get('commit')}", files)


def main():
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    sub = parser.add_subparsers(dest="command", required=True)
    p = sub.add_parser("hash")
    p.add_argument("root")
    p = sub.add_parser("pack")
    p.add_argument("--build", required=True)
    p.add_argument("--out", required=True)
    p.add_argument("--hash", required=True)
    p.add_argument("--limit-mib", type=float, required=True)
    p.add_argument("--carry", action="append", default=[])
    p.add_argument("files", nargs="+")
    p = sub.add_parser("check")
    p.add_argument("--pack", required=True)
    p.add_argument("--root", required=True)
    p.add_argument("--build", required=True)
    args = parser.parse_args()
    if args.command == "hash":
        print(source_hash(args.root))
        return 0
    if args.command == "pack":
        pack(args)
        return 0
    return check(args)


if __name__ == "__main__":
    sys.exit(main())
