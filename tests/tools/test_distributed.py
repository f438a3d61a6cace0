"""Data-parallel training on the CPU over loopback (Gloo): `myriad train` run as 2 and 3 ranks
with torchrun's variables. Parameters end bitwise equal on every rank and the same seed and
world size give the same parameters twice; the recipe's 64 envs split over 2 ranks learn CartPole
as 1 rank of 64 does; ranks started with different settings refuse to train, naming the first
one; a killed rank stops the others within seconds with a message naming the failure; the job
resumes from its checkpoint (bitwise, every rank, at the same world size); bad variables are
clear errors."""
import json
import os
import re
import signal
import socket
import subprocess
import time
from pathlib import Path

import pytest

BIN = os.environ.get("MYRIAD_BIN", "build/tools/myriad")
SRC = Path(os.environ.get("MYRIAD_SOURCE_DIR", "."))
CONFIG = SRC / "configs/cartpole_ppo.yaml"
QUICK = ["env.device=cpu", "run.threads=1", "eval.record=false", "run.eval_episodes=10"]


def free_port():
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return s.getsockname()[1]


def start(world, out, *args, extra_env=None, rank_args=None):
    """Starts `world` ranks of `myriad train CONFIG --out OUT ARGS` (then rank_args[rank], when
    given, for that rank alone); returns the processes."""
    port = free_port()
    procs = []
    for rank in range(world):
        env = dict(os.environ, RANK=str(rank), WORLD_SIZE=str(world), LOCAL_RANK=str(rank),
                   MASTER_ADDR="127.0.0.1", MASTER_PORT=str(port), OMP_NUM_THREADS="1")
        env.update(extra_env or {})
        mine = (rank_args or {}).get(rank, [])
        procs.append(subprocess.Popen([BIN, "train", str(CONFIG), "--out", str(out),
                                       *map(str, args), *mine],
                                      env=env, stdout=subprocess.PIPE, stderr=subprocess.STDOUT,
                                      text=True))
    return procs


def finish(procs, timeout=300):
    outs = [p.communicate(timeout=timeout)[0] for p in procs]
    return [p.returncode for p in procs], outs


def checksums(outs):
    return [re.search(r"parameters crc32c ([0-9a-f]{8})", o).group(1) for o in outs]


def test_ranks_agree_bitwise_and_repeat(tmp_path):
    runs = {}
    for world, name in [(2, "a"), (3, "b"), (3, "c")]:
        codes, outs = finish(start(world, tmp_path / name, *QUICK, "env.num_envs=24",
                                   "run.total_env_steps=30000"))
        assert codes == [0] * world, outs
        sums = checksums(outs)
        assert len(set(sums)) == 1, sums  # every rank holds the same parameters
        summary = json.loads((tmp_path / name / "summary.json").read_text())
        assert summary["world_size"] == world and summary["params_crc32c"] == sums[0]
        assert summary["env_steps"] >= 30000  # every rank's steps count toward the total
        assert "rank 1 of %d" % world in outs[1]
        runs[name] = sums[0]
    assert runs["b"] == runs["c"]  # same seed, same world size: the same parameters


def test_two_ranks_learn_cartpole_as_one_rank_does(tmp_path):
    codes, outs = finish(start(1, tmp_path / "one", *QUICK, "env.num_envs=64",
                               "run.eval_episodes=50"))
    assert codes == [0], outs
    codes, outs = finish(start(2, tmp_path / "two", *QUICK, "env.num_envs=64",
                               "run.eval_episodes=50"))
    assert codes == [0, 0], outs
    one = json.loads((tmp_path / "one" / "summary.json").read_text())
    two = json.loads((tmp_path / "two" / "summary.json").read_text())
    assert one["env_steps"] == two["env_steps"]
    # CartPole's recipe solves in 200K steps; both must be close to the 500 cap.
    assert one["eval_return_mean"] >= 400 and two["eval_return_mean"] >= 400, (one, two)


def test_a_killed_rank_stops_the_job_and_it_resumes(tmp_path):
    out = tmp_path / "run"
    procs = start(2, out, *QUICK, "env.num_envs=24", "run.total_env_steps=100000000",
                  "run.checkpoint_every=2", "distributed.timeout_seconds=30")
    deadline = time.time() + 120
    while not (out / "checkpoints" / "last.pt").exists():
        assert time.time() < deadline, "no checkpoint written"
        time.sleep(0.2)
    procs[1].send_signal(signal.SIGKILL)
    killed = time.time()
    procs[0].wait(timeout=60)
    assert time.time() - killed < 60
    text = procs[0].communicate()[0]
    assert procs[0].returncode == 1
    assert "distributed: rank 0 of 2 failed" in text and "a peer rank stopped" in text, text
    # The job goes on from rank 0's last checkpoint, here with 3 ranks instead of 2 (a changed
    # world size: the job keeps its 24 envs, 8 per rank instead of 12, and every rank starts
    # new episodes from re-derived seeds).
    codes, outs = finish(start(3, out, *QUICK, "env.num_envs=24", "run.total_env_steps=40000",
                               "--resume", out / "checkpoints" / "last.pt"))
    assert codes == [0, 0, 0], outs
    assert len(set(checksums(outs))) == 1
    assert json.loads((out / "summary.json").read_text())["world_size"] == 3


