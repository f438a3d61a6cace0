"""Reads a TensorBoard event file with tensorboard's own reader and checks the scalars that
tests/learner/test_tensorboard.cc writes.

Usage: read_events.py <events.out.tfevents...>
"""

import sys

from tensorboard.backend.event_processing.event_accumulator import EventAccumulator

EXPECTED = {
    "train/episode_return": [(10, 1.5), (20, 2.5), (30, 3.5)],
    "train/loss": [(10, 0.25)],
}


def main(argv):
    if len(argv) != 2:
        print(__doc__, file=sys.stderr)
        return 2
    # size_guidance 0 keeps every scalar instead of reservoir-sampling them.
    acc = EventAccumulator(argv[1], size_guidance={"scalars": 0})
    acc.Reload()
    print(f"file_version: {acc.file_version}")
    got = {}
    for tag in sorted(acc.Tags()["scalars"]):
        got[tag] = [(e.step, e.value) for e in acc.Scalars(tag)]
        for e in acc.Scalars(tag):
            print(f"{tag} step={e.step} value={e.value} wall_time={e.wall_time:.3f}")
    assert acc.file_version == 2.0, acc.file_version
    assert got == EXPECTED, f"read {got}, expected {EXPECTED}"
    print("read_events.py: OK")
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv))
