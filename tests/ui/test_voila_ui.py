"""The classroom view (`make present`): Voilà shows the lessons' prose, figures and live explorers, no code.

One Voilà for the module, started with ``voila.PRESENT_ARGS`` (what `make present` runs) on a copy of
notebooks/, in headless Chromium:
- its file list (the page `make present` prints) lists every lesson notebook, and clicking one opens it;
  it does not list solutions/, and a solution's page answers 404 without starting a kernel;
- nothing on the file list or a notebook's page is requested from another machine (no CDN);
- for 00 and 02 (Voilà runs the whole notebook on every page load, so only these two):
  no code cell shows its source; the prose (every heading) and every figure are there; nothing failed;
  each explorer answers an arrow key on a slider, and the numbers printed in its heatmaps equal what
  helpers.attention computes for the state its readout reports (its data-state JSON), before and after,
  and the heatmaps are updated in place (the same table and cell nodes; only changed cells touched);
  a prediction's answer (an output stored with outputs_hidden) is in a closed box until clicked;
- the server listens on 127.0.0.1 only; without the token a page asks for it and runs nothing;
  its kernels are gone after stop();
- the Makefile's `present` target runs Voilà with PRESENT_ARGS and PRESENT_ENV;
- solutions/' own file list (/voila/tree/solutions, typed by hand) answers 404 and names no solution;
- accessibility: axe-core (WCAG 2.1 A and AA) finds nothing on the pages of the lessons lab.EVERY_CLIENT names
  (every lesson with ATTN_UI_ALL=1; the classroom view is all ours: template, prose, figures, explorers), each
  opened at its address and its explorers drawn;
- JupyterLab's own Voilà (the server extension, /voila/render/ of `make lab`, in lab.LabServer): a page
  loads nothing from another machine, typesets its formulas, keeps answers closed, and solutions/' page
  and file list answer 404.

Run: `pytest tests/ui/test_voila_ui.py` (needs Chromium, see conftest.py).
"""

from __future__ import annotations

import ipaddress
import json
import os
import shlex
import shutil
import socket
import subprocess
import sys
import urllib.error
import urllib.parse
import urllib.request
from pathlib import Path

import expected as exp
import lab
import numpy as np
import pytest
import voila

pytestmark = pytest.mark.ui

LESSONS = [p for p in lab.notebook_paths() if "solutions" not in p.relative_to(lab.NOTEBOOKS).parts]
PAGES = ["00-start-here.ipynb", "02-query-key-value.ipynb"]  # the smallest, and one with two explorers

_JS_PROBLEMS = """() => {
  const found = [];
  for (const o of document.querySelectorAll('.jp-OutputArea-output')) {
    const mime = o.getAttribute('data-mime-type'), text = o.innerText;
    if (mime === 'application/vnd.jupyter.stderr' && /Traceback|\\w+(Error|Exception)\\b/.test(text))
      found.push('error output: ' + text.slice(-1500));
    if (/There was an error when executing cell|Error displaying widget|Loading widget\\.\\.\\./.test(text))
      found.push(text.trim().slice(0, 500));
  }
  for (const img of document.querySelectorAll('.jp-OutputArea-output img, .jp-RenderedMarkdown img'))
    if (!img.complete || img.naturalWidth === 0) found.push('figure not shown: ' + img.src.slice(0, 80));
  for (const h of document.querySelectorAll('.attn-heatmap'))
    if (!h.querySelector('table.attn-hm td')) found.push('a heatmap shows no table');
  return found;
}"""


def _cells(notebook, kind: str) -> list[str]:
    cells = json.loads(notebook.read_text(encoding="utf-8"))["cells"]
    return ["".join(c["source"]) for c in cells if c["cell_type"] == kind]


def _hidden_answers(notebook) -> list[int]:
    """Indices of the code cells stored with outputs_hidden (a prediction's answer) that have outputs."""
    cells = json.loads(notebook.read_text(encoding="utf-8"))["cells"]
    return [i for i, c in enumerate(cells) if c["metadata"].get("jupyter", {}).get("outputs_hidden") and c["outputs"]]


