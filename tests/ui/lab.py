"""Drive the notebooks in a real JupyterLab or Jupyter Notebook 7 with headless Chromium
(shared by tests, benchmark, screenshots).

Three pieces, each usable on its own:

- ``find_chromium()`` and ``LAUNCH_ARGS``: which browser to start and how (Debian's ``chromium``, as root);
- ``LabServer``: JupyterLab (``client="lab"``) or Notebook 7 (``client="notebook"``) on a free loopback
  port, with a token, its own temporary Jupyter config, runtime, settings and workspace directories,
  serving a *copy* of ``notebooks/`` (so no ``.ipynb_checkpoints`` and no change ever reaches the
  committed notebooks), with the repository's ``jupyter-config/`` on ``JUPYTER_CONFIG_PATH`` and
  ``JUPYTER_PATH`` as ``make lab`` and ``make notebook`` have it (its keyboard shortcut overrides let arrow
  keys reach a slider in Notebook 7; its Voilà uses the classroom template); ``stop()`` always ends the
  server, its kernels and its process group;
- page helpers (``open_notebook``, ``run_all``, ``problems``, ``explorers``, ``move_slider``, ...) that act
  as a person would: the menu for "Run All", the keyboard on a slider handle, and the DOM contract of
  ``helpers/explorer.py`` (``.attn-explorer``, ``.attn-slider``, ``.attn-heatmap`` tables,
  ``.attn-readout`` with a ``data-state`` element) to read what the page shows.

Playwright is imported only inside the functions that need it, so this module imports without a browser.
"""

from __future__ import annotations

import json
import os
import re
import secrets
import shutil
import signal
import socket
import subprocess
import sys
import tempfile
import time
import urllib.error
import urllib.parse
import urllib.request
from collections.abc import Iterator
from contextlib import contextmanager
from pathlib import Path

REPO = Path(__file__).resolve().parents[2]
# ATTN_UI_NOTEBOOKS points the tests at another notebooks folder (development against a scratch copy).
NOTEBOOKS = Path(os.environ.get("ATTN_UI_NOTEBOOKS", REPO / "notebooks")).resolve()
# What `make lab` / `make notebook` put on JUPYTER_CONFIG_PATH: labconfig/default_setting_overrides.json
# stops Notebook 7's command-mode arrow-key shortcuts from taking the keys of a focused slider.
# Notebook 7 and the classroom view (Voilà) share JupyterLab's notebook, widgets and explorers; what differs is their
# page (shortcuts, layout, template). CI runs every lesson in JupyterLab and these lessons in the other two, one per
# kind of control: 00 (a slider, the first page), 02 (matrix sliders on tabs), 06 (on/off mask cells), 12 (a text
# box and sliders), 13 (dropdowns and on/off heads, a 64 × 64 table). Every lesson in all three took about 4 minutes
# more; ATTN_UI_ALL=1 runs them all (`ATTN_UI_ALL=1 make test-ui`, before a release).
EVERY_CLIENT = ("00-", "02-", "06-", "12-", "13-")
ALL_LESSONS_EVERYWHERE = os.environ.get("ATTN_UI_ALL") == "1"


def in_every_client(notebook: Path) -> bool:
    """Whether Notebook 7 and Voilà run this lesson too (every lesson with ATTN_UI_ALL=1)."""
    return ALL_LESSONS_EVERYWHERE or notebook.name.startswith(EVERY_CLIENT)


# ATTN_UI_JUPYTER_CONFIG_PATH=/some/empty/dir serves without it (a check that the tests catch its absence).
JUPYTER_CONFIG = Path(os.environ.get("ATTN_UI_JUPYTER_CONFIG_PATH", REPO / "jupyter-config")).resolve()

# client -> (its name for messages, module run with `python -m`, app class, URL path of a notebook)
CLIENTS = {
    "lab": ("JupyterLab", "jupyterlab", "LabApp", "lab/tree/"),
    "notebook": ("Jupyter Notebook 7", "notebook", "JupyterNotebookApp", "notebooks/"),
}

INSTALL_HINT = (
    "no Chromium found for the browser tests: install Debian's browser with "
    "`apt-get update && apt-get install -y chromium` (or set CHROMIUM_PATH=/path/to/chromium-or-chrome); "
    "`playwright install chromium` also works where downloads are allowed"
)

# Flags that work in a root container: without the background-networking/component/sync flags
# Chromium's own connections are refused here and slow every start.
LAUNCH_ARGS = [
    "--headless",
    "--no-sandbox",
    "--disable-gpu",
    "--disable-quic",
    "--no-first-run",
    "--disable-background-networking",
    "--disable-component-update",
    "--disable-sync",
    "--disable-dev-shm-usage",
]

TIMEOUT_MS = 60_000  # generous: two shared cores, a kernel start and a full notebook run


# --------------------------------------------------------------------------- finding things


