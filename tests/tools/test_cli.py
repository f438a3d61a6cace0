"""The `myriad` command: train writes its run folder, eval and bench print what they promise,
bad input exits non-zero with a message naming what was wrong."""
import json
import os
import subprocess
import sys
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
    (["train", "{cfg}", "env.id=Tag-v0", "agents.random_teams=[prey]"],
     "Tag-v0 has no team 'prey' (its teams: adversaries, good)"),
])
def test_bad_input_is_a_clear_error(args, needle, tmp_path):
    args = [str(SRC / "configs/cartpole_ppo.yaml") if a == "{cfg}" else a for a in args]
    if args[0] == "train":
        args += ["--out", str(tmp_path / "x")]
    p = run(*args, ok=False)
    assert p.returncode != 0
    assert needle in p.stderr, p.stderr
    if "multi-agent" in needle:
        assert not (tmp_path / "x").exists(), "refused before a run folder is claimed"


def test_bench_a_multi_agent_env():
    p = run("bench", "--env", "Tag-v0", "--num-envs", 256, "--steps", 20, "--threads", 1,
            "--json")
    r = json.loads(p.stdout)
    assert r["env"] == "Tag-v0" and r["steps_per_second"] > 0


def test_cuda_without_gpu_is_a_clear_error():
    p = run("bench", "--device", "cuda", "--steps", 1, ok=False)
    probe = subprocess.run(["nvidia-smi"], capture_output=True) if Path("/usr/bin/nvidia-smi").exists() else None
    if probe is not None and probe.returncode == 0:
        pytest.skip("a GPU is present")
    assert p.returncode != 0 and "cuda" in p.stderr


@pytest.mark.parametrize("cfg", ["cartpole_ppo", "pendulum_ppo", "acrobot_ppo",
                                 "mountaincar_continuous_ppo", "hopper_ppo", "walker2d_ppo",
                                 "half_cheetah_ppo", "ant_ppo", "humanoid_ppo"])
def test_shipped_configs_parse(cfg, tmp_path):
    run("train", SRC / f"configs/{cfg}.yaml", "--out", tmp_path / cfg, "env.device=cpu",
        "run.total_env_steps=1", "run.eval_episodes=1")


# The legged-robot task configs (mjlab's PPO settings): one update on a few envs, evaluated.
@pytest.mark.parametrize("cfg", ["go1_velocity_flat_ppo", "go1_velocity_rough_ppo",
                                 "g1_velocity_flat_ppo", "g1_velocity_rough_ppo"])
def test_task_configs_train_an_update(cfg, tmp_path):
    p = run("train", SRC / f"configs/{cfg}.yaml", "--out", tmp_path / cfg, "env.device=cpu",
            "env.num_envs=8", "run.total_env_steps=1", "run.eval_episodes=2", "eval.record=false")
    assert "error_vel_xy" in p.stdout  # evaluation reports the tracking errors
    summary = json.loads((tmp_path / cfg / "summary.json").read_text())
    assert summary["eval_error_vel_xy"] >= 0 and summary["eval_error_vel_yaw"] >= 0
    # Evaluation runs the task in play mode (no actor noise, no push) unless told otherwise.
    ckpt = tmp_path / cfg / "checkpoints" / "last.pt"
    play = json.loads(run("eval", ckpt, "--episodes", 2, "--json").stdout)
    train = json.loads(run("eval", ckpt, "--episodes", 2, "--json", "--train-conditions").stdout)
    assert play["error_vel_xy"] >= 0 and train["error_vel_xy"] >= 0
    assert play != train
    # Each reward term's mean episode sum is reported; together they make the return.
    terms = {k: v for k, v in play.items() if k.startswith("reward_")}
    assert {"reward_track_linear_velocity", "reward_track_angular_velocity"} <= terms.keys()
    assert sum(terms.values()) == pytest.approx(play["return_mean"], rel=1e-4, abs=1e-4)
    assert play["diverged_episodes"] == 0
    assert "eval_reward_track_linear_velocity" in summary
    if cfg == "go1_velocity_flat_ppo":  # the sim-to-sim script over this run, on both sims
        out = subprocess.run([sys.executable, SRC / "scripts/sim2sim_seeds.py", tmp_path / cfg,
                              "--episodes", "2", "--myriad", BIN], capture_output=True, text=True,
                             timeout=300)
        assert out.returncode == 0, out.stdout + out.stderr
        assert "tracking reward kept on libmujoco over 1 runs" in out.stdout


