#!/usr/bin/env python3
"""Self-play on Sumo-v0 through `myriad serve` and two `myriad actor` processes on loopback.

Runs the server for --seconds with two actors, then prints: the Elo table of the pool (the
latest policy against its first snapshot), env steps/s and trajectory bytes/s through the two
actors to the learner while training, and the policy lag distribution; writes elo.svg (the
learner's and the first snapshot's Elo against env steps). Then, in the same run, the transport
alone (`myriad serve --no-train` with two `myriad actor --repeat-chunk`: real chunks framed,
checksummed, sent, received and decoded, no env steps and no PPO) and a raw loopback socket copy
(one Python sender, one receiver thread, 256 KiB writes) for comparison.

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


def svg_curves(rows, path):
    """Elo of the learner and of the first snapshot against env steps, as a small SVG."""
    xs = [int(r["env_steps"]) for r in rows]
    series = [("learner (latest)", "#1f77b4", [float(r["elo_learner"]) for r in rows]),
              ("first snapshot", "#d62728", [float(r["elo_first"]) for r in rows])]
    lo = min(min(v) for _, _, v in series)
    hi = max(max(v) for _, _, v in series)
    lo, hi = 100 * (lo // 100), 100 * (hi // 100 + 1)
    w, h, m = 640, 360, 50
    X = lambda x: m + (w - 2 * m) * x / max(xs[-1], 1)
    Y = lambda y: h - m - (h - 2 * m) * (y - lo) / (hi - lo)
    out = [f'<svg xmlns="http://www.w3.org/2000/svg" width="{w}" height="{h}" '
           f'font-family="sans-serif" font-size="12">',
           f'<rect width="{w}" height="{h}" fill="white"/>',
           f'<line x1="{m}" y1="{h - m}" x2="{w - m}" y2="{h - m}" stroke="black"/>',
           f'<line x1="{m}" y1="{m}" x2="{m}" y2="{h - m}" stroke="black"/>']
    for y in range(int(lo), int(hi) + 1, 100):
        out.append(f'<text x="{m - 6}" y="{Y(y) + 4:.1f}" text-anchor="end">{y}</text>')
        out.append(f'<line x1="{m}" y1="{Y(y):.1f}" x2="{w - m}" y2="{Y(y):.1f}" '
                   f'stroke="#ddd"/>')
    for k in range(5):
        x = xs[-1] * k / 4
        out.append(f'<text x="{X(x):.1f}" y="{h - m + 16}" text-anchor="middle">'
                   f'{x / 1e6:.1f}M</text>')
    out.append(f'<text x="{w / 2}" y="{h - 10}" text-anchor="middle">learner env steps</text>')
    out.append(f'<text x="{m}" y="{m - 20}">Sumo-v0 self-play: Elo</text>')
    for k, (name, color, ys) in enumerate(series):
        pts = " ".join(f"{X(x):.1f},{Y(y):.1f}" for x, y in zip(xs, ys))
        out.append(f'<polyline points="{pts}" fill="none" stroke="{color}" stroke-width="2"/>')
        out.append(f'<text x="{w - m - 150}" y="{m + 16 * k + 10}" fill="{color}">{name}</text>')
    out.append("</svg>")
    Path(path).write_text("\n".join(out) + "\n")


def run_processes(a, out, env, port, serve_args, actor_args, seconds):
    """Serve + two actors until the server stops; returns the server's summary.json."""
    out.mkdir(parents=True, exist_ok=True)
    logs = {name: open(out / f"{name}.log", "w") for name in ("serve", "a1", "a2")}
    server = subprocess.Popen(
        [a.bin, "serve", a.config, f"serve.port={port}", f"run.seed={a.seed}", *serve_args,
         "--out", str(out), "--max-seconds", str(seconds)],
        stdout=logs["serve"], stderr=subprocess.STDOUT, env=env)
    actors = [subprocess.Popen([a.bin, "actor", "--connect", f"127.0.0.1:{port}", "--id", name,
                                "--seed", str(100 * a.seed + k), *actor_args],
                               stdout=logs[name], stderr=subprocess.STDOUT, env=env)
              for k, name in enumerate(("a1", "a2"), 1)]
    rc = server.wait(timeout=seconds + 120)
    for p in actors:
        p.send_signal(signal.SIGTERM)
        p.wait(timeout=30)
    for f in logs.values():
        f.close()
    if rc != 0:
        sys.exit(f"myriad serve exited {rc}; see {out / 'serve.log'}")
    return json.loads((out / "summary.json").read_text())