def test_a_stopped_job_resumes_bitwise_on_every_rank(tmp_path):
    """A checkpoint holds every rank's envs, sampling stream and returns: 2 ranks stopped after
    4 updates and resumed to 8 end with the parameters of 2 ranks run straight to 8."""
    # 16 envs (8 per rank) x 32 steps = 512 a update; a constant rate (linear follows the total)
    steps = ["env.num_envs=16", "ppo.num_steps=32", "ppo.lr_schedule=constant"]
    codes, outs = finish(start(2, tmp_path / "straight", *QUICK, *steps,
                               "run.total_env_steps=4096", "run.eval_episodes=0"))
    assert codes == [0, 0], outs
    straight = checksums(outs)[0]
    codes, outs = finish(start(2, tmp_path / "first", *QUICK, *steps, "run.total_env_steps=2048",
                               "run.eval_episodes=0"))
    assert codes == [0, 0], outs
    assert checksums(outs)[0] != straight
    codes, outs = finish(start(2, tmp_path / "first", *QUICK, *steps, "run.total_env_steps=4096",
                               "run.eval_episodes=0", "--resume",
                               tmp_path / "first" / "checkpoints" / "last.pt"))
    assert codes == [0, 0], outs
    assert checksums(outs) == [straight, straight], outs


def test_bad_variables_are_clear_errors(tmp_path):
    env = dict(os.environ, RANK="0", WORLD_SIZE="2")
    env.pop("MASTER_ADDR", None)
    p = subprocess.run([BIN, "train", str(CONFIG), "--out", str(tmp_path / "x")], env=env,
                       capture_output=True, text=True, timeout=60)
    assert p.returncode != 0 and "MASTER_ADDR is not set" in p.stderr, p.stderr
    env = dict(os.environ, RANK="2", WORLD_SIZE="2", MASTER_ADDR="127.0.0.1", MASTER_PORT="1")
    p = subprocess.run([BIN, "train", str(CONFIG), "--out", str(tmp_path / "y")], env=env,
                       capture_output=True, text=True, timeout=60)
    assert p.returncode != 0 and "rank 2 is not below the world size 2" in p.stderr, p.stderr
    env = dict(os.environ, RANK="0", WORLD_SIZE="two", MASTER_ADDR="127.0.0.1", MASTER_PORT="1")
    p = subprocess.run([BIN, "train", str(CONFIG), "--out", str(tmp_path / "z")], env=env,
                       capture_output=True, text=True, timeout=60)
    assert p.returncode != 0 and "WORLD_SIZE='two'" in p.stderr, p.stderr


def test_torchrun_max_restarts_finishes_after_a_kill(tmp_path):
    """torchrun's own launcher: a rank SIGKILLed mid-run, every rank restarted (restart 1) from
    rank 0's last checkpoint in the run folder, and the job finishes."""
    import sys  # noqa: PLC0415

    torchrun = Path(sys.executable).parent / "torchrun"
    out = tmp_path / "run"
    cmd = [str(torchrun), "--nproc-per-node", "2", "--max-restarts", "1", "--monitor-interval",
           "0.5", "--master-port", str(free_port()), "--no-python", BIN, "train", str(CONFIG),
           "--out", str(out), *QUICK, "env.num_envs=16", "run.total_env_steps=150000",
           "run.checkpoint_every=2"]
    job = subprocess.Popen(cmd, stdout=subprocess.PIPE, stderr=subprocess.STDOUT, text=True,
                           env=dict(os.environ, OMP_NUM_THREADS="1"))
    deadline = time.time() + 120
    while not (out / "checkpoints" / "last.pt").exists():
        assert time.time() < deadline, "no checkpoint written"
        time.sleep(0.2)
    ranks = subprocess.run(["pgrep", "-f", f"train .* {out} "], capture_output=True,
                           text=True).stdout.split()
    ranks = [int(p) for p in ranks if int(p) != job.pid]
    assert len(ranks) == 2, ranks
    os.kill(max(ranks), signal.SIGKILL)
    text = job.communicate(timeout=240)[0]
    assert job.returncode == 0, text
    assert "restart 1" in text, text
    summary = json.loads((out / "summary.json").read_text())
    assert summary["env_steps"] >= 150000 and summary["world_size"] == 2