def _alive(pid: int) -> bool:
    """``pid`` runs (a zombie, dead but not yet reaped, does not count)."""
    try:
        os.kill(pid, 0)
    except ProcessLookupError:
        return False
    except PermissionError:
        return True
    stat = Path(f"/proc/{pid}/stat")
    try:
        return stat.read_text().rsplit(")", 1)[1].split()[0] != "Z"
    except (OSError, IndexError):
        return True  # no /proc (macOS): os.kill said it exists


def _proc_net_address(hex_addr: str) -> str:
    """An address of /proc/net/tcp{,6} (32-bit words in host byte order) as text."""
    raw = bytes.fromhex(hex_addr)
    if sys.byteorder == "little":
        raw = b"".join(raw[i : i + 4][::-1] for i in range(0, len(raw), 4))
    return str(ipaddress.ip_address(raw))


def _listening_addresses(port: int) -> set[str]:
    """Local addresses with a listening TCP socket on ``port`` (Linux /proc/net; else psutil)."""
    tables = [Path("/proc/net/tcp"), Path("/proc/net/tcp6")]
    if tables[0].exists():
        found = set()
        for table in (t for t in tables if t.exists()):
            for line in table.read_text().splitlines()[1:]:
                local, state = line.split()[1], line.split()[3]
                addr, _, hex_port = local.partition(":")
                if state == "0A" and int(hex_port, 16) == port:  # 0A = LISTEN
                    found.add(_proc_net_address(addr))
        return found
    psutil = pytest.importorskip("psutil", reason="no /proc/net/tcp and no psutil to list listening sockets")
    return {
        c.laddr.ip for c in psutil.net_connections("tcp") if c.status == "LISTEN" and c.laddr.port == port
    }


def _other_addresses() -> set[str]:
    """This machine's addresses other than loopback and link-local (those need a scope id)."""
    found = set()
    try:
        import psutil

        found = {
            a.address
            for addrs in psutil.net_if_addrs().values()
            for a in addrs
            if a.family in (socket.AF_INET, socket.AF_INET6)
        }
    except ImportError:
        try:
            found = {info[4][0] for info in socket.getaddrinfo(socket.gethostname(), None)}
        except OSError:
            pass
    good = set()
    for a in found:
        try:
            ip = ipaddress.ip_address(a.split("%")[0])
        except ValueError:
            continue
        if not (ip.is_loopback or ip.is_link_local or ip.is_unspecified):
            good.add(str(ip))
    return good


@pytest.fixture(scope="module")
def voila_server(browser):
    """Voilà with PRESENT_ARGS on a copy of notebooks/; its kernels must be gone once it is stopped."""
    server = voila.VoilaServer(lab.NOTEBOOKS)
    try:
        server.start()
        yield server
    finally:
        server.stop()
    left = [pid for pid in server.kernels_seen if _alive(pid)]
    assert not left, f"kernels still running after VoilaServer.stop(): {left}"


def _file_list(page):
    """The names Voilà's file list at / links to (the page `make present` prints the address of)."""
    return page.locator(".voila-notebooks li a").all_inner_texts()


def _open_from_tree(browser, server, name: str):
    """The file list, then a click on ``name``, as a teacher would; returns the tab Voilà opens."""
    page = lab.new_page(browser)
    try:
        page.goto(server.tree_url)
        link = page.locator(".voila-notebooks li a", has_text=name)
        assert link.count() == 1, f"Voilà's file list has {link.count()} links to {name}: {_file_list(page)}"
        with page.context.expect_page() as opened:
            link.click()
    except BaseException:
        page.context.close()
        raise
    page.close()
    return opened.value


@pytest.fixture(scope="module", params=PAGES)
def shown(request, browser, voila_server):
    """(notebook, page): the notebook opened from Voilà's file list, its explorers drawn (a name of PAGES,
    or of any lesson where a test parametrizes it so)."""
    notebook = lab.NOTEBOOKS / request.param
    assert notebook in LESSONS, f"{request.param} is not a lesson under {lab.NOTEBOOKS}"
    page = _open_from_tree(browser, voila_server, request.param)
    try:
        # Voilà runs the whole notebook before it sends the page
        page.wait_for_load_state("domcontentloaded", timeout=4 * lab.TIMEOUT_MS)
        try:
            page.locator(".attn-explorer .attn-heatmap table.attn-hm").first.wait_for(timeout=lab.TIMEOUT_MS)
        except Exception:  # noqa: BLE001 - the tests report what the page shows instead
            pass
        yield notebook, page
    finally:
        page.context.close()


