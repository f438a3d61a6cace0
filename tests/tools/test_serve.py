"""`myriad serve` and `myriad actor` as processes on loopback: self-play end to end with two
actors, an actor killed with SIGKILL mid-run (the run goes on, a restarted actor rejoins), the
server stopped and restarted from its checkpoint (the actors find it again, the version goes
on), and an actor with a wrong secret (refused, nothing of it reaches the learner)."""
import csv
import json
import os
import re
import signal
import subprocess
import time
from pathlib import Path

import pytest

BIN = os.environ.get("MYRIAD_BIN", "build/tools/myriad")
SRC = Path(os.environ.get("MYRIAD_SOURCE_DIR", "."))
CONFIG = SRC / "configs/sumo_selfplay.yaml"
TINY = ["env.num_envs=8", "ppo.num_steps=20", "ppo.num_minibatches=2", "ppo.update_epochs=1",
        "ppo.hidden_sizes=[16,16]", "serve.chunks_per_update=2", "serve.snapshot_every=2",
        "run.checkpoint_every=2", "run.eval_episodes=20", "run.log_every_seconds=0.5", "run.total_env_steps=1000000000"]
SECRET = "0123456789abcdef0123456789abcdef"


LISTENING = re.compile(r"listening on [0-9.]+:([0-9]+)")


class Proc:
    """A process whose output goes to a file, read while it runs."""

    def __init__(self, args, log, secret=SECRET):
        env = dict(os.environ, MYRIAD_SECRET=secret)
        self.log = log
        self.out = open(log, "w")
        self.p = subprocess.Popen([BIN, *map(str, args)], stdout=self.out,
                                  stderr=subprocess.STDOUT, env=env)

    def text(self):
        return Path(self.log).read_text()

    def stop(self, sig=signal.SIGTERM, timeout=30):
        if self.p.poll() is None:
            self.p.send_signal(sig)
        rc = self.p.wait(timeout=timeout)
        self.out.close()
        return rc


def serve(tmp, *extra, port=0, out="run"):
    """A server on `port` (0: one the kernel picks, so no other process can take it between a
    probe and the bind). Returns once it listens; `.port` is the port it bound."""
    s = Proc(["serve", CONFIG, *TINY, f"serve.port={port}", "--out", tmp / out, *extra],
             tmp / f"serve-{time.monotonic_ns()}.log")
    wait_for(lambda: LISTENING.search(s.text()), "the server to listen", procs=[s])
    s.port = int(LISTENING.search(s.text()).group(1))
    return s


def actor(tmp, port, name, secret=SECRET):
    return Proc(["actor", "--connect", f"127.0.0.1:{port}", "--id", name, "--seed", 1 + len(name)],
                tmp / f"{name}-{time.monotonic_ns()}.log", secret)


def version(run):
    """The newest policy version in serve.csv (0 before the first update)."""
    path = run / "serve.csv"
    if not path.exists():
        return 0
    rows = list(csv.DictReader(path.read_text().splitlines()))
    return int(rows[-1]["version"]) if rows else 0


def wait_for(cond, what, timeout=40, procs=()):
    end = time.monotonic() + timeout
    while time.monotonic() < end:
        if cond():
            return
        for p in procs:
            assert p.p.poll() is None, f"{p.log} exited early:\n{p.text()}"
        time.sleep(0.1)
    logs = "\n".join(f"--- {p.log}\n{p.text()}" for p in procs)
    raise AssertionError(f"timed out waiting for {what}\n{logs}")


@pytest.fixture
def tmp(tmp_path):
    return tmp_path


def test_two_actors_train_and_a_killed_actor_rejoins(tmp):
    run = tmp / "run"
    s = serve(tmp)
    port = s.port
    a1, a2 = actor(tmp, port, "a1"), actor(tmp, port, "a2")
    procs = [s, a1, a2]
    try:
        wait_for(lambda: version(run) >= 4 and s.text().count("connected (conn") >= 2,
                 "4 updates with two actors", procs=procs)
        # kill -9 one actor mid-run: the server notices, drops what it tore, and goes on.
        a2.p.kill()
        a2.p.wait()
        wait_for(lambda: "'a2' left" in s.text(), "the server to see a2 go", procs=[s, a1])
        v = version(run)
        wait_for(lambda: version(run) >= v + 4, "updates with one actor left", procs=[s, a1])
        a2b = actor(tmp, port, "a2")
        procs = [s, a1, a2b]
        wait_for(lambda: s.text().count("'a2' connected") >= 2, "a2 to rejoin", procs=procs)
        wait_for(lambda: "myriad actor a2: connected" in a2b.text(), "a2's side", procs=procs)
        v = version(run)
        wait_for(lambda: version(run) >= v + 3, "updates after the rejoin", procs=procs)
        for a in (a1, a2b):
            assert a.stop() == 0, a.text()
        assert s.stop() == 0, s.text()
    finally:
        for p in procs:
            if p.p.poll() is None:
                p.p.kill()
    summary = json.loads((run / "summary.json").read_text())
    assert summary["connects"] >= 3
    assert summary["chunks_used"] >= 2 * summary["version"]
    assert sum(summary["lag_histogram"].values()) >= summary["chunks_used"]
    assert len(summary["pool"]) >= 1 + summary["version"] // 2
    assert summary["games"] > 0
    assert (run / "checkpoints/server.pt").exists()