def notebook_paths(root: Path = NOTEBOOKS) -> list[Path]:
    """Every notebook under ``root`` (solutions included), in sort order, checkpoints excluded."""
    return sorted(p for p in root.rglob("*.ipynb") if ".ipynb_checkpoints" not in p.parts)


def lesson_notebooks(root: Path = NOTEBOOKS) -> dict[str, Path]:
    """Kind -> the lesson notebook of every registered explorer (``helpers.explorers.REGISTRY``: lesson "02" is
    ``notebooks/02-*.ipynb``), in lesson order; a FileNotFoundError when a lesson has no notebook or two."""
    from helpers.explorers import REGISTRY

    found = {}
    for kind, entry in REGISTRY.items():
        paths = sorted(root.glob(f"{entry.lesson}-*.ipynb"))
        if len(paths) != 1:
            raise FileNotFoundError(f"explorer {kind!r} of lesson {entry.lesson} needs one notebook "
                                    f"{root}/{entry.lesson}-*.ipynb, found {[p.name for p in paths]}")
        found[kind] = paths[0]
    return found


def find_chromium() -> str | None:
    """Path of a Chromium/Chrome: $CHROMIUM_PATH, then the usual names on PATH, then Playwright's own build."""
    env = os.environ.get("CHROMIUM_PATH")
    if env:
        if Path(env).is_file() and os.access(env, os.X_OK):
            return env
        raise FileNotFoundError(f"CHROMIUM_PATH={env!r} is not an executable file")
    for name in ("chromium", "chromium-browser", "google-chrome", "google-chrome-stable"):
        found = shutil.which(name) or (f"/usr/bin/{name}" if Path(f"/usr/bin/{name}").exists() else None)
        if found:
            return found
    for app in ("Chromium", "Google Chrome"):  # macOS installs them as apps, not on PATH
        path = Path(f"/Applications/{app}.app/Contents/MacOS/{app}")
        if path.is_file():
            return str(path)
    try:  # Playwright's bundled browser, if `playwright install chromium` ever ran
        from playwright.sync_api import sync_playwright

        with sync_playwright() as p:
            bundled = p.chromium.executable_path
        if bundled and Path(bundled).is_file():
            return bundled
    except Exception:  # noqa: BLE001 - no playwright or no bundled browser: report "none"
        pass
    return None


def launch_browser(playwright, executable: str | None = None):
    """Start headless Chromium through Playwright with the flags above."""
    executable = executable or find_chromium()
    if executable is None:
        raise RuntimeError(INSTALL_HINT)
    return playwright.chromium.launch(executable_path=executable, headless=True, args=LAUNCH_ARGS)


# --------------------------------------------------------------------------- the server


def _free_port() -> int:
    with socket.socket(socket.AF_INET, socket.SOCK_STREAM) as s:
        s.bind(("127.0.0.1", 0))
        return s.getsockname()[1]


def _children(pid: int) -> list[int]:
    """Direct children of ``pid`` (Linux /proc); the kernels run in sessions of their own."""
    kids = []
    for stat in Path("/proc").glob("[0-9]*/stat"):
        try:
            fields = stat.read_text().rsplit(")", 1)[1].split()
        except OSError:
            continue
        if int(fields[1]) == pid:
            kids.append(int(stat.parent.name))
    return kids


# the notebook's windowing mode (LabServer's `windowing`): "none" in the tests, so that every cell is attached and
# drawn and off-screen outputs can be checked; JupyterLab's own default, "contentVisibility", lets the browser
# skip drawing off-screen cells
_WINDOWING = "@jupyterlab/notebook-extension/tracker.jupyterlab-settings"
_USER_SETTINGS = {
    # no news/update toasts over the notebook
    "@jupyterlab/apputils-extension/notification.jupyterlab-settings": {
        "fetchNews": "false",
        "checkForUpdates": False,
    },
}

_SERVER_CONFIG = """\
c.LabApp.news_url = None
c.LabApp.check_for_updates_class = "jupyterlab.handlers.announcements.NeverCheckForUpdate"
"""