def main():
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--bin", default=os.environ.get("MYRIAD_BIN", str(ROOT / "build/tools/myriad")))
    ap.add_argument("--config", default=str(ROOT / "configs/sumo_selfplay.yaml"))
    ap.add_argument("--seconds", type=float, default=300)
    ap.add_argument("--out", default=None, help="run folder (default: a new one under runs/)")
    ap.add_argument("--seed", type=int, default=1)
    ap.add_argument("--transport-seconds", type=float, default=10)
    ap.add_argument("--transport-chunks", type=int, default=16,
                    help="serve.chunks_per_update of the transport run (chunks in flight)")
    ap.add_argument("--transport-only", action="store_true",
                    help="only the transport run and the raw socket copy")
    ap.add_argument("overrides", nargs="*", help="key.path=value for the server's config")
    a = ap.parse_args()
    out = Path(a.out or ROOT / f"runs/selfplay-{time.strftime('%Y%m%d-%H%M%S')}")
    out.mkdir(parents=True, exist_ok=True)
    env = dict(os.environ, MYRIAD_SECRET=secrets.token_hex(32))
    if not a.transport_only:
        s = run_processes(a, out, env, free_port(), a.overrides, [], a.seconds)
    t = run_processes(a, out / "transport", env, free_port(),
                      [*a.overrides, f"serve.chunks_per_update={a.transport_chunks}",
                       "--no-train"], ["--repeat-chunk"], a.transport_seconds)
    raw = raw_socket_copy()
    tsps, tbps = t["steps_per_second"], t["chunk_bytes_per_second"]
    if a.transport_only:
        print(f"transport alone (--no-train, --repeat-chunk, {a.transport_chunks} chunks per "
              f"batch): {tbps / 1e6:,.0f} MB/s of chunks = {tsps:,.0f} env steps/s; raw loopback "
              f"socket copy {raw / 1e6:,.0f} MB/s (transport/raw = {tbps / raw:.2f})")
        return

    rows = list(csv.DictReader((out / "serve.csv").read_text().splitlines()))
    pool = s["pool"]
    latest, first = s["elo_learner"], pool[0]["elo"]
    print(f"Sumo-v0 self-play, {s['wall_seconds']:.0f} s, {s['version']} updates, "
          f"{s['env_steps']} learner env steps, {s['games']} games rated")
    print("\nElo of the pool (id, policy version, rating, games the learner played against it, "
          "the learner's score in them; the first 3 and the last 3 snapshots):")
    for p in (pool if len(pool) <= 6 else pool[:3] + pool[-3:]):
        score = p["learner_score"] / p["games"] if p["games"] else float("nan")
        print(f"  snapshot {p['id']:3d}  v{p['version']:<5d} {p['elo']:8.1f}  "
              f"{p['games']:7d} games  learner score {score:.3f}")
    print(f"  learner     v{s['version']:<5d} {latest:8.1f}")
    print(f"\nlatest - first snapshot: {latest - first:+.1f} Elo")
    h = s.get("latest_vs_first")
    if h:
        print(f"head to head, latest vs first snapshot, {h['episodes']} episodes: {h['wins']} wins, "
              f"{h['draws']} draws, {h['losses']} losses; score {h['score']:.3f} "
              f"(an Elo gap of {h['elo_gap_implied']:+.0f})")
    print("\nElo over time (version: learner, first snapshot):")
    step = max(1, len(rows) // 10)
    for r in rows[::step] + ([rows[-1]] if rows and (len(rows) - 1) % step else []):
        print(f"  v{int(r['version']):<5d} {float(r['elo_learner']):8.1f} "
              f"{float(r['elo_first']):8.1f}")
    svg_curves(rows, out / "elo.svg")
    sps, bps = s["steps_per_second"], s["chunk_bytes_per_second"]
    print(f"\ntraining: {sps:,.0f} learner env steps/s trained, {bps / 1e6:.2f} MB/s of "
          f"trajectory chunks received (2 actors)")
    print(f"transport alone (--no-train, --repeat-chunk, {a.transport_chunks} chunks per batch): "
          f"{tbps / 1e6:,.0f} MB/s of chunks = {tsps:,.0f} env steps/s")
    print(f"raw loopback socket copy in the same run: {raw / 1e6:,.0f} MB/s "
          f"(transport/raw = {tbps / raw:.2f})")
    lags = {int(k): v for k, v in s["lag_histogram"].items()}
    total = sum(lags.values())
    print(f"\npolicy lag (versions) of the {total} chunks received, max_lag {s['max_lag']}:")
    for k in sorted(lags):
        print(f"  lag {k:3d}: {lags[k]:6d} ({100 * lags[k] / total:.1f}%)")
    print(f"chunks used {s['chunks_used']}, dropped {s['chunks_dropped']}")
    (out / "results.json").write_text(json.dumps(
        {"elo_latest": latest, "elo_first": first, "elo_gap": latest - first,
         "latest_vs_first": h,
         "steps_per_second": sps, "chunk_bytes_per_second": bps,
         "transport_steps_per_second": tsps, "transport_bytes_per_second": tbps,
         "raw_socket_bytes_per_second": raw,
         "lag_histogram": lags, "version": s["version"]}, indent=2))


if __name__ == "__main__":
    main()