def test_eval_reward_terms_count_each_episode_to_its_end(tmp_path):
    # An untrained Hopper falls at different steps in different envs: each env's terms stop at
    # its own last step. reward_survive is 1 per healthy step and 0 on the step that falls, so
    # its mean episode sum is the mean length less one; the terms add up to the return.
    run("train", SRC / "configs/hopper_ppo.yaml", "--out", tmp_path / "h", "env.device=cpu",
        "run.total_env_steps=1", "run.eval_episodes=0")
    r = json.loads(run("eval", tmp_path / "h/checkpoints/last.pt", "--episodes", 8,
                       "--json").stdout.strip().splitlines()[-1])
    terms = {k: v for k, v in r.items() if k.startswith("reward_")}
    assert set(terms) == {"reward_forward", "reward_ctrl", "reward_survive"}
    assert r["length_mean"] < 1000 and r["diverged_episodes"] == 0
    assert r["reward_survive"] == pytest.approx(r["length_mean"] - 1, abs=1e-6)
    assert sum(terms.values()) == pytest.approx(r["return_mean"], rel=1e-4, abs=1e-4)


def test_tracking_seeds_reads_the_kept_go1_seeds():
    runs = sorted((SRC / "docs/data/go1-flat").glob("seed*"))
    out = subprocess.run([sys.executable, SRC / "scripts/tracking_seeds.py", *runs],
                         capture_output=True, text=True, timeout=60)
    assert out.returncode == 0, out.stdout + out.stderr
    assert f"play eval over {len(runs)} seeds" in out.stdout


def test_eval_train_conditions_needs_a_play_mode(trained):
    bad = run("eval", trained / "checkpoints" / "last.pt", "--train-conditions", ok=False)
    assert bad.returncode != 0 and "has no play mode" in bad.stderr


def test_physics_check_passes_and_fails_honestly():
    ok = run("physics-check", SRC / "physics/models/pendulum.xml", "--steps", 300)
    assert "qacc" in ok.stdout and "EXCEEDED" not in ok.stdout
    # Rounding alone (the engine's order of operations is not libmujoco's) puts the tumbling
    # quadruped's trajectories more than 1e-12 apart within 1,000 steps; a bound of the user's
    # choice is held to as given.
    bad = run("physics-check", SRC / "physics/models/quadruped.xml", "--steps", 1000,
              "--trajectory-tolerance", "1e-12", ok=False)
    assert bad.returncode != 0 and "EXCEEDED" in bad.stdout


def write_png_heightfield(path, width=16, height=16):
    """An 8-bit grey PNG of smooth bumps, written with zlib alone."""
    import math  # noqa: PLC0415
    import struct  # noqa: PLC0415
    import zlib  # noqa: PLC0415

    rows = b"".join(b"\x00" + bytes(int(127 + 120 * math.sin(0.7 * x) * math.cos(0.5 * y))
                                    for x in range(width)) for y in range(height))

    def chunk(kind, data):
        return (struct.pack(">I", len(data)) + kind + data +
                struct.pack(">I", zlib.crc32(kind + data) & 0xFFFFFFFF))

    path.write_bytes(b"\x89PNG\r\n\x1a\n" +
                     chunk(b"IHDR", struct.pack(">IIBBBBB", width, height, 8, 0, 0, 0, 0)) +
                     chunk(b"IDAT", zlib.compress(rows)) + chunk(b"IEND", b""))


def test_physics_check_height_field_from_a_png(tmp_path):
    """A height field from a PNG file (libmujoco decodes it; the engine reads the compiled
    elevations): a sphere, a capsule and a box dropped on it agree with libmujoco in float64,
    contacts, rows and forces."""
    write_png_heightfield(tmp_path / "terrain.png")
    scene = tmp_path / "scene.xml"
    scene.write_text(
        '<mujoco><asset><hfield name="terrain" file="terrain.png" size="1 1 0.2 0.1"/></asset>'
        '<worldbody><geom type="hfield" hfield="terrain"/>'
        '<body pos="0.1 0.2 0.5"><freejoint/><geom type="sphere" size="0.08"/></body>'
        '<body pos="-0.3 0.1 0.6"><freejoint/><geom type="capsule" size="0.05 0.1"/></body>'
        '<body pos="0.3 -0.3 0.6"><freejoint/><geom type="box" size="0.06 0.05 0.04"/></body>'
        '</worldbody></mujoco>')
    out = run("physics-check", scene, "--steps", 200).stdout
    assert "EXCEEDED" not in out, out
    with_contacts = [line for line in out.splitlines() if line.startswith("contact set differs")]
    assert with_contacts and " 0 with contacts" not in with_contacts[0], out


