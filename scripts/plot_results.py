"""Learning curves from runs' metrics.csv: the training episode return (charts/episode_return,
the mean over the episodes that ended in each logged update) against env steps and against wall
time, with the median over runs (seeds) and the band from the worst to the best run.

Run: .venv/bin/python scripts/plot_results.py RUN_DIR [RUN_DIR ...] --out docs/images/curves.png
         [--title CartPole-v1] [--metric charts/episode_return]
A multi-agent run logs each team's return (charts/<team>/episode_return): without --metric the
first team's is drawn, and the axis names it.
Each RUN_DIR is a run folder of `myriad train` (or `myriad.train`) holding metrics.csv. Runs of
one config with different seeds make the band; their curves are interpolated onto a common
grid of env steps (and of wall seconds) up to the shortest run's end.
"""
import argparse
import csv
import math
from pathlib import Path

import matplotlib

matplotlib.use("Agg")
import matplotlib.pyplot as plt  # noqa: E402
from matplotlib.ticker import EngFormatter  # noqa: E402
import numpy as np  # noqa: E402


def read_run(run_dir, metric):
    rows = list(csv.DictReader((Path(run_dir) / "metrics.csv").read_text().splitlines()))
    steps, wall, value = [], [], []
    for r in rows:
        v = r.get(metric, "")
        if v in ("", "nan", "-nan") or not math.isfinite(float(v)):
            continue
        steps.append(float(r["env_steps"]))
        wall.append(float(r.get("charts/wall_seconds", "nan") or "nan"))
        value.append(float(v))
    if not steps:
        raise SystemExit(f"{run_dir}/metrics.csv has no finite {metric}")
    return np.array(steps), np.array(wall), np.array(value)


def band(xs, ys, points=200):
    """Median, min and max of several curves on a common grid up to the shortest curve's end."""
    end = min(x[-1] for x in xs)
    start = max(x[0] for x in xs)
    grid = np.linspace(start, end, points)
    stack = np.stack([np.interp(grid, x, y) for x, y in zip(xs, ys)])
    return grid, np.median(stack, axis=0), stack.min(axis=0), stack.max(axis=0)


def main():
    p = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    p.add_argument("runs", nargs="+", help="run folders holding metrics.csv")
    p.add_argument("--out", required=True, help="image to write (.png or .svg)")
    p.add_argument("--title", default="")
    p.add_argument("--metric", default=None,
                   help="metrics.csv column (default charts/episode_return, else the first "
                        "team's charts/<team>/episode_return)")
    a = p.parse_args()
    if a.metric is None:
        header = (Path(a.runs[0]) / "metrics.csv").read_text().splitlines()[0].split(",")
        teams = [c for c in header if c.startswith("charts/") and c.endswith("/episode_return")
                 and c.count("/") == 2]
        a.metric = "charts/episode_return" if "charts/episode_return" in header or not teams \
            else teams[0]
    runs = [read_run(r, a.metric) for r in a.runs]
    fig, axes = plt.subplots(1, 2, figsize=(10, 3.6), constrained_layout=True)
    for ax, k, label in ((axes[0], 0, "env steps"), (axes[1], 1, "wall time (s)")):
        xs = [r[k] for r in runs if np.all(np.isfinite(r[k]))]
        ys = [r[2] for r in runs if np.all(np.isfinite(r[k]))]
        if not xs:
            ax.set_visible(False)
            continue
        grid, med, lo, hi = band(xs, ys)
        ax.fill_between(grid, lo, hi, alpha=0.25, color="C0", linewidth=0,
                        label=f"min-max over {len(xs)} runs")
        ax.plot(grid, med, color="C0", label="median")
        ax.set_xlabel(label)
        if k == 0:
            ax.xaxis.set_major_formatter(EngFormatter(sep=""))
        ax.set_ylabel(a.metric.removeprefix("charts/").replace("_", " "))
        ax.grid(alpha=0.3)
        ax.legend(loc="lower right", fontsize=8)
    if a.title:
        fig.suptitle(a.title)
    Path(a.out).parent.mkdir(parents=True, exist_ok=True)
    fig.savefig(a.out, dpi=110, metadata={"Software": None} if a.out.endswith(".png") else None)
    print(f"wrote {a.out} from {len(runs)} runs")


if __name__ == "__main__":
    main()
