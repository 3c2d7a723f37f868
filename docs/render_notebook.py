"""Render the example notebook as a person would see it, under JupyterLab's light
and dark themes, and report what the browser painted.

    python docs/render_notebook.py [--notebook examples/notebook.ipynb] [--out build/notebook]
                                   [--update]

Steps: execute the notebook with the installed tvmlite (nbclient, ipykernel);
export it with nbconvert's "lab" template, which carries JupyterLab's own theme
style sheets, once per theme; open each page in headless Chromium, which
screenshots it (`<out>/notebook-<theme>.png`) and, through a script added to the
page, reports the colours it computed for every tvmlite `<pre>`: background, base
colour and the lowest WCAG contrast of any highlighted token against that
background. `--update` writes the executed notebook back, so GitHub shows
current output.

Needs `pip install nbconvert nbclient ipykernel` and a Chromium binary
(`apt-get install chromium`, or $CHROMIUM); a missing piece is named and the
script exits 2. Not part of the test suite: browsers are not a dependency.
"""

from __future__ import annotations

import argparse
import json
import os
import re
import shutil
import subprocess
import sys
import tempfile
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
THEMES = ("light", "dark")

# Runs in the page: the colours Chromium computed for each tvmlite block, written
# into the DOM that --dump-dom prints.
PROBE = """
<script>
window.addEventListener("load", () => {
  function rgb(text) { return text.match(/[0-9.]+/g).slice(0, 3).map(Number); }
  function lum(c) {
    const l = c.map(v => {
      v /= 255;
      return v <= 0.04045 ? v / 12.92 : ((v + 0.055) / 1.055) ** 2.4;
    });
    return 0.2126 * l[0] + 0.7152 * l[1] + 0.0722 * l[2];
  }
  function contrast(a, b) {
    const [x, y] = [lum(a), lum(b)].sort((p, q) => q - p);
    return (x + 0.05) / (y + 0.05);
  }
  const blocks = [...document.querySelectorAll(".tvmlite-script pre")].map(pre => {
    const style = getComputedStyle(pre);
    const bg = rgb(style.backgroundColor);
    let worst = contrast(rgb(style.color), bg);
    for (const span of pre.querySelectorAll("span")) {
      worst = Math.min(worst, contrast(rgb(getComputedStyle(span).color), bg));
    }
    return {background: style.backgroundColor, color: style.color, min_contrast: worst};
  });
  const page = getComputedStyle(document.body).backgroundColor;
  const out = document.createElement("script");
  out.type = "application/json";
  out.id = "tvmlite-report";
  out.textContent = JSON.stringify({page_background: page, blocks: blocks});
  document.body.appendChild(out);
});
</script>
"""


def main() -> int:
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--notebook", type=Path, default=ROOT / "examples" / "notebook.ipynb")
    ap.add_argument("--out", type=Path, default=ROOT / "build" / "notebook")
    ap.add_argument("--update", action="store_true", help="write the executed notebook back")
    args = ap.parse_args()
    try:
        import nbformat
        from nbclient import NotebookClient
        from nbconvert import HTMLExporter
    except ImportError as err:
        print(f"render_notebook: needs nbconvert, nbclient and ipykernel ({err})", file=sys.stderr)
        return 2
    browser = os.environ.get("CHROMIUM") or next(
        filter(None, map(shutil.which, ("chromium", "chromium-browser", "google-chrome"))), None
    )
    if browser is None:
        print("render_notebook: no Chromium found (apt-get install chromium)", file=sys.stderr)
        return 2

    notebook = nbformat.read(args.notebook, as_version=4)
    where = {"metadata": {"path": str(args.notebook.parent)}}
    NotebookClient(notebook, resources=where, record_timing=False).execute()
    if args.update:
        nbformat.write(notebook, args.notebook)
    args.out.mkdir(parents=True, exist_ok=True)
    for theme in THEMES:
        page, _ = HTMLExporter(template_name="lab", theme=theme).from_notebook_node(notebook)
        html_path = args.out / f"notebook-{theme}.html"
        html_path.write_text(page.replace("</body>", PROBE + "</body>"), encoding="utf-8")
        report = _render(browser, html_path, args.out / f"notebook-{theme}.png")
        print(f"{theme}: page background {report['page_background']}")
        for k, block in enumerate(report["blocks"]):
            print(
                f"  block {k}: background {block['background']}, text {block['color']}, "
                f"lowest token contrast {block['min_contrast']:.2f}"
            )
        print(f"  screenshot {args.out / f'notebook-{theme}.png'}")
    return 0


def _render(browser: str, page: Path, png: Path) -> dict:
    """Screenshot `page` and return the report its probe script wrote."""
    common = [browser, "--headless", "--no-sandbox", "--disable-gpu", "--hide-scrollbars"]
    with tempfile.TemporaryDirectory() as profile:
        common.append(f"--user-data-dir={profile}")
        url = page.resolve().as_uri()
        subprocess.run(
            [*common, f"--screenshot={png}", "--window-size=1200,1800", url],
            check=True,
            capture_output=True,
            timeout=120,
        )
        dom = subprocess.run(
            [*common, "--virtual-time-budget=5000", "--dump-dom", url],
            check=True,
            capture_output=True,
            text=True,
            timeout=120,
        ).stdout
    found = re.search(r'<script type="application/json" id="tvmlite-report">(.*?)</script>', dom)
    if found is None:
        raise SystemExit(f"render_notebook: the page {page} wrote no report")
    return json.loads(found.group(1))


if __name__ == "__main__":
    sys.exit(main())