def test_physics_bench_lockstep_accounting():
    """--lockstep: a tile of one env never pads; identical envs (zero controls from qpos0) pad
    nothing at any width; random controls make envs differ, so wider tiles pad more; libmujoco
    gets the same random controls under --compare-mujoco."""
    hopper = SRC / "envs/locomotion/models/hopper.xml"
    base = ["physics-bench", hopper, "--num-envs", 64, "--steps", 30, "--warmup", 100,
            "--threads", 1, "--lockstep", "1,8,32"]
    quantities = ["contacts", "constraint_rows", "solver_iterations", "solver_iterations_x_rows"]
    same = json.loads(run(*base).stdout)
    assert same["controls"] == "zero"
    for q in quantities:
        for w in ["w1", "w8", "w32"]:
            assert same["lockstep"][q][w]["efficiency"] == 1.0, (q, w)
    rand = json.loads(run(*base, "--random-controls", "--seed", 3).stdout)
    again = json.loads(run(*base, "--random-controls", "--seed", 3).stdout)
    assert rand["controls"] == "random" and rand["lockstep"] == again["lockstep"]
    rows = rand["lockstep"]["constraint_rows"]
    assert rows["mean_per_env_step"] > 0
    assert rows["w1"]["efficiency"] == 1.0 and rows["w1"]["efficiency_sorted"] == 1.0
    assert 0 < rows["w32"]["efficiency"] <= rows["w8"]["efficiency"] < 1.0
    both = json.loads(run("physics-bench", hopper, "--num-envs", 16, "--steps", 10, "--warmup", 50,
                          "--threads", 1, "--random-controls", "--compare-mujoco").stdout)
    assert both["ratio_vs_mujoco"] > 0 and both["mujoco_steps_per_second"] > 0
    # Both engines got the same controls: after 60 steps they touch the floor alike.
    assert abs(both["mean_contacts"] - both["mujoco_mean_contacts"]) <= 0.5


def test_bench_mjcf_both_physics():
    for physics in ["myriad", "mujoco"]:
        p = run("bench", "--env", "MJCF-v0", "--xml", SRC / "physics/models/cartpole.xml",
                "--physics", physics, "--num-envs", 64, "--steps", 10, "--threads", 1, "--json")
        r = json.loads(p.stdout)
        assert r["physics"] == physics and r["steps_per_second"] > 0
        assert r["precision"] == (64 if physics == "mujoco" else 32)  # libmujoco: float64


def test_a_physics_env_moves_between_sims(tmp_path):
    """--physics on train, eval (sim-to-sim transfer) and bench; refused for other envs."""
    out = tmp_path / "hopper"
    tiny = ["env.device=cpu", "env.num_envs=4", "ppo.num_steps=8", "ppo.num_minibatches=2",
            "run.total_env_steps=64", "run.eval_episodes=2", "eval.record=false"]
    # Gymnasium's keyword arguments in env.options: numbers, booleans and [low, high] ranges.
    run("train", SRC / "configs/hopper_ppo.yaml", "--out", out, "--physics", "mujoco", *tiny,
        "env.options.healthy_z_range=[0.5, 2.5]", "env.options.terminate_when_unhealthy=false",
        "env.options.ctrl_cost_weight=0.01")
    resolved = (out / "config.yaml").read_text()
    assert "physics: mujoco" in resolved
    assert "healthy_z_range: 0.5,2.5" in resolved and "terminate_when_unhealthy: 0" in resolved
    bad = run("train", SRC / "configs/hopper_ppo.yaml", "--out", tmp_path / "bad1", *tiny,
              "env.options.healthy_z_range=[1, 2, 3]", ok=False)
    assert bad.returncode != 0 and "env.options.healthy_z_range" in bad.stderr
    bad = run("train", SRC / "configs/hopper_ppo.yaml", "--out", tmp_path / "bad2", *tiny,
              "env.options.healthy_z_range=high", ok=False)
    assert bad.returncode != 0 and "healthy_z_range" in bad.stderr and "range" in bad.stderr
    bad = run("train", SRC / "configs/hopper_ppo.yaml", "--out", tmp_path / "bad3", *tiny,
              "env.options.no_such_option=1", ok=False)
    assert bad.returncode != 0 and "no_such_option" in bad.stderr and "ctrl_cost_weight" in bad.stderr
    ckpt = out / "checkpoints/last.pt"
    for physics in ["myriad", "mujoco"]:
        r = json.loads(run("eval", ckpt, "--physics", physics, "--episodes", 2, "--json").stdout)
        assert r["env"] == "Hopper-v5" and r["physics"] == physics and r["episodes"] == 2
    cart = tmp_path / "cartpole"
    run("train", SRC / "configs/cartpole_ppo.yaml", "--out", cart, "env.device=cpu",
        "run.total_env_steps=1", "run.eval_episodes=1")
    bad = run("eval", cart / "checkpoints/last.pt", "--physics", "mujoco", ok=False)
    assert bad.returncode != 0 and "not a physics env" in bad.stderr
    for physics in ["myriad", "mujoco"]:
        r = json.loads(run("bench", "--env", "Ant-v5", "--physics", physics, "--num-envs", 8,
                           "--steps", 2, "--threads", 1, "--json").stdout)
        assert r["physics"] == physics and r["steps_per_second"] > 0
    bad = run("bench", "--env", "CartPole-v1", "--physics", "mujoco", "--steps", 1, ok=False)
    assert bad.returncode != 0 and "physics envs" in bad.stderr