def test_a_restarted_server_resumes_and_its_actors_find_it_again(tmp):
    run = tmp / "run"
    s = serve(tmp)
    port = s.port
    a1, a2 = actor(tmp, port, "a1"), actor(tmp, port, "a2")
    procs = [s, a1, a2]
    try:
        # Both actors connected to the first server (the test counts each one's reconnect
        # below): under load one actor can still be loading while the other feeds 4 updates.
        wait_for(lambda: version(run) >= 4 and all(": connected to" in a.text() for a in (a1, a2)),
                 "4 updates with both actors connected", procs=procs)
        assert s.stop() == 0, s.text()  # SIGTERM: checkpoint at exit
        first = json.loads((run / "summary.json").read_text())
        saved = first["version"]
        pool = len(first["pool"])
        s2 = serve(tmp, "--resume", run / "checkpoints/server.pt", port=port)
        procs = [s2, a1, a2]
        wait_for(lambda: f"resumed" in s2.text(), "the server to resume", procs=procs)
        assert f"at version {saved}" in s2.text()
        wait_for(lambda: s2.text().count("connected (conn") >= 2, "both actors to reconnect",
                 procs=procs)
        wait_for(lambda: version(run) >= saved + 3, "updates after the restart", procs=procs)
        # The actors' own log lines may trail the server's by a moment. Wait for both before
        # stopping either: a stopped actor in `procs` would read as one that exited early.
        for a in (a1, a2):
            wait_for(lambda: a.text().count(": connected to") >= 2, "the actor's reconnect line",
                     procs=procs)
        for a in (a1, a2):
            assert a.stop() == 0, a.text()
        assert s2.stop() == 0, s2.text()
    finally:
        for p in procs:
            if p.p.poll() is None:
                p.p.kill()
    rows = list(csv.DictReader((run / "serve.csv").read_text().splitlines()))
    versions = [int(r["version"]) for r in rows]
    assert versions == list(range(1, len(versions) + 1)), versions  # no gap, no repeat
    second = json.loads((run / "summary.json").read_text())
    assert second["version"] > saved and len(second["pool"]) >= pool
    # The pool's ratings came back with it: the first snapshot's games continue.
    assert second["pool"][0]["games"] >= first["pool"][0]["games"]


def test_an_actor_with_a_wrong_secret_gets_nothing_in(tmp):
    run = tmp / "run"
    s = serve(tmp)
    port = s.port
    try:
        bad = actor(tmp, port, "intruder", secret="not-the-secret-but-long-enough")
        rc = bad.p.wait(timeout=30)
        bad.out.close()
        assert rc == 1, bad.text()
        assert "refused" in bad.text()
        assert s.stop() == 0, s.text()
    finally:
        if s.p.poll() is None:
            s.p.kill()
    summary = json.loads((run / "summary.json").read_text())
    assert summary["server"]["rejected_auth"] >= 1
    assert summary["server"]["authenticated"] == 0
    assert summary["version"] == 0 and summary["chunks_used"] == 0 and summary["games"] == 0


def test_the_secret_never_comes_from_the_command_line(tmp):
    p = subprocess.run([BIN, "actor", "--connect", "127.0.0.1:1", "--secret", SECRET],
                       capture_output=True, text=True, timeout=30)
    assert p.returncode != 0
    env = {k: v for k, v in os.environ.items() if k != "MYRIAD_SECRET"}
    p = subprocess.run([BIN, "serve", CONFIG, "serve.port=0", "--out", tmp / "run"],
                       capture_output=True, text=True, timeout=30, env=env)
    assert p.returncode == 1 and "MYRIAD_SECRET" in p.stderr, p.stderr


def test_chunks_over_max_lag_are_dropped_and_replaced(tmp):
    # max_lag 0: the chunk each actor collects ahead of an update arrives one version old and is
    # dropped; its grant goes out again, so training still moves on lag-0 chunks only.
    run = tmp / "run"
    s = serve(tmp, "serve.max_lag=0")
    port = s.port
    a1, a2 = actor(tmp, port, "a1"), actor(tmp, port, "a2")
    procs = [s, a1, a2]
    try:
        # Both actors must be up (signal handlers installed) before they are told to stop: under
        # load one actor can still be loading its libraries while the other feeds 4 updates.
        wait_for(lambda: version(run) >= 4 and all("connected to" in a.text() for a in (a1, a2)),
                 "4 updates with both actors connected", procs=procs)
        for a in (a1, a2):
            assert a.stop() == 0, a.text()
        assert s.stop() == 0, s.text()
    finally:
        for p in procs:
            if p.p.poll() is None:
                p.p.kill()
    summary = json.loads((run / "summary.json").read_text())
    lags = {int(k): v for k, v in summary["lag_histogram"].items()}
    assert summary["chunks_dropped"] > 0 and summary["chunks_dropped"] == sum(
        v for k, v in lags.items() if k > 0)
    assert summary["chunks_used"] == 2 * summary["version"] <= lags[0]
    rows = list(csv.DictReader((run / "serve.csv").read_text().splitlines()))
    assert all(float(r["lag_max"]) == 0 for r in rows)
