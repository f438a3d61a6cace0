"""`myriad serve`'s run folder and secret under hostile use: the run-folder rules of `myriad
train` (an occupied --out refused unless --resume or --overwrite, never two writers on one folder,
a train run never replaced), a secret file that is a named pipe (refused at once, not read
forever), and `myriad eval` on a serve checkpoint (named as one). The chunk cases are C++
(tests/selfplay/test_hostile_chunks.cc), through a real authenticated client."""
import json
import os
import signal
import subprocess
import time
from pathlib import Path

import pytest

BIN = os.environ.get("MYRIAD_BIN", "build/tools/myriad")
SRC = Path(os.environ.get("MYRIAD_SOURCE_DIR", "."))
CONFIG = SRC / "configs/sumo_selfplay.yaml"
TINY = ["env.num_envs=4", "ppo.num_steps=8", "ppo.num_minibatches=2", "ppo.update_epochs=1",
        "ppo.hidden_sizes=[8,8]", "run.eval_episodes=0", "serve.port=0"]
SECRET = "0123456789abcdef0123456789abcdef"
ENV = dict(os.environ, MYRIAD_SECRET=SECRET)


def serve(out, *extra, seconds=0.5, timeout=60):
    """A short serve run (no actors): it listens, stops at --max-seconds, checkpoints."""
    return subprocess.run([BIN, "serve", CONFIG, *TINY, "--out", out, "--max-seconds",
                           str(seconds), *map(str, extra)],
                          capture_output=True, text=True, timeout=timeout, env=ENV)


def test_serve_refuses_an_occupied_out_unless_resumed_or_overwritten(tmp_path):
    run = tmp_path / "run"
    first = serve(run)
    assert first.returncode == 0, first.stderr
    assert (run / "checkpoints/server.pt").exists()
    csv_before = (run / "serve.csv").read_text()
    summary_before = (run / "summary.json").read_text()
    again = serve(run)
    assert again.returncode == 1
    assert "already holds a myriad serve run" in again.stderr, again.stderr
    assert "--resume" in again.stderr and "--overwrite" in again.stderr
    assert (run / "summary.json").read_text() == summary_before  # untouched
    assert (run / "serve.csv").read_text() == csv_before
    resumed = serve(run, "--resume", run / "checkpoints/server.pt")
    assert resumed.returncode == 0, resumed.stderr
    over = serve(run, "--overwrite")
    assert over.returncode == 0, over.stderr


def test_serve_never_replaces_a_train_run(tmp_path):
    run = tmp_path / "trained"
    run.mkdir()
    (run / "summary.json").write_text('{"env_steps": 1}\n')
    (run / "config.yaml").write_text("env: {id: CartPole-v1}\n")
    p = serve(run)
    assert p.returncode == 1
    assert "not a myriad serve one" in p.stderr, p.stderr
    assert (run / "summary.json").read_text() == '{"env_steps": 1}\n'
    assert not (run / "serve.csv").exists()


def test_two_servers_never_write_one_folder(tmp_path):
    run = tmp_path / "run"
    log = open(tmp_path / "first.log", "w")
    first = subprocess.Popen([BIN, "serve", CONFIG, *TINY, "--out", run], stdout=log,
                             stderr=subprocess.STDOUT, env=ENV)
    try:
        end = time.monotonic() + 60
        while "listening on" not in (tmp_path / "first.log").read_text():
            assert first.poll() is None and time.monotonic() < end, \
                (tmp_path / "first.log").read_text()
            time.sleep(0.05)
        for extra in ([], ["--overwrite"], ["--resume", run / "checkpoints/server.pt"]):
            if extra and extra[0] == "--resume" and not (run / "checkpoints/server.pt").exists():
                continue
            second = serve(run, *extra)
            assert second.returncode == 1, second.stdout
            assert "in use by another running process" in second.stderr, second.stderr
        assert first.poll() is None  # the first one never noticed
    finally:
        first.send_signal(signal.SIGTERM)
        assert first.wait(timeout=60) == 0
        log.close()
    assert (run / "serve.csv").exists()


def test_a_default_folder_is_claimed_atomically(tmp_path):
    procs = [subprocess.Popen([BIN, "serve", CONFIG, *TINY, "--max-seconds", "0.5"], cwd=tmp_path,
                              stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True, env=ENV)
             for _ in range(2)]
    for p in procs:
        assert p.wait(timeout=60) == 0, p.stderr.read()
    runs = sorted((tmp_path / "runs").iterdir())
    assert len(runs) == 2 and all((r / "summary.json").exists() for r in runs), runs


def test_a_secret_file_that_is_a_named_pipe_is_refused_at_once(tmp_path):
    fifo = tmp_path / "secret"
    os.mkfifo(fifo, 0o600)
    start = time.monotonic()
    p = subprocess.run([BIN, "serve", CONFIG, *TINY, "--out", tmp_path / "run", "--secret-file",
                        fifo], capture_output=True, text=True, timeout=30)
    assert p.returncode == 1
    assert "not a regular file" in p.stderr and "named pipe" in p.stderr, p.stderr
    assert time.monotonic() - start < 20
    a = subprocess.run([BIN, "actor", "--connect", "127.0.0.1:1", "--secret-file", fifo],
                       capture_output=True, text=True, timeout=30)
    assert a.returncode == 1 and "named pipe" in a.stderr, a.stderr


def test_eval_names_a_serve_checkpoint(tmp_path):
    run = tmp_path / "run"
    assert serve(run).returncode == 0
    p = subprocess.run([BIN, "eval", run / "checkpoints/server.pt", "--episodes", "1"],
                       capture_output=True, text=True, timeout=60)
    assert p.returncode == 1
    assert "myriad serve (self-play) checkpoint" in p.stderr, p.stderr
    assert "lacks 'config_yaml'" not in p.stderr


def test_a_second_signal_cuts_the_head_to_head_evaluation_short(tmp_path):
    """The first SIGTERM stops training and starts the evaluation; a second ends it at once."""
    run = tmp_path / "run"
    log_path = tmp_path / "serve.log"
    with open(log_path, "w") as log:
        args = [a for a in TINY if not a.startswith("run.eval_episodes")]
        p = subprocess.Popen([BIN, "serve", CONFIG, *args, "run.eval_episodes=200000",
                              "--out", run], stdout=log, stderr=subprocess.STDOUT, env=ENV)
        try:
            end = time.monotonic() + 60
            while "listening on" not in log_path.read_text():
                assert p.poll() is None and time.monotonic() < end, log_path.read_text()
                time.sleep(0.05)
            p.send_signal(signal.SIGTERM)
            while "a second one skips" not in log_path.read_text():
                assert p.poll() is None and time.monotonic() < end, log_path.read_text()
                time.sleep(0.05)
            time.sleep(0.5)  # inside the 200,000-episode match
            p.send_signal(signal.SIGTERM)
            assert p.wait(timeout=30) == 0, log_path.read_text()
        finally:
            if p.poll() is None:
                p.kill()
    summary = json.loads((run / "summary.json").read_text())
    assert summary["latest_vs_first"]["cancelled"] is True, summary
    assert "cut short by a second signal" in log_path.read_text()
    assert (run / "checkpoints/server.pt").exists()
