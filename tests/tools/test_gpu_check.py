"""scripts/gpu-check.sh and its recorder, on a machine without a GPU: the script must not break
for a silly reason when a GPU comes. Without one it records "no GPU" for every step and exits 0;
the recorder keeps every figure in one readable JSON file, written atomically."""
import json
import os
import shutil
import subprocess
import sys
from pathlib import Path

import pytest

SRC = Path(os.environ.get("MYRIAD_SOURCE_DIR", "."))
RECORD = SRC / "scripts/gpu_check_record.py"
STEPS = ["1_build", "2_agreement", "3_env_steps", "4_ppo", "5_nccl_tag_python", "6_mujoco_warp",
         "7_extras"]


def has_gpu():
    smi = shutil.which("nvidia-smi")
    return smi is not None and subprocess.run([smi, "-L"], capture_output=True).returncode == 0


@pytest.mark.skipif(has_gpu(), reason="a GPU answers: gpu-check would run for real")
def test_without_a_gpu_every_step_says_so_and_the_script_exits_0(tmp_path):
    env = dict(os.environ, OUT=str(tmp_path))
    env.pop("MYRIAD_GPU_CHECK_DRY", None)
    r = subprocess.run(["bash", str(SRC / "scripts/gpu-check.sh")], env=env, capture_output=True,
                       text=True, timeout=120)
    assert r.returncode == 0, r.stdout + r.stderr
    doc = json.loads((tmp_path / "gpu-check.json").read_text())
    assert doc["mode"] == "none"
    for step in STEPS:
        assert doc[step] == "no GPU", step
    assert doc["finished_seconds"] < 60


def record(path, *args):
    subprocess.run([sys.executable, str(RECORD), str(path), *args], check=True)


def test_recorder_nests_keys_and_keeps_earlier_figures(tmp_path):
    out = tmp_path / "r.json"
    record(out, "perf.Ant-v5.n4096", '{"steps_per_second": 1.5e7}')
    record(out, "perf.Ant-v5.graph", "not built yet")  # not JSON: kept as a string
    record(out, "mode", '"gpu"')
    doc = json.loads(out.read_text())
    assert doc["perf"]["Ant-v5"]["n4096"]["steps_per_second"] == 1.5e7
    assert doc["perf"]["Ant-v5"]["graph"] == "not built yet"
    assert doc["mode"] == "gpu"
    assert not (tmp_path / "r.json.tmp").exists()


def test_recorder_summarises_a_gtest_report_and_a_json_line(tmp_path):
    report = tmp_path / "g.json"
    report.write_text(json.dumps({"tests": 3, "testsuites": [{"name": "S", "testsuite": [
        {"name": "a", "result": "COMPLETED"},
        {"name": "b", "result": "COMPLETED", "failures": [{"failure": "x"}]},
        {"name": "c", "result": "SKIPPED"}]}]}))
    log = tmp_path / "bench.log"
    log.write_text('warming up\n{"steps_per_second": 42.0}\ntrailing words\n')
    out = tmp_path / "r.json"
    record(out, "t", "--gtest", str(report))
    record(out, "b", "--json-line", str(log))
    record(out, "missing", "--gtest", str(tmp_path / "none.json"))
    doc = json.loads(out.read_text())
    assert doc["t"] == {"tests": 3, "passed": 1, "failed": 1, "skipped": 1, "failed_names": ["S.b"]}
    assert doc["b"] == {"steps_per_second": 42.0}
    assert doc["missing"]["status"] == "no report"


PREBUILT = SRC / "scripts/gpu_prebuilt.py"


def prebuilt(*args):
    r = subprocess.run([sys.executable, str(PREBUILT), *map(str, args)], capture_output=True,
                       text=True, check=True)
    return r.stdout.strip()


def make_tree(root):
    for rel, text in {"physics/a.h": "int a;", "envs/b.cc": "int b;", "CMakeLists.txt": "x",
                      "docs/c.md": "doc", "scripts/d.sh": "echo", "configs/e.yaml": "k: 1",
                      "tests/python/t.py": "pass", "tests/envs/t.cc": "int t;",
                      "build-gpu/x.o": "obj", ".whl/w.whl": "w", ".gitignore": "/build/"}.items():
        path = root / rel
        path.parent.mkdir(parents=True, exist_ok=True)
        path.write_text(text)


def test_prebuilt_hash_follows_compiled_sources_only(tmp_path):
    make_tree(tmp_path)
    base = prebuilt("hash", tmp_path)
    for rel in ["docs/c.md", "scripts/d.sh", "configs/e.yaml", "tests/python/t.py",
                "build-gpu/x.o", ".whl/w.whl", ".gitignore"]:
        (tmp_path / rel).write_text("changed")
    assert prebuilt("hash", tmp_path) == base
    (tmp_path / "tests/envs/t.cc").write_text("int t2;")
    changed = prebuilt("hash", tmp_path)
    assert changed != base
    (tmp_path / "physics/new.cuh").write_text("")
    assert prebuilt("hash", tmp_path) != changed


def test_prebuilt_pack_unpacks_only_for_its_sources(tmp_path):
    src, build, pack, host = (tmp_path / d for d in ("src", "build", "pack", "host"))
    make_tree(src)
    (build / "tools").mkdir(parents=True)
    (build / "tools/myriad").write_bytes(os.urandom(2000))
    (build / "tests").mkdir()
    (build / "tests/big").write_bytes(os.urandom(300_000))  # random: packs to its own size
    (build / "tests/after").write_bytes(b"small")
    prebuilt("pack", "--build", build, "--out", pack, "--hash", prebuilt("hash", src),
             "--limit-mib", 0.1, "tools/myriad", "tests/big", "tests/after")
    manifest = json.loads((pack / "manifest.json").read_text())
    assert [f["path"] for f in manifest["files"]] == ["tools/myriad"]
    assert [f["path"] for f in manifest["left_out"]] == ["tests/big", "tests/after"]

    verdict = json.loads(prebuilt("check", "--pack", pack, "--root", src, "--build", host))
    assert verdict["use"] is True and verdict["files"] == ["tools/myriad"]
    assert (host / "tools/myriad").read_bytes() == (build / "tools/myriad").read_bytes()
    assert os.access(host / "tools/myriad", os.X_OK)

    (src / "physics/a.h").write_text("int a2;")  # edited since the pack was built
    verdict = json.loads(prebuilt("check", "--pack", pack, "--root", src, "--build", tmp_path / "h2"))
    assert verdict["use"] is False and verdict["why"].startswith("stale")
    assert not (tmp_path / "h2").exists()

    (src / "physics/a.h").write_text("int a;")
    manifest["torch"] = "0.0.1"
    (pack / "manifest.json").write_text(json.dumps(manifest))
    verdict = json.loads(prebuilt("check", "--pack", pack, "--root", src, "--build", tmp_path / "h3"))
    assert verdict["use"] is False and "torch 0.0.1" in verdict["why"]
    verdict = json.loads(prebuilt("check", "--pack", tmp_path / "none", "--root", src, "--build",
                                  tmp_path / "h4"))
    assert verdict["use"] is False and verdict["why"].startswith("no pack")
