"""The generated reference pages (docs/reference/) match what scripts/gen_docs.py writes from
the code now: the config keys (learner/config.cc, learner/config.h), the CLI's --help, the env
registry and the Python docstrings. A failure means the code changed and the pages were not
regenerated; the message says how.

Run: PYTHONPATH=build/python .venv/bin/python -m pytest -q tests/docs
"""
import difflib
import os
import subprocess
import sys
from pathlib import Path

import pytest

SRC = Path(os.environ.get("MYRIAD_SOURCE_DIR", Path(__file__).resolve().parents[2]))
BUILD = Path(os.environ.get("MYRIAD_BUILD_DIR", SRC / "build"))
MYRIAD = BUILD / "tools" / "myriad"
PAGES = ["config", "cli", "envs", "python"]


@pytest.fixture(scope="module")
def regenerated(tmp_path_factory):
    if not MYRIAD.exists():
        pytest.fail(f"{MYRIAD} is not built")
    out = tmp_path_factory.mktemp("reference")
    subprocess.run([sys.executable, str(SRC / "scripts" / "gen_docs.py"), "--out", str(out),
                    "--myriad", str(MYRIAD)], check=True, cwd=SRC)
    return out


@pytest.mark.parametrize("page", PAGES)
def test_committed_page_matches_the_code(regenerated, page):
    committed = (SRC / "docs" / "reference" / f"{page}.md").read_text()
    fresh = (regenerated / f"{page}.md").read_text()
    if committed != fresh:
        diff = "".join(difflib.unified_diff(committed.splitlines(True), fresh.splitlines(True),
                                            f"docs/reference/{page}.md (committed)",
                                            f"docs/reference/{page}.md (from the code)", n=1))
        pytest.fail(f"docs/reference/{page}.md is out of date; regenerate it with\n"
                    f"  PYTHONPATH=build/python .venv/bin/python scripts/gen_docs.py\n{diff[:4000]}")


def test_every_subcommand_has_a_section(regenerated):
    text = (regenerated / "cli.md").read_text()
    for cmd in ("train", "eval", "view", "bench", "launch", "serve", "actor"):
        assert f"## `myriad {cmd}`" in text
