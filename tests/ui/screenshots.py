"""Screenshots of each notebook's main explorer, as JupyterLab shows it, for the README.

Run: ``python tests/ui/screenshots.py [--out images] [--present] [NOTEBOOK ...]`` (needs Chromium, see
conftest.py). With ``--present`` it shows the classroom view instead: a 1280×720 window, JupyterLab's
View > Presentation Mode, the file browser closed and ``helpers.presentation(True)``, the main explorer
scrolled to the top; the whole window is saved as ``<out>/presentation-<notebook stem>.png``.
For every notebook (default: the lesson notebook of every registered explorer, ``lab.lesson_notebooks``)
that has an ``.attn-explorer``,
it runs all cells in headless Chromium and saves an element screenshot of the output area of its main
explorer (the one with the most sliders; the first of those) to ``<out>/screenshot-<notebook stem>.png``.
Names are stable, so a rerun replaces the files.
Images wider than ``--max-width`` pixels are scaled down (Pillow, Lanczos) to keep them modest.
"""

from __future__ import annotations

import argparse
import io
import sys
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent))

import lab  # noqa: E402

# explorer kind (of helpers.explorers.REGISTRY; tests/test_registry.py checks) -> (scalar slider, arrow presses):
# the state a screenshot shows instead of the start state
SHOW_STATE = {
    "overflow": ("magnitude", 13),  # m = 0.65: float16's naive softmax has turned NaN
    "generation": ("step", 5),  # step 6: the query of 'it' finds 'cat' over six cached keys and values
    "induction": ("step", 60),  # step 600: both layers learned (layer 2 on the induction stripe)
}


def shoot(page, out: Path, max_width: int) -> tuple[int, int] | None:
    """Screenshot of the main explorer's output area to ``out``; its (width, height), or None if none."""
    explorers = lab.explorers(page)
    if explorers.count() == 0:
        return None
    n_sliders = [explorers.nth(k).locator(".attn-slider").count() for k in range(explorers.count())]
    main = explorers.nth(n_sliders.index(max(n_sliders)))
    name, presses = SHOW_STATE.get(lab.explorer_kind(main), ("", 0))
    if presses:  # move a scalar slider as a person would, to show the explorer where it teaches most
        slider = main.locator(f".attn-slider--{name}").first
        handle = slider.locator(".noUi-handle").first
        handle.focus()
        for _ in range(presses):
            handle.press("ArrowRight")
        target = float(slider.locator(".widget-readout").inner_text())
        page.wait_for_function(  # the readout shows the final state and every heatmap image has loaded
            """([root, name, target]) => {
              const el = root.querySelector('.attn-readout [data-state]');
              const state = el && JSON.parse(el.getAttribute('data-state'));
              return state && Math.abs(state.inputs[name] - target) < 1e-9;
            }""",
            arg=[main.element_handle(), name, target],
            timeout=30_000,
        )
    area = main.locator("xpath=ancestor::div[contains(@class, 'jp-OutputArea-output')][1]")
    target = area if area.count() else main
    page.mouse.move(0, 0)  # no hover highlight
    page.evaluate("() => document.activeElement?.blur()")  # no focus ring, no caret
    # the notebook scrolls inside Lab's panel, under fixed menus: put the area at the top of that panel
    # (the page is tall enough for the whole area, see main) so nothing overlaps it
    target.evaluate("el => el.scrollIntoView({block: 'start'})")
    png = target.screenshot(animations="disabled", caret="hide")
    from PIL import Image

    img = Image.open(io.BytesIO(png))
    if img.width > max_width:
        img = img.resize((max_width, round(img.height * max_width / img.width)), Image.Resampling.LANCZOS)
    out.parent.mkdir(parents=True, exist_ok=True)
    img.save(out, optimize=True)
    return img.size


def present(page, out: Path) -> tuple[int, int] | None:
    """The classroom view of the main explorer at 1280×720 (see the module docstring) to ``out``."""
    explorers = lab.explorers(page)
    if explorers.count() == 0:
        return None
    n_sliders = [explorers.nth(k).locator(".attn-slider").count() for k in range(explorers.count())]
    main = explorers.nth(n_sliders.index(max(n_sliders)))
    lab.run_in_kernel(page, "import helpers; helpers.presentation(True)")
    lab.presentation_mode(page)
    page.wait_for_function(lab.JS_PRESENTING,
                           arg=main.element_handle())
    page.mouse.move(0, 0)
    main.evaluate("el => el.scrollIntoView({block: 'start'})")
    page.wait_for_timeout(300)  # let the scroll settle before the picture
    out.parent.mkdir(parents=True, exist_ok=True)
    page.screenshot(path=str(out), animations="disabled", caret="hide")
    return 1280, 720


def main(argv: list[str] | None = None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("notebooks", nargs="*", type=Path, help="notebooks (default: those of the explorers' lessons)")
    ap.add_argument("--out", type=Path, default=lab.REPO / "images", help="output folder (default images/)")
    ap.add_argument(
        "--max-width", type=int, default=1000, help="scale wider screenshots down (default 1000 px)"
    )
    ap.add_argument("--present", action="store_true", help="classroom view at 1280x720 instead")
    args = ap.parse_args(argv)
    notebooks = [p.resolve() for p in args.notebooks] or sorted(set(lab.lesson_notebooks().values()))
    if lab.find_chromium() is None:
        print(lab.INSTALL_HINT, file=sys.stderr)
        return 2
    with lab.lab_and_browser() as (server, browser):
        for nb in notebooks:
            page = lab.new_page(browser, width=1280 if args.present else 1200, height=720 if args.present else 2400)
            try:
                lab.run_notebook(page, server, nb)
                found = lab.problems(page)
                if found:  # the explorer may still be fine: shoot it, warn, and let `pytest tests/ui` judge
                    print(f"# warning: {nb.name} has problems: {found[0][:300]}", file=sys.stderr)
                if args.present:
                    out = args.out / f"presentation-{nb.stem}.png"
                    size = present(page, out)
                else:
                    out = args.out / f"screenshot-{nb.stem}.png"
                    size = shoot(page, out, args.max_width)
                print(f"{nb.name}: no explorer" if size is None else f"{out} {size[0]}x{size[1]}")
            finally:
                page.context.close()
    return 0


if __name__ == "__main__":
    sys.exit(main())