def test_the_file_list_shows_every_lesson(browser, voila_server):
    page = lab.new_page(browser)
    try:
        page.goto(voila_server.tree_url)
        listed = [name.strip() for name in _file_list(page)]
        missing = [p.name for p in LESSONS if p.name not in listed]
        assert not missing, f"Voilà's file list at / lacks {missing}; it lists {listed}"
    finally:
        page.context.close()


def test_the_file_list_loads_nothing_from_outside_and_hides_the_solutions(browser, voila_server):
    page = lab.new_page(browser)
    try:
        page.goto(voila_server.tree_url, wait_until="load")
        listed = [name.strip() for name in _file_list(page)]
        assert listed, "Voilà's file list is empty"
        outside = lab.outside_requests(page)
    finally:
        page.context.close()
    assert "solutions" not in listed, f"Voilà's file list shows the worked solutions: {listed}"
    assert not outside, f"Voilà's file list requested URLs from other machines: {sorted(set(outside))}"


def test_a_solution_page_does_not_render(voila_server):
    """A class cannot open a worked solution by its address either, and no kernel runs it."""
    solutions = [p for p in lab.notebook_paths() if "solutions" in p.relative_to(lab.NOTEBOOKS).parts]
    assert solutions, f"no notebooks under {lab.NOTEBOOKS / 'solutions'} to try"
    before = set(voila_server.kernel_pids())
    url = voila_server.url(solutions[0])
    try:
        with urllib.request.urlopen(url, timeout=60) as resp:
            status, body = resp.status, resp.read().decode(errors="replace")
    except urllib.error.HTTPError as err:
        status, body = err.code, ""
    started = set(voila_server.kernel_pids()) - before
    assert status == 404, f"{solutions[0].name} in Voilà: HTTP {status}, not 404; the page begins {body[:300]!r}"
    assert not started, f"opening {solutions[0].name} started kernels {sorted(started)}"


SOLUTIONS = [p for p in lab.notebook_paths() if "solutions" in p.relative_to(lab.NOTEBOOKS).parts]


def _get(url: str, timeout: float = 120) -> tuple[int, str]:
    """(HTTP status, body) of a GET, errors included."""
    try:
        with urllib.request.urlopen(url, timeout=timeout) as resp:
            return resp.status, resp.read().decode(errors="replace")
    except urllib.error.HTTPError as err:
        return err.code, err.read().decode(errors="replace")


def test_the_solutions_folder_page_lists_nothing(voila_server):
    """The file list of solutions/ itself, its address typed by hand (/voila/tree/solutions), answers 404
    and names no solution: hiding the folder from the list at / is not enough."""
    assert SOLUTIONS, f"no notebooks under {lab.NOTEBOOKS / 'solutions'} to look for"
    status, body = _get(f"{voila_server.base_url}/voila/tree/solutions{voila_server._query}")
    named = [p.name for p in SOLUTIONS if p.stem in body]
    assert not named, f"Voilà's /voila/tree/solutions (HTTP {status}) names {len(named)} solutions: {named[:3]}"
    assert status == 404, f"Voilà's /voila/tree/solutions: HTTP {status}, not 404; the page begins {body[:300]!r}"


def test_opened_from_the_file_list_at_its_own_address(shown, voila_server):
    notebook, page = shown
    assert page.url == voila_server.url(notebook), f"clicking {notebook.name} opened {page.url}"


