#!/usr/bin/env python3
"""Self-play on Sumo-v0 through `myriad serve` and two `myriad actor` processes on loopback.

Runs the server for --seconds with two actors, then prints: the Elo table of the pool (the
latest policy against its first snapshot), env steps/s and trajectory bytes/s through the two
actors to the learner, the policy lag distribution, and, measured in the same run right after,
a raw loopback socket copy (one Python sender, one receiver, 256 KiB writes) for comparison.

  .venv/bin/python scripts/selfplay_results.py --seconds 300 --out runs/selfplay-demo
"""
import argparse
import csv
import json
import os
import secrets
import signal
import socket
import subprocess
import sys
import threading
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent


def free_port():
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return s.getsockname()[1]


def raw_socket_copy(seconds=3.0, block=256 * 1024):
    """Bytes/s of a plain TCP copy over loopback (sendall of one buffer, recv_into)."""
    srv = socket.socket()
    srv.bind(("127.0.0.1", 0))
    srv.listen(1)
    port = srv.getsockname()[1]
    got = [0]

    def receive():
        conn, _ = srv.accept()
        buf = bytearray(block)
        view = memoryview(buf)
        while True:
            n = conn.recv_into(view)
            if n == 0:
                break
            got[0] += n
        conn.close()

    t = threading.Thread(target=receive)
    t.start()
    out = socket.create_connection(("127.0.0.1", port))
    payload = b"\0" * block
    start = time.monotonic()
    while time.monotonic() - start < seconds:
        out.sendall(payload)
    out.close()
    t.join()
    elapsed = time.monotonic() - start
    srv.close()
    return got[0] / elapsed


def main():
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--bin", default=os.environ.get("MYRIAD_BIN", str(ROOT / "build/tools/myriad")))
    ap.add_argument("--config", default=str(ROOT / "configs/sumo_selfplay.yaml"))
    ap.add_argument("--seconds", type=float, default=300)
    ap.add_argument("--out", default=None, help="run folder (default: a new one under runs/)")
    ap.add_argument("--seed", type=int, default=1)
    ap.add_argument("overrides", nargs="*", help="key.path=value for the server's config")
    a = ap.parse_args()
    out = Path(a.out or ROOT / f"runs/selfplay-{time.strftime('%Y%m%d-%H%M%S')}")
    out.mkdir(parents=True, exist_ok=True)
    port = free_port()
    env = dict(os.environ, MYRIAD_SECRET=secrets.token_hex(32))
    logs = {name: open(out / f"{name}.log", "w") for name in ("serve", "a1", "a2")}
    server = subprocess.Popen(
        [a.bin, "serve", a.config, f"serve.port={port}", f"run.seed={a.seed}", *a.overrides,
         "--out", str(out), "--max-seconds", str(a.seconds)],
        stdout=logs["serve"], stderr=subprocess.STDOUT, env=env)
    actors = [subprocess.Popen([a.bin, "actor", "--connect", f"127.0.0.1:{port}", "--id", name,
                                "--seed", str(100 * a.seed + k)],
                               stdout=logs[name], stderr=subprocess.STDOUT, env=env)
              for k, name in enumerate(("a1", "a2"), 1)]
    rc = server.wait(timeout=a.seconds + 120)
    for p in actors:
        p.send_signal(signal.SIGTERM)
        p.wait(timeout=30)
    for f in logs.values():
        f.close()
    if rc != 0:
        sys.exit(f"myriad serve exited {rc}; see {out / 'serve.log'}")
    raw = raw_socket_copy()

    s = json.loads((out / "summary.json").read_text())
    rows = list(csv.DictReader((out / "serve.csv").read_text().splitlines()))
    pool = s["pool"]
    latest, first = s["elo_learner"], pool[0]["elo"]
    print(f"Sumo-v0 self-play, {s['wall_seconds']:.0f} s, {s['version']} updates, "
          f"{s['env_steps']} learner env steps, {s['games']} games rated")
    print("\nElo of the pool (id, policy version, rating, games the learner played against it, "
          "the learner's score in them):")
    for p in pool:
        score = p["learner_score"] / p["games"] if p["games"] else float("nan")
        print(f"  snapshot {p['id']:3d}  v{p['version']:<5d} {p['elo']:8.1f}  "
              f"{p['games']:7d} games  learner score {score:.3f}")
    print(f"  learner     v{s['version']:<5d} {latest:8.1f}")
    print(f"\nlatest - first snapshot: {latest - first:+.1f} Elo")
    print("\nElo over time (version: learner, first snapshot):")
    step = max(1, len(rows) // 10)
    for r in rows[::step] + ([rows[-1]] if rows and (len(rows) - 1) % step else []):
        print(f"  v{int(r['version']):<5d} {float(r['elo_learner']):8.1f} "
              f"{float(r['elo_first']):8.1f}")
    sps, bps = s["steps_per_second"], s["chunk_bytes_per_second"]
    print(f"\nthroughput: {sps:,.0f} learner env steps/s trained, {bps / 1e6:.2f} MB/s of "
          f"trajectory chunks received (2 actors)")
    print(f"raw loopback socket copy in the same run: {raw / 1e6:,.0f} MB/s "
          f"(chunks/raw = {bps / raw:.4f})")
    lags = {int(k): v for k, v in s["lag_histogram"].items()}
    total = sum(lags.values())
    print(f"\npolicy lag (versions) of the {total} chunks received, max_lag {s['max_lag']}:")
    for k in sorted(lags):
        print(f"  lag {k:3d}: {lags[k]:6d} ({100 * lags[k] / total:.1f}%)")
    print(f"chunks used {s['chunks_used']}, dropped {s['chunks_dropped']}")
    (out / "results.json").write_text(json.dumps(
        {"elo_latest": latest, "elo_first": first, "elo_gap": latest - first,
         "steps_per_second": sps, "chunk_bytes_per_second": bps, "raw_socket_bytes_per_second": raw,
         "lag_histogram": lags, "version": s["version"]}, indent=2))


if __name__ == "__main__":
    main()
