"""Screenshots of the three example HTML reports shown in the README (docs/images/*.png).

    python -m tools.screenshots

Writes the reports of ``rigcheck check home-2x3090 qwen-1.8b-law-lora``, ``rigcheck estimate
qwen-1.8b-law-lora --rig home-2x3090`` and ``rigcheck plan llama-2-7b-sft-lora`` as HTML into a
temporary folder and photographs each in headless Chromium.
"""

from __future__ import annotations

import contextlib
import io
import os
import sys
import tempfile
from pathlib import Path

REPO = Path(__file__).resolve().parents[1]
IMAGES = REPO / "docs" / "images"
REPORTS = {
    "check": ["check", "home-2x3090", "qwen-1.8b-law-lora"],
    "estimate": ["estimate", "qwen-1.8b-law-lora", "--rig", "home-2x3090"],
    "plan": ["plan", "llama-2-7b-sft-lora", "--no-references"],
}


def write_reports(folder: Path) -> dict[str, Path]:
    from rigcheck.cli import main

    os.environ["RIGCHECK_DISABLE_PLUGIN_AUTOLOAD"] = "1"  # the demo environment's view: built-ins only
    pages = {}
    old = os.getcwd()
    os.chdir(REPO)
    try:
        for name, args in REPORTS.items():
            page = folder / f"{name}.html"
            with contextlib.redirect_stdout(io.StringIO()):
                main([*args, "-f", "html", "-o", str(page)])
            pages[name] = page
    finally:
        os.chdir(old)
    return pages


def main() -> int:
    sys.path.insert(0, str(REPO))
    from tools.browser import run

    IMAGES.mkdir(parents=True, exist_ok=True)
    with tempfile.TemporaryDirectory() as folder:
        for name, page in write_reports(Path(folder)).items():
            run(page, screenshot=IMAGES / f"{name}-report.png", width=1100, height=1400)
            print(f"wrote docs/images/{name}-report.png")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
