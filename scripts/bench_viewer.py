"""Measures the replay viewer in headless Chromium: load time of a replay, the viewer's own
JavaScript work per frame (poses, scrubber, readouts, plot cursor), the render time per frame and
the playback frame rate. Optionally saves a screenshot.

    .venv/bin/python scripts/bench_viewer.py FILE.replay [--grid] [--frame F] [--screenshot PNG]

The page is `myriad view FILE --html` (one self-contained file). Headless Chromium renders WebGL
on the CPU (SwiftShader), so render time and frame rate here are a software-rendering floor, not
what a browser with a GPU shows; the JavaScript cost per frame does not depend on the GPU.
"""
import argparse
import json
import subprocess
import sys
import tempfile
from pathlib import Path

from playwright.sync_api import sync_playwright

ROOT = Path(__file__).resolve().parents[1]

MEASURE = """async ({grid, frames}) => {
  const v = window.myriadViewer;
  v.pause();
  if (grid) v.selectEnv('all');
  const n = Math.min(frames, v.numFrames);
  let t = performance.now();
  for (let f = 0; f < n; ++f) v.setFrame(f);
  const updateMs = (performance.now() - t) / n;
  const gl = v.renderer.getContext();
  const px = new Uint8Array(4);
  t = performance.now();
  const renders = 20;
  for (let k = 0; k < renders; ++k) {
    v.setFrame((k * 37) % v.numFrames);
    v.view.render();
    gl.readPixels(0, 0, 1, 1, gl.RGBA, gl.UNSIGNED_BYTE, px);  // waits for the frame
  }
  const renderMs = (performance.now() - t) / renders;
  const fps = await v.fpsSample(2000);
  v.pause();
  return {updateMs, renderMs, fps};
}"""


def main():
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("replay")
    ap.add_argument("--bin", default=str(ROOT / "build/tools/myriad"))
    ap.add_argument("--grid", action="store_true", help="watch every env at once")
    ap.add_argument("--frame", type=int, default=None, help="frame for the screenshot")
    ap.add_argument("--screenshot", help="save a 1280x800 screenshot here")
    ap.add_argument("--follow", action="store_true",
                    help="screenshot with the camera following body 1 (locomotion)")
    ap.add_argument("--no-measure", action="store_true")
    a = ap.parse_args()
    with tempfile.TemporaryDirectory() as tmp:
        page = Path(tmp) / "page.html"
        subprocess.run([a.bin, "view", a.replay, "--html", str(page)], check=True,
                       stdout=subprocess.DEVNULL)
        with sync_playwright() as p:
            browser = p.chromium.launch(executable_path="/usr/bin/chromium",
                                        args=["--use-angle=swiftshader",
                                              "--enable-unsafe-swiftshader"])
            tab = browser.new_page(viewport={"width": 1280, "height": 800})
            tab.goto(page.as_uri())
            tab.wait_for_function("window.myriadViewer && (myriadViewer.ready || myriadViewer.error)",
                                  timeout=60000)
            info = tab.evaluate("({error: myriadViewer.error, loadMs: myriadViewer.loadMs, "
                                "timings: myriadViewer.loadTimings, frames: myriadViewer.numFrames,"
                                " envs: myriadViewer.numEnvs})")
            if info["error"]:
                sys.exit(f"viewer error: {info['error']}")
            result = {"replay": a.replay, "bytes": Path(a.replay).stat().st_size, **info}
            if not a.no_measure:
                result.update(tab.evaluate(MEASURE, {"grid": a.grid, "frames": 300}))
            if a.screenshot:
                if a.grid:
                    tab.evaluate("myriadViewer.selectEnv('all')")
                if a.follow:
                    tab.check("#follow")
                tab.evaluate(f"myriadViewer.pause(); myriadViewer.setFrame({a.frame or 0})")
                tab.wait_for_timeout(500)
                tab.screenshot(path=a.screenshot)
            browser.close()
    print(json.dumps(result, indent=1))


if __name__ == "__main__":
    main()
