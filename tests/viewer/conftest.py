"""Fixtures for the browser tests of the replay viewer (viewer/).

serve_viewer(replay_path, mode) is the one place that turns a replay file into a URL showing
it in the viewer. Modes:

- "static": viewer/ copied into a temp folder with the vendor scripts from Debian's
  /usr/share/javascript and the replay at `replay`, served by Python's http.server.
- "view": `$MYRIAD_BIN view FILE --port 0` (prints http://127.0.0.1:PORT/).
- "html": `$MYRIAD_BIN view FILE --html OUT.html`, opened as a file:// URL.

The last two need MYRIAD_BIN and skip the test when the binary lacks the command.
"""

import functools
import http.server
import itertools
import os
import re
import shutil
import subprocess
import sys
import tempfile
import threading
from pathlib import Path

import pytest

HERE = Path(__file__).resolve().parent
sys.path.insert(0, str(HERE))
import sample_replay  # noqa: E402

SOURCE_DIR = Path(os.environ.get("MYRIAD_SOURCE_DIR", HERE.parents[1]))
VIEWER_DIR = Path(os.environ.get("MYRIAD_VIEWER_DIR", SOURCE_DIR / "viewer"))
VENDOR_FILES = {
    "three.min.js": "/usr/share/javascript/three/build/three.min.js",
    "OrbitControls.js": "/usr/share/javascript/three/examples/js/controls/OrbitControls.js",
    "chart.min.js": "/usr/share/javascript/chart.js/chart.min.js",
}
CHROMIUM = "/usr/bin/chromium"
MYRIAD_BIN = os.environ.get("MYRIAD_BIN")

# Modes every test module parameterizes over: static always, the myriad ones with a binary.
SERVE_MODES = ["static"] + (["view", "html"] if MYRIAD_BIN else [])

_cleanups = []
_tmp_root = None
_counter = itertools.count()


def _tmp():
    global _tmp_root
    if _tmp_root is None:
        _tmp_root = Path(tempfile.mkdtemp(prefix="myriad-viewer-test-"))
        _cleanups.append(lambda: shutil.rmtree(_tmp_root, ignore_errors=True))
    return _tmp_root


class _QuietHandler(http.server.SimpleHTTPRequestHandler):
    def log_message(self, *args):
        pass


_static_server = None


def _static_root():
    """One http.server for the session, over a temp root; each replay gets a subfolder."""
    global _static_server
    if _static_server is None:
        root = _tmp() / "static"
        root.mkdir()
        handler = functools.partial(_QuietHandler, directory=str(root))
        server = http.server.ThreadingHTTPServer(("127.0.0.1", 0), handler)
        threading.Thread(target=server.serve_forever, daemon=True).start()
        _cleanups.append(server.server_close)
        _cleanups.append(server.shutdown)
        _static_server = (server, root)
    return _static_server


def _serve_static(replay_path):
    server, root = _static_root()
    site = root / f"site{next(_counter)}"
    shutil.copytree(VIEWER_DIR, site, ignore=shutil.ignore_patterns("vendor"))
    (site / "vendor").mkdir()
    for name, src in VENDOR_FILES.items():
        shutil.copy(src, site / "vendor" / name)
    if replay_path is not None:
        shutil.copy(replay_path, site / "replay")
    return f"http://127.0.0.1:{server.server_address[1]}/{site.name}/index.html"


def _myriad_unsupported(out):
    return re.search(r"unknown|unrecognized|invalid|usage", out, re.I) is not None


def _serve_view(replay_path):
    proc = subprocess.Popen([MYRIAD_BIN, "view", str(replay_path), "--port", "0"],
                            stdout=subprocess.PIPE, stderr=subprocess.STDOUT, text=True)
    _cleanups.append(lambda: (proc.kill(), proc.wait()))
    lines = []
    timer = threading.Timer(30, proc.kill)
    timer.start()
    try:
        for line in proc.stdout:
            lines.append(line)
            m = re.search(r"http://127\.0\.0\.1:\d+/", line)
            if m:
                # Keep draining the output so the server never blocks on a full pipe.
                threading.Thread(target=proc.stdout.read, daemon=True).start()
                return m.group(0)
    finally:
        timer.cancel()
    out = "".join(lines)
    if _myriad_unsupported(out):
        pytest.skip(f"`myriad view` unavailable: {out.strip()[:300]}")
    raise RuntimeError(f"`myriad view` printed no URL: {out[:2000]}")


