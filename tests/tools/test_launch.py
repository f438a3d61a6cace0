"""`myriad launch`: the variables each rank gets, prefixed output, a failed rank stopping the
job (named, with its status), restarts, forwarded signals, the timeout, bad arguments (exit 2);
and real training: two launches as two nodes on loopback (and two whose settings differ,
refused at the start), and a rank killed under --max-restarts 1."""
import json
import os
import re
import signal
import socket
import subprocess
import time
from pathlib import Path

BIN = os.environ.get("MYRIAD_BIN", "build/tools/myriad")
SRC = Path(os.environ.get("MYRIAD_SOURCE_DIR", "."))
CONFIG = SRC / "configs/cartpole_ppo.yaml"
QUICK = ["env.device=cpu", "run.threads=1", "eval.record=false", "run.eval_episodes=5"]


def launch(*args, timeout=60):
    return subprocess.run([BIN, "launch", *map(str, args)], capture_output=True, text=True,
                          timeout=timeout)


def free_port():
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return s.getsockname()[1]


def test_every_rank_gets_torchruns_variables():
    for k in (2, 3):
        p = launch("--nproc-per-node", k, "--", "/bin/sh", "-c",
                   "echo $RANK $WORLD_SIZE $LOCAL_RANK $LOCAL_WORLD_SIZE $GROUP_RANK $MASTER_ADDR "
                   "$MASTER_PORT $MYRIAD_RESTART_COUNT $TORCHELASTIC_RESTART_COUNT; "
                   "echo to-stderr >&2")
        assert p.returncode == 0, p.stderr
        lines = sorted(p.stdout.splitlines())
        assert len(lines) == k
        ports = set()
        for r, line in enumerate(lines):
            prefix, rest = line[:8], line[9:]
            rank, world, local, lworld, group, addr, port, restart, elastic = rest.split(" ")
            assert prefix == f"[rank {r}]" and rank == str(r) and local == str(r)
            assert world == lworld == str(k) and group == "0" and addr == "127.0.0.1"
            assert restart == elastic == "0" and 0 < int(port) < 65536
            ports.add(port)
        assert len(ports) == 1
        assert sorted(p.stderr.splitlines()) == [f"[rank {r}] to-stderr" for r in range(k)]