def test_python_train_under_torchrun(tmp_path):
    """myriad.train() in a script that torchrun starts twice: one job, rank 0's run folder."""
    import sys  # noqa: PLC0415

    script = tmp_path / "train.py"
    script.write_text(
        "import json, os, sys, myriad\n"
        "from pathlib import Path\n"
        "s = myriad.train(sys.argv[1], out=sys.argv[2], env={'num_envs': 16, 'device': 'cpu'},\n"
        "                 run={'total_env_steps': 20000, 'eval_episodes': 5, 'threads': 1},\n"
        "                 eval={'record': False})\n"
        "print('SUMMARY', json.dumps(s), flush=True)\n"
        "(Path(sys.argv[2]).parent / ('summary-rank%s.json' % os.environ['RANK'])).write_text(\n"
        "    json.dumps(s))\n")
    torchrun = Path(sys.executable).parent / "torchrun"
    python_dir = Path(BIN).resolve().parents[1] / "python"
    out = tmp_path / "run"
    p = subprocess.run([str(torchrun), "--nproc-per-node", "2", "--master-port", str(free_port()),
                        str(script), str(CONFIG), str(out)], capture_output=True, text=True,
                       timeout=300, env=dict(os.environ, PYTHONPATH=str(python_dir),
                                             OMP_NUM_THREADS="1"))
    assert p.returncode == 0, p.stdout + p.stderr
    # Each rank's summary comes back through a file of its own: both ranks share torchrun's
    # stdout, and one CI run (2026-12-04) found only rank 0's SUMMARY line there though the job
    # exited 0. The printed lines are kept as a diagnostic.
    files = sorted(tmp_path.glob("summary-rank*.json"))
    assert [f.name for f in files] == ["summary-rank0.json", "summary-rank1.json"], (
        p.stdout + p.stderr)
    summaries = [json.loads(f.read_text()) for f in files]
    assert {s["world_size"] for s in summaries} == {2}
    assert len({s["params_crc32c"] for s in summaries}) == 1
    assert json.loads((out / "summary.json").read_text())["env_steps"] >= 20000


# One rank started with another setting than rank 0: each case once ended in SIGABRT inside Gloo,
# in a run that trained to the end and then found the parameters differ, or in a collective
# timeout. Now every rank exits 1 at the start, naming the setting and both values.
DISAGREEMENTS = [
    ("ppo.hidden_sizes=[32]", "ppo.hidden_sizes: rank 0 has [64, 64], rank 1 has [32]"),
    ("env.id=Acrobot-v1", "env.id: rank 0 has CartPole-v1, rank 1 has Acrobot-v1"),
    ("ppo.update_epochs=2", "ppo.update_epochs: rank 0 has 4, rank 1 has 2"),
    ("ppo.learning_rate=0.001", "ppo.learning_rate: rank 0 has 0.002, rank 1 has 0.001"),
    ("env.num_envs=8", "env.num_envs: rank 0 has 16, rank 1 has 8"),
    ("run.total_env_steps=5000", "run.total_env_steps: rank 0 has 20000, rank 1 has 5000"),
]


@pytest.mark.parametrize("override,named", DISAGREEMENTS, ids=[d[0].split("=")[0] for d in
                                                                DISAGREEMENTS])
def test_ranks_that_disagree_refuse_to_train(tmp_path, override, named):
    t0 = time.time()
    codes, outs = finish(start(2, tmp_path / "run", *QUICK, "env.num_envs=16",
                               "run.total_env_steps=20000", "distributed.timeout_seconds=30",
                               rank_args={1: [override]}), timeout=60)
    assert time.time() - t0 < 30, outs  # refused at the start, not after a timeout
    for rank, (code, out) in enumerate(zip(codes, outs)):
        assert code == 1, (rank, code, out)  # an error exit, not a signal
        assert "ranks disagree on " + named in out, (rank, out)
        assert "EnforceNotMet" not in out and "parameters differ" not in out, out
        assert "timed out" not in out, out
    assert not (tmp_path / "run" / "metrics.csv").exists()  # nothing trained


def test_rank_specific_settings_may_differ(tmp_path):
    codes, outs = finish(start(2, tmp_path / "run", *QUICK, "env.num_envs=8",
                               "run.total_env_steps=2048", "run.eval_episodes=0",
                               rank_args={1: ["run.threads=2", "run.log_every_seconds=7"]}))
    assert codes == [0, 0], outs
    assert len(set(checksums(outs))) == 1


def test_env_count_must_split_evenly_over_the_ranks(tmp_path):
    codes, outs = finish(start(3, tmp_path / "run", *QUICK, "env.num_envs=16"), timeout=60)
    assert codes == [1, 1, 1], outs
    for out in outs:
        assert "config key 'env.num_envs'" in out and "multiple of 3" in out, out