class LabServer:
    """JupyterLab or Notebook 7 (``client``) serving a temporary copy of ``notebooks``; use as a context
    manager or call stop(). ``windowing``: the notebook's windowing mode ("none": every cell drawn, as the
    tests need; None: JupyterLab's own default, as a student has it, which the latency benchmark measures)."""

    def __init__(self, notebooks: Path = NOTEBOOKS, python: str = sys.executable, client: str = "lab",
                 windowing: str | None = "none"):
        if client not in CLIENTS:
            raise ValueError(f"client must be one of {sorted(CLIENTS)}, got {client!r}")
        if windowing not in (None, "none", "defer", "full", "contentVisibility"):
            raise ValueError(f"windowing must be None or a JupyterLab windowingMode, got {windowing!r}")
        self.windowing = windowing
        self.notebooks_src = Path(notebooks)
        self.python = python
        self.client = client
        self.name = CLIENTS[client][0]
        self.token = secrets.token_hex(16)
        self.port = 0
        self.proc: subprocess.Popen | None = None
        self.tmp: Path | None = None
        self.root: Path | None = None
        self.log_path: Path | None = None

    # -- lifecycle
    def __enter__(self) -> LabServer:
        try:
            self.start()
        except BaseException:
            self.stop()
            raise
        return self

    def __exit__(self, *exc) -> None:
        self.stop()

    def start(self, timeout: float = 90.0) -> None:
        self.tmp = Path(tempfile.mkdtemp(prefix="attn-ui-"))
        self.root = self.tmp / "root"
        ignore = shutil.ignore_patterns(".ipynb_checkpoints", "__pycache__")
        shutil.copytree(self.notebooks_src, self.root / "notebooks", ignore=ignore)
        images = self.notebooks_src.parent / "images"
        if images.is_dir():  # notebooks may show ../images/*.png
            shutil.copytree(images, self.root / "images", ignore=ignore)
        env = dict(os.environ)
        env.pop("MPLBACKEND", None)  # the kernel uses the inline backend, as for a person
        dirs = {
            "JUPYTER_CONFIG_DIR": "config",
            "JUPYTER_RUNTIME_DIR": "runtime",
            "JUPYTER_DATA_DIR": "data",
            "JUPYTERLAB_SETTINGS_DIR": "lab-settings",
            "JUPYTERLAB_WORKSPACES_DIR": "lab-workspaces",
            "IPYTHONDIR": "ipython",
        }
        for var, sub in dirs.items():
            (self.tmp / sub).mkdir()
            env[var] = str(self.tmp / sub)
        env["JUPYTER_PLATFORM_DIRS"] = "1"
        env["JUPYTER_CONFIG_PATH"] = str(JUPYTER_CONFIG)
        env["JUPYTER_PATH"] = str(JUPYTER_CONFIG)  # as the Makefile: where Voilà finds the classroom template
        (self.tmp / "config" / "jupyter_server_config.py").write_text(_SERVER_CONFIG)
        # ATTN_UI_DISABLE_EXTENSIONS=@jupyter-widgets/jupyterlab-manager shows what a missing
        # jupyterlab_widgets looks like (a check that the tests catch it)
        disabled = [e for e in os.environ.get("ATTN_UI_DISABLE_EXTENSIONS", "").split(",") if e]
        if disabled:
            (self.tmp / "config" / "labconfig").mkdir()
            page_config = {"disabledExtensions": {e: True for e in disabled}}
            (self.tmp / "config" / "labconfig" / "page_config.json").write_text(json.dumps(page_config))
        settings = dict(_USER_SETTINGS)
        if self.windowing is not None:
            settings[_WINDOWING] = {"windowingMode": self.windowing}
        for rel, value in settings.items():
            path = self.tmp / "lab-settings" / rel
            path.parent.mkdir(parents=True, exist_ok=True)
            path.write_text(json.dumps(value))
        self.port = _free_port()
        _, module, app, _ = CLIENTS[self.client]
        cmd = [
            self.python, "-m", module,
            "--no-browser",
            "--ip=127.0.0.1",
            f"--port={self.port}",
            "--ServerApp.port_retries=0",
            f"--IdentityProvider.token={self.token}",
            f"--ServerApp.root_dir={self.root}",
            f"--{app}.expose_app_in_browser=True",  # window.jupyterapp, which the page helpers read
        ]  # fmt: skip
        if hasattr(os, "geteuid") and os.geteuid() == 0:
            cmd.append("--allow-root")
        self.log_path = self.tmp / f"{self.client}.log"
        with open(self.log_path, "wb") as log:
            self.proc = subprocess.Popen(
                cmd, cwd=self.root, env=env, stdout=log, stderr=subprocess.STDOUT, start_new_session=True
            )
        self._wait_ready(timeout)

    def _wait_ready(self, timeout: float) -> None:
        deadline = time.monotonic() + timeout
        while time.monotonic() < deadline:
            if self.proc.poll() is not None:
                raise RuntimeError(f"{self.name} exited with code {self.proc.returncode}:\n{self.log_tail()}")
            try:
                with urllib.request.urlopen(self.api_url("api/status"), timeout=2) as resp:
                    if resp.status == 200:
                        return
            except (urllib.error.URLError, OSError):
                pass
            time.sleep(0.25)  # polling interval while the server boots, not an assertion
        raise TimeoutError(f"{self.name} did not answer /api within {timeout:.0f} s:\n{self.log_tail()}")

    def stop(self) -> None:
        """Shut down kernels and server; kill whatever is left; remove the temporary directory."""
        proc, self.proc = self.proc, None
        if proc is not None and proc.poll() is None:
            kids = _children(proc.pid)
            try:  # graceful: the server shuts its kernels down first
                req = urllib.request.Request(self.api_url("api/shutdown"), method="POST", data=b"")
                urllib.request.urlopen(req, timeout=5).close()
            except (urllib.error.URLError, OSError):
                pass
            try:
                proc.wait(timeout=15)
            except subprocess.TimeoutExpired:
                pass
            for pid in [proc.pid, *kids]:  # the server's group and each kernel's own session
                try:
                    os.killpg(pid, signal.SIGKILL)
                except (ProcessLookupError, PermissionError):
                    pass
            try:
                proc.wait(timeout=10)
            except subprocess.TimeoutExpired:
                pass
        if self.tmp is not None and os.environ.get("ATTN_UI_KEEP_TMP") != "1":
            shutil.rmtree(self.tmp, ignore_errors=True)

    # -- addresses
    @property
    def base_url(self) -> str:
        return f"http://127.0.0.1:{self.port}"

    def api_url(self, path: str) -> str:
        return f"{self.base_url}/{path}?token={self.token}"

    def notebook_url(self, notebook: Path) -> str:
        """URL of ``notebook`` (a path under the served notebooks folder) in this server's client."""
        rel = Path(notebook).resolve().relative_to(self.notebooks_src.resolve())
        url = f"{self.base_url}/{CLIENTS[self.client][3]}notebooks/{rel.as_posix()}?token={self.token}"
        return url + "&reset" if self.client == "lab" else url  # Lab: no workspace from an earlier page

    def log_tail(self, n: int = 40) -> str:
        if self.log_path is None or not self.log_path.exists():
            return "(no log)"
        return "\n".join(self.log_path.read_text(errors="replace").splitlines()[-n:])