def test_no_code_is_shown(shown):
    notebook, page = shown
    code_cells = page.locator(".jp-CodeCell")
    assert code_cells.count() == len(_cells(notebook, "code")), (
        f"{notebook.name}: Voilà shows {code_cells.count()} code cells, the notebook has "
        f"{len(_cells(notebook, 'code'))}"
    )
    editors = page.locator(
        ".jp-CodeCell .jp-InputArea, .jp-InputArea-editor, .jp-CodeMirrorEditor, .cm-editor"
    )
    assert editors.count() == 0, f"{notebook.name}: {editors.count()} code inputs or editors on the page"
    # a comment line is only ever in code, never in prose or output: none may be on the page
    text = page.locator("body").inner_text()
    comments = {line.strip() for src in _cells(notebook, "code") for line in src.splitlines()}
    comments = {c for c in comments if c.startswith("#") and len(c) > 12}
    assert comments, f"{notebook.name}: no comment lines in its code to look for"
    seen = sorted(c for c in comments if c in text)
    assert not seen, f"{notebook.name}: code is visible in Voilà: {seen[:5]}"


def test_the_prose_and_figures_are_shown(shown):
    notebook, page = shown
    markdown = _cells(notebook, "markdown")
    assert page.locator(".jp-MarkdownCell .jp-RenderedMarkdown").count() == len(markdown), (
        f"{notebook.name}: {page.locator('.jp-MarkdownCell').count()} prose cells shown, the notebook has "
        f"{len(markdown)}"
    )
    headings = [
        line.lstrip("#").strip() for src in markdown for line in src.splitlines() if line.startswith("#")
    ]
    shown_headings = [h.strip().rstrip("¶").strip() for h in page.locator("h1, h2, h3, h4").all_inner_texts()]
    missing = [h for h in headings if not any(h.replace("`", "") in s for s in shown_headings)]
    assert headings and not missing, (
        f"{notebook.name}: headings not shown: {missing}; shown: {shown_headings}"
    )
    cells = json.loads(notebook.read_text(encoding="utf-8"))["cells"]
    stored_figures = sum("image/png" in o.get("data", {}) for c in cells for o in c.get("outputs", []))
    figures = page.locator(".jp-OutputArea-output img")
    assert figures.count() >= stored_figures, (
        f"{notebook.name}: {figures.count()} figures shown, the stored notebook has {stored_figures}"
    )
    found = page.evaluate(_JS_PROBLEMS)
    assert not found, f"{notebook.name} in Voilà:\n" + "\n".join(found)


_JS_STATE = "root => root.querySelector('.attn-readout [data-state]')?.getAttribute('data-state')"


def _check_numbers(explorer, where: str) -> tuple[dict, list[list[str]]]:
    """data-state and the heatmaps' printed numbers == helpers.attention for the reported inputs."""
    state = lab.read_state(explorer)
    assert "error" not in state, f"{where}: the explorer refused its state: {state['error']}"
    want = exp.expected(state)
    np.testing.assert_allclose(
        exp.number_array(state["weights"]), want.weights, rtol=0, atol=1e-9,
        err_msg=f"{where}: data-state weights differ from helpers.attention (atol 1e-9)",
    )  # fmt: skip
    shown = lab.heatmap_cells(explorer)
    wanted = exp.cell_texts(want.tables)
    assert shown == wanted, (
        f"{where}: the heatmaps print\n  {shown}\nbut helpers.attention gives\n  {wanted}\n"
        f"for inputs {state['inputs']}"
    )
    return state, shown