def test_train_and_eval_an_mjcf_model(tmp_path):
    out = tmp_path / "mjcf"
    run("train", SRC / "configs/pendulum_ppo.yaml", "--out", out, "env.id=MJCF-v0",
        f"env.xml={SRC / 'physics/models/cartpole.xml'}", "env.physics=mujoco", "env.device=cpu",
        "env.num_envs=8", "ppo.num_steps=16", "run.total_env_steps=256", "run.eval_episodes=2",
        "env.options.max_episode_steps=20")
    p = run("eval", out / "checkpoints/last.pt", "--episodes", 2, "--json")
    r = json.loads(p.stdout.strip().splitlines()[-1])
    assert r["env"] == "MJCF-v0" and r["length_mean"] == 20


def test_eval_record_writes_a_replay(trained, tmp_path):
    replay = tmp_path / "cartpole.replay"
    p = run("eval", trained / "checkpoints/last.pt", "--record", replay, "--envs", 2,
            "--episodes", 2, "--json")
    r = json.loads(p.stdout.strip().splitlines()[-1])
    assert r["episodes"] == 4 and r["replay"] == str(replay)
    data = replay.read_bytes()
    assert data[:8] == b"MYRIADRP" and len(data) > 100


def test_train_records_when_asked(tmp_path):
    out = tmp_path / "run"
    p = run("train", SRC / "configs/acrobot_ppo.yaml", "--out", out, "env.device=cpu",
            "run.total_env_steps=2048", "run.eval_episodes=0", "eval.record=true",
            "eval.record_envs=2")
    assert (out / "eval.replay").read_bytes()[:8] == b"MYRIADRP"
    # `myriad view RUN_DIR` finds the run's replay.
    assert "Acrobot-v1" in run("view", out, "--html", tmp_path / "a.html").stdout
    assert json.loads((out / "summary.json").read_text())["replay"] == str(out / "eval.replay")
    assert "myriad view" in p.stdout


@pytest.fixture(scope="module")
def replay_file(trained, tmp_path_factory):
    path = tmp_path_factory.mktemp("replay") / "r.replay"
    run("eval", trained / "checkpoints/last.pt", "--record", path, "--envs", 2)
    return path


def test_view_html_is_one_self_contained_page(replay_file, tmp_path):
    page = tmp_path / "page.html"
    p = run("view", replay_file, "--html", page)
    assert "self-contained" in p.stdout
    html = page.read_text()
    assert "<script src=" not in html and 'rel="stylesheet"' not in html
    assert "THREE" in html and "Chart" in html
    embedded = html.split('id="myriad-replay" type="application/octet-stream">')[1]
    assert embedded.startswith("TVlSSUFEUlA")  # base64 of MYRIADRP


def test_view_serves_the_viewer_and_the_replay_on_loopback(replay_file):
    import urllib.request
    proc = subprocess.Popen([BIN, "view", str(replay_file), "--port", "0"],
                            stdout=subprocess.PIPE, text=True)
    try:
        url = None
        for _ in range(5):
            line = proc.stdout.readline()
            if "http://" in line:
                url = line.split()[1]
                break
        assert url and url.startswith("http://127.0.0.1:"), line
        with urllib.request.urlopen(url, timeout=10) as r:
            assert "myriad-replay" in r.read().decode()
        with urllib.request.urlopen(url + "replay", timeout=10) as r:
            assert r.read() == replay_file.read_bytes()
        with urllib.request.urlopen(url + "vendor/three.min.js", timeout=10) as r:
            assert r.headers["Content-Type"].startswith("text/javascript")
        with pytest.raises(urllib.error.HTTPError) as e:
            urllib.request.urlopen(url + "nothing-here", timeout=10)
        assert e.value.code == 404
    finally:
        proc.terminate()
        proc.wait(timeout=10)