@contextmanager
def lab_and_browser(notebooks: Path = NOTEBOOKS, client: str = "lab",
                    windowing: str | None = "none") -> Iterator[tuple[LabServer, object]]:
    """(server, browser) for scripts; both always closed (``windowing``: as LabServer's)."""
    from playwright.sync_api import sync_playwright

    with LabServer(notebooks, client=client, windowing=windowing) as server, sync_playwright() as p:
        browser = launch_browser(p)
        try:
            yield server, browser
        finally:
            browser.close()


# --------------------------------------------------------------------------- the page

# Prompts: "[ ]:" never run, "[*]:" queued/running, "[3]:" done.
_JS_RUN_STATE = """() => {
  const cells = [...document.querySelectorAll('.jp-NotebookPanel:not(.lm-mod-hidden) .jp-Notebook .jp-CodeCell')];
  let running = 0, pending = 0, done = 0;
  for (const c of cells) {
    const src = (c.querySelector('.cm-content')?.textContent ?? '').trim();
    const prompt = (c.querySelector('.jp-InputArea-prompt')?.textContent ?? '').trim();
    if (prompt.includes('*')) running++;
    else if (/\\[\\d+\\]/.test(prompt)) done++;
    else if (src) pending++;
  }
  const errors = document.querySelectorAll(
    '.jp-NotebookPanel:not(.lm-mod-hidden) .jp-OutputArea-output[data-mime-type="application/vnd.jupyter.stderr"]'
  ).length;
  const status = window.jupyterapp?.shell?.currentWidget?.sessionContext?.session?.kernel?.status ?? null;
  return {cells: cells.length, running, pending, done, errors, status};
}"""


_JS_KERNEL = """() => {
  const w = window.jupyterapp?.shell?.currentWidget;
  const kernel = w?.sessionContext?.session?.kernel;
  return kernel ? kernel.status : (w?.sessionContext ? 'no kernel' : 'no notebook');
}"""


def kernel_status(page) -> str:
    """Status of the current notebook's kernel ('idle', 'busy', 'starting', 'no kernel', ...)."""
    return page.evaluate(_JS_KERNEL)


def open_notebook(page, server: LabServer, notebook: Path) -> None:
    """Open ``notebook`` in the server's client; wait for its kernel to be idle (accepting the kernel dialog)."""
    page.goto(server.notebook_url(notebook), wait_until="domcontentloaded")
    page.wait_for_selector(".jp-NotebookPanel .jp-Notebook .jp-Cell", timeout=TIMEOUT_MS)
    accept = page.locator(".jp-Dialog .jp-mod-accept")
    deadline = time.monotonic() + TIMEOUT_MS / 1000
    status = "?"
    while time.monotonic() < deadline:  # "Select Kernel" may pop up once the kernelspecs arrive
        if accept.count():
            accept.first.click()
        status = kernel_status(page)
        if status == "idle" and not accept.count():
            return
        page.wait_for_timeout(200)  # poll interval, not an assertion
    raise TimeoutError(f"kernel of {notebook.name} not idle after {TIMEOUT_MS / 1000:.0f} s: {status}")