def test_explorers_answer_an_arrow_key_with_the_helpers_numbers(shown):
    from playwright.sync_api import TimeoutError as PlaywrightTimeout

    notebook, page = shown
    explorers = page.locator(".attn-explorer")
    assert explorers.count() > 0, (
        f"{notebook.name} shows no .attn-explorer in Voilà: no live sliders to project"
    )
    for i in range(explorers.count()):
        explorer = explorers.nth(i)
        where = f"{notebook.name} in Voilà, explorer {i} ({lab.explorer_kind(explorer)})"
        state0, shown0 = _check_numbers(explorer, where + " before the key press")
        text0 = lab.heatmap_text(explorer)
        raw0 = explorer.evaluate(_JS_STATE)
        lab.mark_heatmaps(explorer)
        if explorer.locator(".attn-slider:visible").count():
            slider = lab.pick_slider(explorer)
            handle = slider.locator(".noUi-handle").first
            handle.scroll_into_view_if_needed()
            key = lab.move_slider(handle)
            label = f"{where}: {key} on {slider.get_attribute('class')}"
        else:  # a grid of on/off cells (a mask): click the first one, as a person would
            toggle = explorer.locator(".attn-toggle").first
            assert toggle.count(), f"{where}: no visible .attn-slider and no .attn-toggle to act on"
            toggle.click()
            label = f"{where}: click on {toggle.get_attribute('class')}"
        # the numbers printed in the heatmaps change, and the readout's data-state with them (two messages)
        changes = {
            "the heatmap numbers": (f"([root, old]) => ({lab._JS_HEATMAP_TEXT})(root) !== old", text0),
            "the readout's data-state": (f"([root, old]) => ({_JS_STATE})(root) !== old", raw0),
        }
        for what, (js, old) in changes.items():
            try:
                page.wait_for_function(js, arg=[explorer.element_handle(), old], timeout=30_000)
            except PlaywrightTimeout:
                pytest.fail(f"{label}: {what} did not change within 30 s", pytrace=False)
        report = lab.in_place_report(explorer)
        state1, shown1 = _check_numbers(explorer, label)
        assert state1["inputs"] != state0["inputs"], f"{label}: data-state inputs did not change"
        assert shown1 != shown0, f"{label}: the heatmaps' numbers did not change ({shown0})"
        assert report["sameLayout"], f"{label}: the tables changed shape or labels: {report}"
        lab.assert_updated_in_place(report, label)  # the same nodes, only the changed cells touched


_JS_ANSWERS = """() => [...document.querySelectorAll('details.attn-hidden-output')].map(d => ({
  open: d.open,
  outputs: d.querySelectorAll('.jp-OutputArea-output').length,
  visible: [...d.querySelectorAll('.jp-OutputArea-output')].filter(o => o.checkVisibility()).length,
}))"""


def test_answers_stay_closed_until_clicked(shown):
    """Voilà runs every cell before the page shows, so a prediction's answer has its output at once: it
    sits in a closed box (the notebook's outputs_hidden, as JupyterLab shows it collapsed) until clicked."""
    notebook, page = shown
    hidden = _hidden_answers(notebook)
    boxes = page.evaluate(_JS_ANSWERS)
    assert len(boxes) == len(hidden), (
        f"{notebook.name}: {len(hidden)} answers stored hidden (cells {hidden}), {len(boxes)} closed boxes in Voilà"
    )
    shown_at_once = [b for b in boxes if b["open"] or b["visible"] or not b["outputs"]]
    assert not shown_at_once, f"{notebook.name}: answers open, visible or empty on load: {shown_at_once}"
    summary = page.locator("details.attn-hidden-output > summary").first
    summary.scroll_into_view_if_needed()
    summary.click()
    first = page.evaluate(_JS_ANSWERS)[0]
    assert first["open"] and first["visible"] == first["outputs"], (
        f"{notebook.name}: a click did not show the answer: {first}")
    summary.click()  # closed again, for the tests after this one


# The pages of lab.EVERY_CLIENT (every lesson with ATTN_UI_ALL=1), once each (`shown`, 00 and 02 included: the tests
# above use those two). Every lesson's content is also checked by axe in JupyterLab and on its exported page.
@pytest.mark.parametrize("shown", [p.name for p in LESSONS if lab.in_every_client(p)], indirect=True)
def test_axe_finds_nothing_in_the_classroom_view(shown):
    """WCAG 2.1 A and AA, by axe-core: every control named, every figure described, contrast, structure."""
    notebook, page = shown
    found = lab.axe(page)
    assert not found, (f"{notebook.name} in the classroom view, axe-core: {lab.axe_counts(found)}\n"
                       + lab.axe_report(found))


# Defined after the tests that use `shown`, so that it sees every request they caused.
def test_nothing_is_loaded_from_outside_this_machine(shown):
    """The file list, the notebook's page, its explorers and their slider moves requested nothing from any
    host but the Voilà server (Voilà's default templates load Font Awesome from a public CDN)."""
    notebook, page = shown
    outside = lab.outside_requests(page)
    assert not outside, (
        f"{notebook.name} in Voilà requested {len(outside)} URLs from other machines: {sorted(set(outside))[:10]}"
    )