def _serve_html(replay_path):
    out_html = _tmp() / f"page{next(_counter)}.html"
    r = subprocess.run([MYRIAD_BIN, "view", str(replay_path), "--html", str(out_html)],
                       capture_output=True, text=True, timeout=120)
    if r.returncode != 0:
        out = r.stdout + r.stderr
        if _myriad_unsupported(out):
            pytest.skip(f"`myriad view --html` unavailable: {out.strip()[:300]}")
        raise RuntimeError(f"`myriad view --html` failed ({r.returncode}): {out[:2000]}")
    return out_html.as_uri()


_SERVERS = {"static": _serve_static, "view": _serve_view, "html": _serve_html}


def serve_viewer(replay_path, mode="static"):
    """URL of a page showing replay_path in the viewer, served the given way."""
    if mode != "static" and not MYRIAD_BIN:
        pytest.skip(f"serving mode {mode!r} needs MYRIAD_BIN")
    return _SERVERS[mode](replay_path)


@pytest.fixture(scope="session", autouse=True)
def _cleanup_servers():
    yield
    while _cleanups:
        try:
            _cleanups.pop()()
        except Exception:
            pass


# ---------------------------------------------------------------------------------------------
# Replays
# ---------------------------------------------------------------------------------------------

@pytest.fixture(scope="session")
def replay_dir(tmp_path_factory):
    return tmp_path_factory.mktemp("replays")


@pytest.fixture(scope="session")
def make_replay(replay_dir):
    """make_replay(name, **kw) -> path of a sample replay (cached per name)."""
    cache = {}

    def make(name, **kw):
        if name not in cache:
            path = replay_dir / f"{name}.replay"
            sample_replay.write_replay(path, **kw)
            cache[name] = path
        return cache[name]

    return make


def train_and_record(tmp_path_factory, name, config, *overrides):
    """Trains briefly with the real binary and returns the run's eval.replay (eval.record)."""
    if not MYRIAD_BIN:
        pytest.skip("MYRIAD_BIN not set")
    run = tmp_path_factory.mktemp(name) / "run"
    r = subprocess.run([MYRIAD_BIN, "train", str(SOURCE_DIR / "configs" / config), "--out",
                        str(run), "env.device=cpu", "run.eval_episodes=0", "eval.record=true",
                        *overrides], capture_output=True, text=True, timeout=300)
    assert r.returncode == 0, r.stdout[-2000:] + r.stderr[-2000:]
    return run / "eval.replay"


@pytest.fixture(scope="session")
def recorded_replay(tmp_path_factory):
    """A CartPole replay recorded by the real binary (4 envs, one episode each)."""
    return train_and_record(tmp_path_factory, "cartpole", "cartpole_ppo.yaml",
                            "run.total_env_steps=8192", "eval.record_envs=4")


@pytest.fixture(scope="session")
def recorded_quadruped(tmp_path_factory):
    """A rigid-body replay recorded by the real binary: MJCF-v0 on the quadruped model."""
    return train_and_record(tmp_path_factory, "quadruped", "pendulum_ppo.yaml", "env.id=MJCF-v0",
                            f"env.xml={SOURCE_DIR / 'physics' / 'models' / 'quadruped.xml'}",
                            "env.num_envs=4", "ppo.num_steps=16", "run.total_env_steps=128",
                            "env.options.max_episode_steps=150",
                            "env.options.reset_noise_scale=0.2", "eval.record_envs=3")


@pytest.fixture(scope="session")
def recorded_mesh_pendulum(tmp_path_factory):
    """A replay of an MJCF model whose bob is a mesh (format 1.1 meshes)."""
    return train_and_record(tmp_path_factory, "mesh", "pendulum_ppo.yaml", "env.id=MJCF-v0",
                            f"env.xml={SOURCE_DIR / 'physics' / 'models' / 'mesh_pendulum.xml'}",
                            "env.num_envs=4", "ppo.num_steps=16", "run.total_env_steps=128",
                            "env.options.max_episode_steps=50", "eval.record_envs=2")


# ---------------------------------------------------------------------------------------------
# Browser
# ---------------------------------------------------------------------------------------------

@pytest.fixture(scope="module")
def browser():
    from playwright.sync_api import sync_playwright

    with sync_playwright() as p:
        b = p.chromium.launch(executable_path=CHROMIUM,
                              args=["--use-angle=swiftshader", "--enable-unsafe-swiftshader"])
        yield b
        b.close()


@pytest.fixture(params=SERVE_MODES)
def serve_mode(request):
    return request.param