def _menu(page, menu: str, command: str) -> None:
    """Click ``menu`` in the menu bar, then the item running ``command``, as a person would."""
    page.locator(".lm-MenuBar-item", has_text=re.compile(rf"^{menu}$")).click()
    page.locator(f'.lm-Menu-item[data-command="{command}"]').click()


# How often a wait re-checks the page while a notebook runs: Playwright's default re-checks at every animation
# frame, 60 times a second, and these checks walk every cell and output: that took the CPU the kernel and the
# page's own rendering needed (a run of every lesson in both clients: RUN_S_BEFORE s -> RUN_S_AFTER s).
POLL_MS = 100


def run_all(page, timeout_ms: int = 4 * TIMEOUT_MS) -> dict:
    """Clear every output, then Run > Run All Cells; wait until the run has finished or stopped on an error."""
    _menu(page, "Edit", "editmenu:clear-all")
    page.wait_for_function(
        "() => !document.querySelector('.jp-NotebookPanel:not(.lm-mod-hidden) .jp-OutputArea-output')",
        timeout=TIMEOUT_MS, polling=POLL_MS,
    )
    _menu(page, "Run", "runmenu:run-all")
    try:
        page.wait_for_function(
            f"""() => {{
              const s = ({_JS_RUN_STATE})();
              return s.status === 'idle' && s.running === 0 && (s.pending === 0 || s.errors > 0);
            }}""",
            timeout=timeout_ms, polling=POLL_MS,
        )
    except Exception as err:
        raise TimeoutError(
            f"Run All did not finish in {timeout_ms / 1000:.0f} s: {page.evaluate(_JS_RUN_STATE)}"
        ) from err
    # widget views render asynchronously after the kernel is idle; problems() reports any still loading
    try:
        page.wait_for_function(
            "() => ![...document.querySelectorAll('.jp-OutputArea-output')].some("
            "o => /Loading widget\\.\\.\\./.test(o.textContent))",
            timeout=TIMEOUT_MS, polling=POLL_MS,
        )
    except Exception:  # noqa: BLE001 - reported by problems()
        pass
    return page.evaluate(_JS_RUN_STATE)


def run_notebook(page, server: LabServer, notebook: Path) -> dict:
    """Open ``notebook``, clear and run every cell, wait for the heatmaps; returns the final run state."""
    open_notebook(page, server, notebook)
    state = run_all(page)
    wait_heatmaps_loaded(page)
    return state


# Where a page may load from: this machine's loopback (the local server), or the page itself (data:, blob:;
# file: for an exported page opened from disk). Anything else is a request that needs the network.
LOCAL_HOSTS = {"127.0.0.1", "localhost", "::1"}
_LOCAL_SCHEMES = {"data", "blob", "about", "file"}


def is_outside(url: str) -> bool:
    """True for a URL on another machine (a CDN, a font service, an update check, ...)."""
    parts = urllib.parse.urlsplit(url)
    return parts.scheme not in _LOCAL_SCHEMES and parts.hostname not in LOCAL_HOSTS


def new_page(browser, width: int = 1280, height: int = 1000, scale: float = 1):
    """A page in a fresh browser context (own cookies/storage) with the suite's default timeout. Every
    request and WebSocket of the context's pages to another machine is recorded: ``outside_requests(page)``."""
    context = browser.new_context(viewport={"width": width, "height": height}, device_scale_factor=scale)
    context.set_default_timeout(TIMEOUT_MS)
    outside: list[str] = []
    context.attn_outside = outside

    def record(url: str) -> None:
        if is_outside(url):
            outside.append(url)

    context.on("request", lambda request: record(request.url))
    context.on("page", lambda page: page.on("websocket", lambda ws: record(ws.url)))  # every page, the first too
    return context.new_page()


def outside_requests(page) -> list[str]:
    """The URLs on other machines that pages of ``page``'s context (made by new_page) requested so far."""
    return list(page.context.attn_outside)


_WIDGET_REPR = re.compile(
    r"(?<![\w.])(?:\w*Slider|[VH]Box|GridBox|Box|Dropdown|ToggleButtons?|Checkbox|HTML|Button|Play|Tab|"
    r"interactive)\("
)

_JS_OUTPUTS = """() => {
  const panel = document.querySelector('.jp-NotebookPanel:not(.lm-mod-hidden)');
  const outs = [...panel.querySelectorAll('.jp-OutputArea-output')];
  const cells = [...panel.querySelectorAll('.jp-Notebook .jp-Cell')];
  return outs.map(o => {
    return {
      cell: cells.indexOf(o.closest('.jp-Cell')),
      mime: o.getAttribute('data-mime-type'),
      text: o.innerText,
    };
  });
}"""

