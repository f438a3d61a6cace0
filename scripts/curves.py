"""Learning curves of a set of runs (scripts/seeds.py's folder): the training episode return
(charts/episode_return in metrics.csv, the mean over episodes ended in that update) at fixed
env-step marks, per seed, with the median. docs/lab-notebook.md records its output.

Run: .venv/bin/python scripts/curves.py RUNS_DIR [--marks 1e6,2e6,3e6]
"""
import argparse
import csv
import statistics
from pathlib import Path


def at_marks(metrics, marks):
    rows = list(csv.DictReader(metrics.read_text().splitlines()))
    out = []
    for m in marks:
        # The last logged return at or before the mark (the update that crossed it).
        vals = [float(r["charts/episode_return"]) for r in rows
                if int(float(r["env_steps"])) <= m and r["charts/episode_return"] not in ("", "nan")]
        out.append(vals[-1] if vals else float("nan"))
    return out


def main():
    p = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    p.add_argument("runs")
    p.add_argument("--marks", default="")
    a = p.parse_args()
    runs = sorted(Path(a.runs).glob("seed*/metrics.csv"), key=lambda q: int(q.parent.name[4:]))
    if not runs:
        raise SystemExit(f"no seed*/metrics.csv under {a.runs}")
    if a.marks:
        marks = [int(float(x)) for x in a.marks.split(",")]
    else:
        last = max(int(float(list(csv.DictReader(r.read_text().splitlines()))[-1]["env_steps"]))
                   for r in runs)
        step = 10 ** (len(str(last)) - 1)
        marks = list(range(step, last + 1, step))
    table = {r.parent.name: at_marks(r, marks) for r in runs}
    print("env steps | " + " | ".join(table) + " | median")
    print("---|" + "---|" * len(table) + "---")
    for k, m in enumerate(marks):
        vals = [v[k] for v in table.values()]
        print(f"{m / 1e6:.1f}M | " + " | ".join(f"{v:.0f}" for v in vals) +
              f" | {statistics.median(vals):.0f}")


if __name__ == "__main__":
    main()