def test_ranks_share_the_nodes_cores_unless_omp_num_threads_is_set():
    env = {k: v for k, v in os.environ.items() if k != "OMP_NUM_THREADS"}
    for k in (1, 2):
        p = subprocess.run([BIN, "launch", "--nproc-per-node", str(k), "--", "/bin/sh", "-c",
                            "echo $OMP_NUM_THREADS"], capture_output=True, text=True, timeout=60,
                           env=env)
        assert p.returncode == 0, p.stderr
        share = max(1, os.cpu_count() // k)
        assert sorted(p.stdout.splitlines()) == [f"[rank {r}] {share}" for r in range(k)]
    p = subprocess.run([BIN, "launch", "--nproc-per-node", "2", "--", "/bin/sh", "-c",
                        "echo $OMP_NUM_THREADS"], capture_output=True, text=True, timeout=60,
                       env={**env, "OMP_NUM_THREADS": "3"})
    assert sorted(p.stdout.splitlines()) == ["[rank 0] 3", "[rank 1] 3"]


def test_a_second_node_numbers_its_ranks_after_the_first():
    p = launch("--nproc-per-node", 2, "--nnodes", 3, "--node-rank", 2, "--master",
               "10.0.0.1:1234", "--", "sh", "-c",
               "echo $RANK $WORLD_SIZE $LOCAL_RANK $GROUP_RANK $MASTER_ADDR $MASTER_PORT")
    assert p.returncode == 0, p.stderr
    assert sorted(p.stdout.splitlines()) == ["[rank 4] 4 6 0 2 10.0.0.1 1234",
                                             "[rank 5] 5 6 1 2 10.0.0.1 1234"]


def test_output_is_prefixed_whole_lines():
    # Each rank writes its lines in pieces, at the same moments: no line is cut into another.
    p = launch("--nproc-per-node", 3, "--", "/bin/sh", "-c",
               "for i in 1 2 3; do printf 'a%s-' $RANK; sleep 0.1; printf 'b%s\\n' $i; done; "
               "printf 'tail%s' $RANK")
    assert p.returncode == 0, p.stderr
    lines = sorted(p.stdout.splitlines())
    assert lines == sorted([f"[rank {r}] a{r}-b{i}" for r in range(3) for i in (1, 2, 3)] +
                           [f"[rank {r}] tail{r}" for r in range(3)]), p.stdout


def test_a_myriad_subcommand_runs_this_binary():
    p = launch("--nproc-per-node", 2, "--", "physics-check", "--help")
    assert p.returncode == 0, p.stderr
    for r in (0, 1):
        assert f"[rank {r}] " in p.stdout and "physics-check" in p.stdout, p.stdout


def test_a_failed_rank_stops_the_others_and_is_named():
    start = time.time()
    p = launch("--nproc-per-node", 3, "--", "/bin/sh", "-c",
               "if [ $RANK = 1 ]; then exit 3; fi; sleep 30")
    assert time.time() - start < 15  # the others were stopped, not waited for
    assert p.returncode == 1
    assert re.search(r"rank 1 \(pid \d+\) exited with status 3", p.stderr), p.stderr
    p = launch("--nproc-per-node", 2, "--", "/bin/sh", "-c",
               "if [ $RANK = 0 ]; then kill -9 $$; fi; sleep 30")
    assert p.returncode == 1
    assert "rank 0" in p.stderr and "signal 9 (SIGKILL)" in p.stderr, p.stderr


def test_max_restarts_restarts_every_rank():
    p = launch("--nproc-per-node", 2, "--max-restarts", 1, "--", "/bin/sh", "-c",
               "if [ $MYRIAD_RESTART_COUNT = 0 ] && [ $RANK = 1 ]; then exit 5; fi; "
               "echo ok $MYRIAD_RESTART_COUNT")
    assert p.returncode == 0, p.stderr
    assert "restarting all ranks (restart 1 of 1)" in p.stderr
    assert "rank 1 (pid" in p.stderr and "exited with status 5" in p.stderr
    assert sorted(p.stdout.splitlines())[-2:] == ["[rank 0] ok 1", "[rank 1] ok 1"]


def start_waiting_ranks(tmp_path, k, *options):
    """k ranks that record which signal they got in tmp_path/RANK.SIG, then exit 0."""
    proc = subprocess.Popen([BIN, "launch", "--nproc-per-node", str(k), *options, "--", "/bin/sh",
                             "-c", f"trap 'touch {tmp_path}/$RANK.TERM; exit 0' TERM; "
                             f"trap 'touch {tmp_path}/$RANK.INT; exit 0' INT; echo up; "
                             "while true; do sleep 0.1; done"],
                            stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True)
    for _ in range(k):
        assert proc.stdout.readline().endswith("up\n")
    return proc


def test_sigterm_and_sigint_reach_the_ranks(tmp_path):
    for sig in (signal.SIGTERM, signal.SIGINT):
        proc = start_waiting_ranks(tmp_path, 2)
        proc.send_signal(sig)
        proc.wait(timeout=20)
        assert proc.returncode == 1
        assert f"got signal {int(sig)} ({sig.name})" in proc.stderr.read()
        name = sig.name[3:]
        assert (tmp_path / f"0.{name}").exists() and (tmp_path / f"1.{name}").exists()


def test_a_rank_ignoring_sigterm_is_killed_after_the_grace_period():
    start = time.time()
    p = launch("--nproc-per-node", 2, "--grace-seconds", 1, "--", "/bin/sh", "-c",
               "if [ $RANK = 1 ]; then exit 4; fi; trap '' TERM; sleep 30")
    assert p.returncode == 1 and time.time() - start < 10
    assert re.search(r"rank 1 \(pid \d+\) exited with status 4", p.stderr), p.stderr


def test_the_timeout_stops_the_job():
    start = time.time()
    p = launch("--nproc-per-node", 2, "--timeout-seconds", 1, "--", "/bin/sh", "-c",
               "echo up; sleep 30")
    assert p.returncode == 1 and time.time() - start < 10
    assert "ran past --timeout-seconds 1" in p.stderr, p.stderr
    assert sorted(p.stdout.splitlines()) == ["[rank 0] up", "[rank 1] up"]


def test_ranks_die_with_a_killed_launch(tmp_path):
    proc = start_waiting_ranks(tmp_path, 2)
    ranks = subprocess.run(["pgrep", "-P", str(proc.pid)], capture_output=True,
                           text=True).stdout.split()
    assert len(ranks) == 2, ranks
    proc.kill()
    proc.wait(timeout=10)
    deadline = time.time() + 5
    while any(Path(f"/proc/{r}").exists() for r in ranks):
        assert time.time() < deadline, "a rank outlived its launch"
        time.sleep(0.05)


def test_bad_arguments_are_refused():
    for args, needle in [(["--nproc-per-node", 0, "--", "true"], "--nproc-per-node"),
                         (["--nproc-per-node", "two", "--", "true"], "--nproc-per-node"),
                         (["--nnodes", 2, "--", "true"], "--master HOST:PORT is required"),
                         (["--master", "nohost", "--", "true"], "is not HOST:PORT"),
                         (["--master", "h:99999", "--", "true"], "is not HOST:PORT"),
                         (["--nnodes", 2, "--node-rank", 2, "--master", "h:1", "--", "true"],
                          "--node-rank 2"),
                         (["--", "no-such-program-xyz"], "neither a myriad subcommand"),
                         ([], "command is required")]:
        p = launch(*args)
        assert p.returncode == 2 and needle in p.stdout + p.stderr, (args, p.stderr)
        assert "[rank" not in p.stdout + p.stderr


def test_two_nodes_on_loopback_train_one_job(tmp_path):
    port = free_port()
    nodes = [subprocess.Popen([BIN, "launch", "--nproc-per-node", "1", "--nnodes", "2",
                               "--node-rank", str(n), "--master", f"127.0.0.1:{port}", "--",
                               "train", str(CONFIG), "--out", str(tmp_path / "run"), *QUICK,
                               "env.num_envs=16", "run.total_env_steps=20000"],
                              stdout=subprocess.PIPE, stderr=subprocess.STDOUT, text=True)
             for n in (0, 1)]
    outs = [n.communicate(timeout=300)[0] for n in nodes]
    assert [n.returncode for n in nodes] == [0, 0], outs
    sums = [re.search(r"\[rank (\d)\] myriad train: rank \1: parameters crc32c (\w+)", o).group(2)
            for o in outs]
    assert sums[0] == sums[1]
    assert json.loads((tmp_path / "run" / "summary.json").read_text())["world_size"] == 2


def test_a_killed_rank_is_restarted_and_the_run_finishes(tmp_path):
    out = tmp_path / "run"
    job = subprocess.Popen([BIN, "launch", "--nproc-per-node", "2", "--max-restarts", "1", "--",
                            "train", str(CONFIG), "--out", str(out), *QUICK, "env.num_envs=16",
                            "run.total_env_steps=150000", "run.checkpoint_every=2"],
                           stdout=subprocess.PIPE, stderr=subprocess.STDOUT, text=True)
    deadline = time.time() + 120
    while not (out / "checkpoints" / "last.pt").exists():
        assert time.time() < deadline, "no checkpoint written"
        time.sleep(0.2)
    ranks = subprocess.run(["pgrep", "-P", str(job.pid)], capture_output=True,
                           text=True).stdout.split()
    assert len(ranks) == 2, ranks
    os.kill(int(max(ranks, key=int)), signal.SIGKILL)
    text = job.communicate(timeout=240)[0]
    assert job.returncode == 0, text
    assert "signal 9 (SIGKILL)" in text and "restart 1 of 1" in text, text
    summary = json.loads((out / "summary.json").read_text())
    assert summary["env_steps"] >= 150000 and summary["world_size"] == 2


def test_two_nodes_started_with_different_settings_refuse_to_train(tmp_path):
    """Two launches as two nodes whose commands differ in one setting: both refuse at the
    start, naming it (not a Gloo abort, not a collective timeout)."""
    port = free_port()
    t0 = time.time()
    nodes = [subprocess.Popen([BIN, "launch", "--nproc-per-node", "1", "--nnodes", "2",
                               "--node-rank", str(n), "--master", f"127.0.0.1:{port}", "--",
                               "train", str(CONFIG), "--out", str(tmp_path / f"run{n}"), *QUICK,
                               "env.num_envs=16", f"ppo.update_epochs={4 + 2 * n}"],
                              stdout=subprocess.PIPE, stderr=subprocess.STDOUT, text=True)
             for n in (0, 1)]
    outs = [n.communicate(timeout=60)[0] for n in nodes]
    assert time.time() - t0 < 30, outs
    assert [n.returncode for n in nodes] == [1, 1], outs
    for out in outs:
        assert "ranks disagree on ppo.update_epochs: rank 0 has 4, rank 1 has 6" in out, out
        assert "SIGABRT" not in out and "EnforceNotMet" not in out, out