# Every widget-view output of the notebook *model* must be a rendered widget in the DOM.
_JS_WIDGET_OUTPUTS = """() => {
  const nb = window.jupyterapp.shell.currentWidget.content;
  const out = [];
  nb.widgets.forEach((cell, i) => {
    if (cell.model.type !== 'code') return;
    cell.model.outputs.toJSON().forEach((o, j) => {
      if (!(o.data && o.data['application/vnd.jupyter.widget-view+json'])) return;
      const node = cell.outputArea.widgets[j]?.node;
      out.push({cell: i, output: j, rendered: !!node?.querySelector('.jupyter-widgets'),
                text: (node?.textContent ?? '(no output node)').trim().slice(0, 200)});
    });
  });
  return out;
}"""

_JS_HEATMAPS = """() => [...document.querySelectorAll('.jp-NotebookPanel:not(.lm-mod-hidden) .attn-heatmap')]
.map(el => {
  const tables = el.querySelectorAll('table.attn-hm');
  return {tables: tables.length, cells: el.querySelectorAll('table.attn-hm td').length};
})"""


def problems(page) -> list[str]:
    """What a person would see as broken in the open notebook: errors, unrendered widgets, empty heatmaps."""
    found = []
    run = page.evaluate(_JS_RUN_STATE)
    if run["pending"] or run["running"]:
        found.append(f"not every code cell ran: {run}")
    for o in page.evaluate(_JS_OUTPUTS):
        where = f"cell {o['cell']}"
        text = o["text"] or ""
        if o["mime"] == "application/vnd.jupyter.stderr" and re.search(
            r"Traceback|\w+(Error|Exception)\b", text
        ):
            found.append(f"{where}: error output:\n{text[-1500:]}")
        if "Error displaying widget" in text:
            found.append(f"{where}: {text.strip()[:300]}")
        if o["mime"] == "text/plain" and _WIDGET_REPR.search(text):
            found.append(
                f"{where}: widget shown as text (is jupyterlab_widgets installed?): {text.strip()[:200]}"
            )
        if "Loading widget..." in text:
            found.append(f"{where}: widget still loading: {text.strip()[:200]}")
    for w in page.evaluate(_JS_WIDGET_OUTPUTS):
        if not w["rendered"]:
            found.append(
                f"cell {w['cell']}: widget output {w['output']} is not a rendered widget: {w['text']!r}"
            )
    for i, h in enumerate(page.evaluate(_JS_HEATMAPS)):
        if not h["tables"] or not h["cells"]:
            found.append(f"heatmap {i} shows no table: {h}")
    return found


def wait_heatmaps_loaded(page, timeout_ms: int = TIMEOUT_MS) -> None:
    """Wait until every .attn-heatmap shows its tables (problems() reports one that never does)."""
    try:
        page.wait_for_function(f"() => ({_JS_HEATMAPS})().every(h => h.tables > 0)", timeout=timeout_ms,
                               polling=POLL_MS)
    except Exception:  # noqa: BLE001 - reported by problems()
        pass


# --------------------------------------------------------------------------- explorers


def explorers(page):
    """Locator of every explorer root in the open notebook."""
    return page.locator(".jp-NotebookPanel:not(.lm-mod-hidden) .attn-explorer")


def explorer_kind(explorer) -> str:
    """The <kind> of an explorer root, from its attn-explorer--<kind> class."""
    classes = (explorer.get_attribute("class") or "").split()
    kinds = [c.removeprefix("attn-explorer--") for c in classes if c.startswith("attn-explorer--")]
    return kinds[0] if kinds else "?"


def read_state(explorer) -> dict:
    """The JSON of the readout's data-state element."""
    raw = explorer.locator(".attn-readout [data-state]").first.get_attribute("data-state")
    return json.loads(raw)


def heatmap_cells(explorer) -> list[list[str]]:
    """The cell texts of every heatmap table of ``explorer``, row by row, one list per table (page order)."""
    return explorer.locator(".attn-heatmap table.attn-hm").evaluate_all(
        "ts => ts.map(t => [...t.querySelectorAll('td')].map(td => td.textContent.trim()))"
    )


_JS_HEATMAP_TEXT = "root => [...root.querySelectorAll('.attn-heatmap td')].map(td => td.textContent).join('|')"


def heatmap_text(explorer) -> str:
    """Every heatmap cell of ``explorer`` joined: changes whenever a number shown changes."""
    return explorer.evaluate(_JS_HEATMAP_TEXT)


# true once helpers.presentation(True) has reached an explorer (the class comes with its enlarged tables)
JS_PRESENTING = "root => root.classList.contains('attn-present')"


def presentation_mode(page) -> None:
    """JupyterLab's own presentation mode (View > Appearance > Presentation Mode), file browser closed.
    Lab only: Notebook 7 has no such command."""
    page.evaluate(
        """async () => {
          const app = window.jupyterapp;
          if (!app.commands.hasCommand('application:toggle-presentation-mode'))
            throw new Error('no presentation mode in this client (JupyterLab only)');
          if (!app.shell.presentationMode) await app.commands.execute('application:toggle-presentation-mode');
          app.shell.collapseLeft();
        }"""
    )
    page.wait_for_timeout(300)  # the layout settles, not an assertion