def test_view_refuses_a_bad_file(tmp_path):
    bad = tmp_path / "bad.replay"
    bad.write_bytes(b"MYRIADRP\x01\x00\x00\x00")
    p = run("view", bad, "--html", tmp_path / "x.html", ok=False)
    assert p.returncode != 0 and "truncated" in p.stderr
    assert not (tmp_path / "x.html").exists()


# Nothing lost (issue 13): a run never overwrites another, resuming in place keeps one row and
# one TensorBoard point per step, a damaged checkpoint is refused by name.
SMALL = ["env.device=cpu", "env.num_envs=4", "ppo.num_steps=8", "ppo.num_minibatches=2",
         "ppo.update_epochs=1", "run.eval_episodes=0"]


def small_train(out, *extra, ok=True):
    return run("train", SRC / "configs/cartpole_ppo.yaml", "--out", out, *SMALL, *extra, ok=ok)


def test_an_out_holding_a_run_is_refused_unless_resume_or_overwrite(tmp_path):
    out = tmp_path / "run"
    small_train(out, "run.total_env_steps=64")
    before = (out / "metrics.csv").read_text()
    p = small_train(out, "run.total_env_steps=64", ok=False)
    assert p.returncode != 0 and "already holds a run" in p.stderr and "--overwrite" in p.stderr
    assert (out / "metrics.csv").read_text() == before
    small_train(out, "run.total_env_steps=32", "--overwrite")
    rows = (out / "metrics.csv").read_text().splitlines()
    assert len(rows) == 2 and len(list(out.glob("events.out.tfevents.*"))) == 1


def test_default_run_names_are_unique_within_a_second(tmp_path):
    cmd = [str(Path(BIN).resolve()), "train", str((SRC / "configs/cartpole_ppo.yaml").resolve()),
           *SMALL, "run.total_env_steps=32"]
    procs = [subprocess.Popen(cmd, cwd=tmp_path, stdout=subprocess.DEVNULL, stderr=subprocess.PIPE)
             for _ in range(3)]
    for p in procs:
        assert p.wait(timeout=120) == 0, p.stderr.read()
    runs = sorted((tmp_path / "runs").iterdir())
    assert len(runs) == 3, runs
    assert all((r / "summary.json").exists() for r in runs)


def test_resuming_in_place_keeps_one_row_and_one_tensorboard_point_per_step(tmp_path):
    out = tmp_path / "run"
    # Checkpoint every 2 updates (64 steps); the run ends at 96: a kill after step 96 would
    # leave rows past the checkpoint at 64, as here when resuming from a copy of that one.
    small_train(out, "run.total_env_steps=64", "run.checkpoint_every=2")
    (out / "checkpoints/at64.pt").write_bytes((out / "checkpoints/last.pt").read_bytes())
    small_train(out, "run.total_env_steps=96", "--resume", out / "checkpoints/at64.pt")
    small_train(out, "run.total_env_steps=160", "--resume", out / "checkpoints/at64.pt")
    steps = [int(r.split(",")[0]) for r in (out / "metrics.csv").read_text().splitlines()[1:]]
    assert steps == list(range(32, 161, 32)), steps
    pytest.importorskip("tensorboard")
    from tensorboard.backend.event_processing.event_accumulator import EventAccumulator
    acc = EventAccumulator(str(out), size_guidance={"scalars": 0})
    acc.Reload()
    tb = [e.step for e in acc.Scalars("losses/approx_kl")]
    assert tb == steps, tb


def test_a_damaged_checkpoint_is_refused_naming_the_file(trained, tmp_path):
    data = (trained / "checkpoints/last.pt").read_bytes()
    bad = tmp_path / "flipped.pt"
    bad.write_bytes(data[:100] + bytes([data[100] ^ 1]) + data[101:])
    cut = tmp_path / "cut.pt"
    cut.write_bytes(data[: len(data) // 2])
    for path, needle in [(bad, "checksum"), (cut, "truncated")]:
        p = run("eval", path, "--episodes", 1, ok=False)
        assert p.returncode != 0 and str(path) in p.stderr and needle in p.stderr, p.stderr
        p = small_train(tmp_path / f"resume-{path.stem}", "--resume", path, ok=False)
        assert p.returncode != 0 and str(path) in p.stderr and needle in p.stderr, p.stderr


def test_resume_with_another_activation_is_refused_naming_both_values(trained, tmp_path):
    p = run("train", SRC / "configs/cartpole_ppo.yaml", "--out", tmp_path / "r", "env.device=cpu",
            "ppo.activation=relu", "--resume", trained / "checkpoints/last.pt", ok=False)
    assert "ppo.activation is tanh in the checkpoint but relu in the config" in p.stderr, p.stderr
