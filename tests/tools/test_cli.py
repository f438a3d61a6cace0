"""The `myriad` command: train writes its run folder, eval and bench print what they promise,
bad input exits non-zero with a message naming what was wrong."""
import json
import os
import subprocess
from pathlib import Path

import pytest

BIN = os.environ.get("MYRIAD_BIN", "build/tools/myriad")
SRC = Path(os.environ.get("MYRIAD_SOURCE_DIR", "."))


def run(*args, ok=True):
    p = subprocess.run([BIN, *map(str, args)], capture_output=True, text=True, timeout=300)
    if ok:
        assert p.returncode == 0, p.stdout + p.stderr
    return p


@pytest.fixture(scope="module")
def trained(tmp_path_factory):
    out = tmp_path_factory.mktemp("run") / "cartpole"
    run("train", SRC / "configs/cartpole_ppo.yaml", "--out", out, "env.device=cpu",
        "run.total_env_steps=8192", "run.eval_episodes=10", "run.checkpoint_every=2")
    return out


def test_train_writes_run_folder(trained):
    for name in ["config.yaml", "metrics.csv", "summary.json", "checkpoints/last.pt"]:
        assert (trained / name).exists(), name
    assert list(trained.glob("events.out.tfevents.*")), "no TensorBoard events"
    s = json.loads((trained / "summary.json").read_text())
    for key in ["env_steps", "wall_seconds", "eval_return_mean", "eval_episodes", "solved_seconds"]:
        assert key in s, key
    assert s["env_steps"] >= 8192 and s["eval_episodes"] == 10
    header = (trained / "metrics.csv").read_text().splitlines()[0].split(",")
    assert "charts/episode_return" in header and "losses/approx_kl" in header
    assert "total_env_steps: 8192" in (trained / "config.yaml").read_text()


def test_eval_and_resume(trained):
    p = run("eval", trained / "checkpoints/last.pt", "--episodes", 5, "--json")
    r = json.loads(p.stdout.strip().splitlines()[-1])
    assert r["episodes"] == 5 and r["env"] == "CartPole-v1"
    out = trained.parent / "resumed"
    run("train", SRC / "configs/cartpole_ppo.yaml", "--out", out, "env.device=cpu",
        "run.total_env_steps=12288", "run.eval_episodes=0", "--resume",
        trained / "checkpoints/last.pt")
    s = json.loads((out / "summary.json").read_text())
    assert s["env_steps"] >= 12288


def test_bench_json():
    p = run("bench", "--env", "Pendulum-v1", "--num-envs", 1024, "--steps", 20, "--threads", 1,
            "--json")
    r = json.loads(p.stdout)
    assert r["env"] == "Pendulum-v1" and r["num_envs"] == 1024 and r["threads"] == 1
    assert r["device"] == "cpu" and r["steps_per_second"] > 0


@pytest.mark.parametrize("args,needle", [
    (["bench", "--env", "CartPol-v1", "--steps", 1], "CartPole-v1"),
    (["bench", "--device", "tpu", "--steps", 1], "cpu, cuda, auto"),
    (["train", "{cfg}", "ppo.learning_rat=0.1"], "ppo.learning_rat"),
    (["train", "{cfg}", "env.num_envs=-3"], "env.num_envs"),
    (["train", "{cfg}", "env.id=Nope-v0", "run.total_env_steps=64"], "registered"),
    (["eval", "{cfg}"], "checkpoint"),
])
def test_bad_input_is_a_clear_error(args, needle, tmp_path):
    args = [str(SRC / "configs/cartpole_ppo.yaml") if a == "{cfg}" else a for a in args]
    if args[0] == "train":
        args += ["--out", str(tmp_path / "x")]
    p = run(*args, ok=False)
    assert p.returncode != 0
    assert needle in p.stderr, p.stderr


def test_cuda_without_gpu_is_a_clear_error():
    p = run("bench", "--device", "cuda", "--steps", 1, ok=False)
    probe = subprocess.run(["nvidia-smi"], capture_output=True) if Path("/usr/bin/nvidia-smi").exists() else None
    if probe is not None and probe.returncode == 0:
        pytest.skip("a GPU is present")
    assert p.returncode != 0 and "cuda" in p.stderr


@pytest.mark.parametrize("cfg", ["cartpole_ppo", "pendulum_ppo", "acrobot_ppo",
                                 "mountaincar_continuous_ppo"])
def test_shipped_configs_parse(cfg, tmp_path):
    run("train", SRC / f"configs/{cfg}.yaml", "--out", tmp_path / cfg, "env.device=cpu",
        "run.total_env_steps=1", "run.eval_episodes=1")


def test_physics_check_passes_and_fails_honestly():
    ok = run("physics-check", SRC / "physics/models/pendulum.xml", "--steps", 300)
    assert "qacc" in ok.stdout and "EXCEEDED" not in ok.stdout
    # The tumbling quadruped amplifies last-bit differences: 1e-6 does not hold for 1,000 steps.
    bad = run("physics-check", SRC / "physics/models/quadruped.xml", "--steps", 1000, ok=False)
    assert bad.returncode != 0 and "EXCEEDED" in bad.stdout


def test_bench_mjcf_both_physics():
    for physics in ["myriad", "mujoco"]:
        p = run("bench", "--env", "MJCF-v0", "--xml", SRC / "physics/models/cartpole.xml",
                "--physics", physics, "--num-envs", 64, "--steps", 10, "--threads", 1, "--json")
        r = json.loads(p.stdout)
        assert r["physics"] == physics and r["steps_per_second"] > 0


def test_train_and_eval_an_mjcf_model(tmp_path):
    out = tmp_path / "mjcf"
    run("train", SRC / "configs/pendulum_ppo.yaml", "--out", out, "env.id=MJCF-v0",
        f"env.xml={SRC / 'physics/models/cartpole.xml'}", "env.physics=mujoco", "env.device=cpu",
        "env.num_envs=8", "ppo.num_steps=16", "run.total_env_steps=256", "run.eval_episodes=2",
        "env.options.max_episode_steps=20")
    p = run("eval", out / "checkpoints/last.pt", "--episodes", 2, "--json")
    r = json.loads(p.stdout.strip().splitlines()[-1])
    assert r["env"] == "MJCF-v0" and r["length_mean"] == 20