def run_in_kernel(page, code: str, timeout_ms: int = TIMEOUT_MS) -> None:
    """Run ``code`` in the open notebook's kernel (as a cell would, without adding one) and wait for it."""
    page.evaluate(
        """async code => {
          const kernel = window.jupyterapp.shell.currentWidget.sessionContext.session.kernel;
          const future = kernel.requestExecute({code, silent: false, store_history: false});
          const reply = await future.done;
          if (reply.content.status !== 'ok') throw new Error(reply.content.ename + ': ' + reply.content.evalue);
        }""",
        code,
    )


def slider_handles(explorer):
    """Locator of the noUiSlider handles of every .attn-slider in ``explorer``."""
    return explorer.locator(".attn-slider .noUi-handle")


_MATRIX_SLIDER = re.compile(r"attn-slider--(\w+)-\d+-\d+$")


def pick_slider(explorer):
    """The slider a person would try first: a visible matrix entry that changes the attention weights
    (not W_v, which only changes the output), else the first visible scalar slider."""
    sliders = explorer.locator(".attn-slider:visible")  # not those on a hidden tab
    n = sliders.count()
    if not n:
        raise AssertionError(f"explorer {explorer_kind(explorer)!r} has no .attn-slider")
    names = [(sliders.nth(i).get_attribute("class") or "").split() for i in range(n)]
    for i, classes in enumerate(names):
        m = next((_MATRIX_SLIDER.match(c) for c in classes if _MATRIX_SLIDER.match(c)), None)
        if m and m.group(1) != "W_v":
            return sliders.nth(i)
    return sliders.first


def move_slider(handle) -> str:
    """Focus a slider handle and press one arrow key, as a person would; returns the key pressed.

    ArrowRight unless the handle is at its maximum, then ArrowLeft.
    """
    now = float(handle.get_attribute("aria-valuenow"))
    top = float(handle.get_attribute("aria-valuemax"))
    key = "ArrowLeft" if now >= top else "ArrowRight"
    handle.focus()
    handle.press(key)
    return key


# --------------------------------------------------------------------------- updates in place

# Before a move: number every table and cell of the explorer's heatmaps (a JS property on the node
# itself), note each cell's text, class and background, and record every DOM mutation inside them.
_JS_MARK = """root => {
  // the tables' shapes (a window of keys that slides keeps them: its labels change in place)
  const layout = () => [...root.querySelectorAll('.attn-heatmap table.attn-hm')]
    .map(t => t.querySelectorAll('thead th').length + 'x' + t.querySelectorAll('tbody tr').length).join('#');
  const cells = [...root.querySelectorAll('.attn-heatmap table.attn-hm td')];
  cells.forEach((td, n) => { td.__attnMark = n; });
  root.querySelectorAll('.attn-heatmap table.attn-hm').forEach((t, n) => { t.__attnMark = n; });
  const look = td => [td.textContent, td.className, td.style.background].join('\\u0001');
  const rec = {layout, look, before: cells.map(look), layout0: layout(), records: []};
  rec.observer = new MutationObserver(rs => rec.records.push(...rs));
  for (const h of root.querySelectorAll('.attn-heatmap'))
    rec.observer.observe(h, {subtree: true, childList: true, characterData: true, attributes: true});
  root.__attnInPlace = rec;
}"""

# After the move: which cells changed what they show, which nodes the mutations touched, and whether
# the tables and cells are still the nodes marked before.
_JS_IN_PLACE = """root => {
  const rec = root.__attnInPlace;
  rec.records.push(...rec.observer.takeRecords());
  rec.observer.disconnect();
  const tables = [...root.querySelectorAll('.attn-heatmap table.attn-hm')];
  const cells = [...root.querySelectorAll('.attn-heatmap table.attn-hm td')];
  const changed = [];
  cells.forEach((td, n) => { if (rec.look(td) !== rec.before[n]) changed.push(n); });
  const touched = new Set(), other = new Set();
  for (const r of rec.records) {
    const node = r.target.nodeType === Node.TEXT_NODE ? r.target.parentNode : r.target;
    if (node.tagName === 'TD' && node.__attnMark !== undefined) touched.add(node.__attnMark);
    else if (node.tagName === 'CAPTION') continue;  // a caption that says what changed (m = 0.25)
    else if (node.tagName === 'TH') continue;  // a token label of a window that slid (the same number of them)
    else if (node.classList?.contains('attn-title')) continue;  // a title that says which block is shown
    else if (node.closest('.attn-legend.own')) continue;  // the ticks of a colour bar whose scale moved
    else other.add(node.tagName + '.' + node.className + ' (' + r.type + ')');
  }
  return {
    sameLayout: rec.layout() === rec.layout0,
    keptTables: tables.every((t, n) => t.__attnMark === n),
    keptCells: cells.length === rec.before.length && cells.every((td, n) => td.__attnMark === n),
    changed, touched: [...touched].sort((a, b) => a - b), other: [...other], cells: cells.length,
  };
}"""