def test_listens_on_127_0_0_1_only(voila_server):
    listening = _listening_addresses(voila_server.port)
    assert listening == {"127.0.0.1"}, f"Voilà listens on {sorted(listening)} port {voila_server.port}"
    # and from the machine's other addresses (if it has any) nothing answers on that port
    for address in sorted(_other_addresses()):
        family = socket.AF_INET6 if ":" in address else socket.AF_INET
        with socket.socket(family, socket.SOCK_STREAM) as s:
            s.settimeout(2)
            answered = s.connect_ex((address, voila_server.port)) == 0
        assert not answered, f"Voilà answers on {address}:{voila_server.port}, not only on 127.0.0.1"


def test_without_the_token_no_notebook_runs(voila_server):
    """Another page in the teacher's browser, or another user of the machine, cannot start kernels."""
    assert voila_server.token, "Voilà printed no token in its URL"
    before = set(voila_server.kernel_pids())
    url = f"{voila_server.base_url}/voila/render/{LESSONS[0].name}"
    with urllib.request.urlopen(url, timeout=30) as resp:  # follows the redirect
        landed = urllib.parse.urlsplit(resp.url).path
    assert landed == "/login", f"{url} without the token was answered at {landed}, not /login"
    started = set(voila_server.kernel_pids()) - before
    assert not started, f"a request without the token started kernels {sorted(started)}"


def test_make_present_runs_voila_with_present_args():
    make = shutil.which("make")
    if make is None:
        pytest.skip("no `make` on PATH")
    port = 12345
    # the defaults, not an outer make's flags or a shell's HOST (tcsh exports the host name as HOST)
    env = {k: v for k, v in os.environ.items() if k not in {"HOST", "MAKEFLAGS", "MFLAGS", "MAKELEVEL"}}
    run = subprocess.run(
        [make, "-n", "present", f"PRESENT_PORT={port}", f"PORT={port}"],
        cwd=lab.REPO, env=env, capture_output=True, text=True, timeout=60,
    )  # fmt: skip
    if "No rule to make target 'present'" in run.stderr:
        pytest.skip("the Makefile has no `present` target yet")
    assert run.returncode == 0, f"make -n present failed:\n{run.stderr}"
    commands = [shlex.split(line) for line in run.stdout.replace("\\\n", " ").splitlines() if "voila" in line]
    assert commands, f"make -n present runs no voila:\n{run.stdout}"
    argv = commands[-1]
    missing = [a for a in voila.present_args(port) if a not in argv]
    assert not missing, f"`make present` runs {argv}\nwithout {missing} (voila.PRESENT_ARGS)"
    # the environment: what the recipe line sets, over what the Makefile exports to every recipe
    printed = subprocess.run(
        [make, "--eval", "_attn_env: ; @echo JUPYTER_CONFIG_PATH=$$JUPYTER_CONFIG_PATH JUPYTER_PATH=$$JUPYTER_PATH",
         "_attn_env"],
        cwd=lab.REPO, env=env, capture_output=True, text=True, timeout=60,
    )  # fmt: skip
    voila_at = next(i for i, a in enumerate(argv) if a.endswith("voila"))
    exported = dict(a.split("=", 1) for a in printed.stdout.split() if "=" in a)
    got = {**exported, **dict(a.split("=", 1) for a in argv[:voila_at] if "=" in a)}
    wrong = {k: got.get(k) for k, v in voila.PRESENT_ENV.items() if got.get(k) != v}
    assert not wrong, f"`make present` runs Voilà with {wrong}, not as voila.PRESENT_ENV has it: {voila.PRESENT_ENV}"
    assert argv[-1].rstrip("/") == "notebooks", f"`make present` serves {argv[-1]}, not notebooks"


# JupyterLab's own Voilà: the voila package is also a server extension of `make lab` and `make notebook`
# (/voila/render/<path>, JupyterLab's "Render with Voilà" button). It reads jupyter-config/voila.py from
# JUPYTER_CONFIG_PATH and finds the template on JUPYTER_PATH, both set by the Makefile (and lab.LabServer).
# Lab only: Notebook 7 runs the same server extension with the same configuration.


def _preview_url(server, notebook) -> str:
    """``notebook``'s page in the Voilà of ``server`` (a lab.LabServer, which serves the copy's parent)."""
    rel = Path(notebook).resolve().relative_to(server.notebooks_src.resolve())
    return f"{server.base_url}/voila/render/notebooks/{urllib.parse.quote(rel.as_posix())}?token={server.token}"


@pytest.mark.parametrize("lab_server", ["lab"], indirect=True)  # one server extension, see above
def test_lab_voila_preview_loads_nothing_from_outside_and_keeps_answers_closed(lab_server, browser):
    """Voilà's default template loads Font Awesome from a public CDN and shows every answer at once, and the
    server extension loads MathJax 2 from another CDN: with jupyter-config/ this page does neither."""
    notebook = lab.NOTEBOOKS / PAGES[0]
    hidden = _hidden_answers(notebook)
    assert hidden, f"{notebook.name} stores no answer with outputs_hidden to look for"
    page = lab.new_page(browser)
    try:
        page.goto(_preview_url(lab_server, notebook), wait_until="load", timeout=4 * lab.TIMEOUT_MS)
        try:  # its widgets drawn: every request the page makes has been made
            page.locator(".jp-OutputArea-output .jupyter-widgets").first.wait_for(timeout=lab.TIMEOUT_MS)
        except Exception:  # noqa: BLE001 - _JS_PROBLEMS reports a widget that never loads
            pass
        try:  # its formulas typeset (MathJax 3, carried by Voilà's page)
            page.locator("mjx-container").first.wait_for(timeout=lab.TIMEOUT_MS)
        except Exception:  # noqa: BLE001 - counted below
            pass
        formulas = page.locator("mjx-container").count()
        problems = page.evaluate(_JS_PROBLEMS)
        boxes = page.evaluate(_JS_ANSWERS)
        opened = None
        if boxes:
            page.locator("details.attn-hidden-output > summary").first.click()
            opened = page.evaluate(_JS_ANSWERS)[0]
        outside = lab.outside_requests(page)
    finally:
        page.context.close()
    wrong = list(problems)  # every finding at once: the old configuration failed several ways
    if outside:
        wrong.append(f"requested URLs from other machines: {sorted(set(outside))[:10]}")
    if not formulas:
        wrong.append("no formula typeset (no mjx-container): MathJax did not run")
    if len(boxes) != len(hidden):
        wrong.append(f"{len(hidden)} answers stored hidden (cells {hidden}), {len(boxes)} closed boxes")
    shown_at_once = [b for b in boxes if b["open"] or b["visible"] or not b["outputs"]]
    if shown_at_once:
        wrong.append(f"answers open, visible or empty on load: {shown_at_once}")
    if opened and not (opened["open"] and opened["visible"] == opened["outputs"]):
        wrong.append(f"a click did not show the answer: {opened}")
    assert not wrong, f"{notebook.name} in JupyterLab's Voilà (/voila/render/):\n" + "\n".join(wrong)


@pytest.mark.parametrize("lab_server", ["lab"], indirect=True)  # one server extension, see above
def test_lab_voila_preview_hides_the_solutions(lab_server):
    """As in the classroom view: a solution's page and the solutions/ file list answer 404 (JupyterLab's own
    file browser still shows and opens them)."""
    assert SOLUTIONS, f"no notebooks under {lab.NOTEBOOKS / 'solutions'} to try"
    pages = {
        "a solution's page": _preview_url(lab_server, SOLUTIONS[0]),
        "the file list of solutions/": f"{lab_server.base_url}/voila/tree/notebooks/solutions?token={lab_server.token}",
    }
    answered = {what: _get(url)[0] for what, url in pages.items()}
    assert all(status == 404 for status in answered.values()), f"JupyterLab's Voilà answers {answered}, not 404"