def mark_heatmaps(explorer) -> None:
    """Before a move: mark the explorer's heatmap tables and cells and start recording DOM mutations."""
    explorer.evaluate(_JS_MARK)


def in_place_report(explorer) -> dict:
    """After a move (once its data-state changed): what ``mark_heatmaps`` can tell about the update."""
    return explorer.evaluate(_JS_IN_PLACE)


def assert_updated_in_place(report: dict, where: str) -> None:
    """The update kept every table and cell node and touched exactly the cells whose text, class or
    colour changed (a full rewrite replaces the nodes; a repaint of every cell touches unchanged ones)."""
    assert report["keptTables"] and report["keptCells"], (
        f"{where}: the heatmap tables or cells are new DOM nodes after the move (a full rewrite), not the "
        f"cells of before updated in place: {report}"
    )
    assert report["changed"], f"{where}: no cell changed its text or colour: {report}"
    assert report["touched"] == report["changed"], (
        f"{where}: the update touched cells {report['touched']} but only cells {report['changed']} changed "
        f"(of {report['cells']})"
    )
    assert not report["other"], f"{where}: the update also changed {report['other']}"


# Explorers (kinds of helpers.explorers.REGISTRY; tests/test_registry.py checks) whose control a person tries
# first (pick_slider) may reshape their tables by design, so the browser builds them anew: the step slider of
# 'generation' grows the cache by a row, 'tiles' shows another block of keys (a shorter last one), 'language-model''s
# temperature writes another text (a shorter prompt has fewer keys to show), 'causal-corner''s slider sets how many
# query rows there are. Labels alone change in place.
RESHAPING_KINDS = {"generation", "tiles", "language-model", "causal-corner"}


# --------------------------------------------------------------------------- accessibility (axe-core)

# axe-core from npm, in a project-local folder that git ignores: `make test-ui` and `.ci/run` install it there
# (`npm install --prefix .axe axe-core`); ATTN_AXE_JS points at another axe.min.js.
AXE_JS = Path(os.environ.get("ATTN_AXE_JS", REPO / ".axe" / "node_modules" / "axe-core" / "axe.min.js"))
AXE_INSTALL_HINT = (
    f"axe-core is not installed at {AXE_JS}: `make axe` (or `npm install --prefix .axe axe-core@^4.10`; "
    "needs npm, e.g. Debian's `apt-get install -y npm`)"
)
# The rules of WCAG 2.0 and 2.1, levels A and AA (axe's tags), no best practices.
AXE_TAGS = ["wcag2a", "wcag2aa", "wcag21a", "wcag21aa"]


def axe(page, include: list[str] | None = None, exclude: list[str] | None = None) -> list[dict]:
    """Run axe-core (WCAG 2.1 A and AA) on ``page``, inside the ``include`` selectors (default: the whole page)
    except ``exclude``; returns the violations, each {id, impact, help, nodes: [{target, html, summary}]}."""
    if not AXE_JS.is_file():
        raise FileNotFoundError(AXE_INSTALL_HINT)
    if not page.evaluate("() => !!window.axe"):
        page.add_script_tag(content=AXE_JS.read_text(encoding="utf-8"))
    context = {"include": [[s] for s in include or ["html"]], "exclude": [[s] for s in exclude or []]}
    return page.evaluate(
        """async ([context, tags]) => {
          const present = context.include.some(([s]) => document.querySelector(s));
          if (!present) return [];
          const result = await axe.run(context, {runOnly: {type: 'tag', values: tags}, resultTypes: ['violations']});
          return result.violations.map(v => ({id: v.id, impact: v.impact, help: v.help,
            nodes: v.nodes.map(n => ({target: n.target.join(' '), html: n.html.slice(0, 200),
                                      summary: (n.failureSummary || '').slice(0, 300)}))}));
        }""",
        [context, AXE_TAGS],
    )


def axe_counts(violations: list[dict]) -> dict[str, int]:
    """Rule id -> number of elements that break it."""
    return {v["id"]: len(v["nodes"]) for v in violations}


def axe_report(violations: list[dict], limit: int = 4) -> str:
    """The violations in a few lines each: rule, impact, help, the first elements."""
    lines = []
    for v in violations:
        lines.append(f"- {v['id']} ({v['impact']}, {len(v['nodes'])} elements): {v['help']}")
        for n in v["nodes"][:limit]:
            lines.append(f"    {n['target']}: {n['html']}")
    return "\n".join(lines)


# What is ours on a page of JupyterLab, Notebook 7 or Voilà: the cells' outputs and the rendered prose. The
# clients' own menus, toolbars, editors and prompts are not (reported separately, not failed here).
PROJECT_CONTENT = [".jp-OutputArea-output", ".jp-RenderedMarkdown"]
