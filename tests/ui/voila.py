"""Serve the notebooks with Voilà (the classroom view of ``make present``) for the browser tests.

- ``present_args(port)`` / ``PRESENT_ARGS``: the Voilà arguments ``make present`` uses, before the folder
  to serve: loopback only, a generated token (printed in the URL Voilà logs), the template ``classroom``
  (jupyter-config/voila/templates/: nothing loaded from outside this machine, a prediction's answer in a
  closed box), code cells stripped, the file list as plain links, and idle kernels culled (Voilà starts
  one kernel per page load and does not shut it down when the tab closes: voila-dashboards/voila#1458);
- ``PRESENT_ENV``: what ``make present`` puts in the environment: ``JUPYTER_PATH`` (where Voilà finds the
  template) and ``JUPYTER_CONFIG_PATH`` (where it finds jupyter-config/voila.py, which keeps solutions/
  out of the classroom view), both the repository's jupyter-config/;
- ``VoilaServer``: Voilà started with exactly those arguments and that environment on a free port, serving
  a *copy* of ``notebooks/`` (and ``images/``), with its own temporary Jupyter directories;
  ``url(notebook)`` is the page of one notebook, ``tree_url`` the file list; ``stop()`` always ends the
  server and its kernels.

Voilà runs the whole notebook for every page load (notebook 02 takes several seconds before any HTML
arrives), so open few pages. The page helpers of ``lab.py`` that take an explorer locator
(``read_state``, ``heatmap_cells``, ``pick_slider``, ``move_slider``) work on Voilà's pages as they are.
"""

from __future__ import annotations

import os
import re
import shutil
import signal
import subprocess
import sys
import tempfile
import time
import urllib.error
import urllib.request
from pathlib import Path
from urllib.parse import quote

import lab

PRESENT_PORT = 8866  # Voilà's own default; `make present PRESENT_PORT=9000` changes it
IDLE_KERNEL_SECONDS = 600  # a kernel nobody has talked to for 10 minutes is shut down
JUPYTER_CONFIG = lab.REPO / "jupyter-config"
PRESENT_ENV = {"JUPYTER_PATH": str(JUPYTER_CONFIG), "JUPYTER_CONFIG_PATH": str(JUPYTER_CONFIG),
               "ATTN_PRESENTATION": "1"}  # the classroom view draws for a projector from the first figure


def present_args(port: int = PRESENT_PORT) -> list[str]:
    """Arguments of ``voila`` for the classroom view; the folder to serve goes last."""
    return [
        "--no-browser",
        "--Voila.ip=127.0.0.1",  # `--ip` is not a Voilà option (silently ignored)
        f"--port={port}",
        "--token",  # generate one; Voilà prints the URL with it
        "--template=classroom",  # jupyter-config/voila/templates/classroom, on JUPYTER_PATH
        "--VoilaConfiguration.strip_sources=True",  # the default, stated: no code cells
        # the file list as plain links drawn by the server: the default one is drawn by JavaScript that
        # sometimes leaves it empty on a busy machine (seen here about once in 12 loads under load)
        "--VoilaConfiguration.classic_tree=True",
        f"--MappingKernelManager.cull_idle_timeout={IDLE_KERNEL_SECONDS}",
        "--MappingKernelManager.cull_interval=60",
    ]


PRESENT_ARGS = present_args()

# only for the tests: fail instead of moving to another port; show a cell's traceback in the page
_TEST_ARGS = ["--Voila.port_retries=0", "--VoilaConfiguration.show_tracebacks=True"]


class VoilaServer:
    """Voilà serving a temporary copy of ``notebooks`` with ``PRESENT_ARGS``; a context manager, or call stop()."""

    def __init__(self, notebooks: Path = lab.NOTEBOOKS, python: str = sys.executable):
        self.notebooks_src = Path(notebooks)
        self.python = python
        self.port = 0
        self.token = ""
        self.cmd: list[str] = []
        self.proc: subprocess.Popen | None = None
        self.tmp: Path | None = None
        self.root: Path | None = None
        self.log_path: Path | None = None
        self.kernels_seen: set[int] = set()  # every kernel pid stop() found, to check they are gone

    # -- lifecycle
    def __enter__(self) -> VoilaServer:
        try:
            self.start()
        except BaseException:
            self.stop()
            raise
        return self

    def __exit__(self, *exc) -> None:
        self.stop()

    def start(self, timeout: float = 90.0) -> None:
        self.tmp = Path(tempfile.mkdtemp(prefix="attn-voila-"))
        self.root = self.tmp / "root"
        ignore = shutil.ignore_patterns(".ipynb_checkpoints", "__pycache__")
        shutil.copytree(self.notebooks_src, self.root / "notebooks", ignore=ignore)
        images = self.notebooks_src.parent / "images"
        if images.is_dir():  # notebooks may show ../images/*.png
            shutil.copytree(images, self.root / "images", ignore=ignore)
        env = dict(os.environ)
        env.pop("MPLBACKEND", None)  # the kernel uses the inline backend, as for a person
        for var, sub in {
            "JUPYTER_CONFIG_DIR": "config",
            "JUPYTER_RUNTIME_DIR": "runtime",
            "JUPYTER_DATA_DIR": "data",
            "IPYTHONDIR": "ipython",
        }.items():
            (self.tmp / sub).mkdir()
            env[var] = str(self.tmp / sub)
        env["JUPYTER_PLATFORM_DIRS"] = "1"
        env.update(PRESENT_ENV)
        self.port = lab._free_port()
        self.cmd = [self.python, "-m", "voila", *present_args(self.port), *_TEST_ARGS, "notebooks"]
        self.log_path = self.tmp / "voila.log"
        with open(self.log_path, "wb") as log:
            self.proc = subprocess.Popen(
                self.cmd, cwd=self.root, env=env, stdout=log, stderr=subprocess.STDOUT, start_new_session=True
            )
        self._wait_ready(timeout)

    def _wait_ready(self, timeout: float) -> None:
        """Wait for the URL Voilà prints (a person copies it from there), then for the server to answer."""
        printed = re.compile(rf"http://127\.0\.0\.1:{self.port}/(?:\?token=(\w+))?\s")
        deadline = time.monotonic() + timeout
        url = None
        while time.monotonic() < deadline:
            if self.proc.poll() is not None:
                raise RuntimeError(f"Voilà exited with code {self.proc.returncode}:\n{self.log_tail()}")
            if url is None:
                url = printed.search(self.log_path.read_text(errors="replace"))
                self.token = (url.group(1) or "") if url else ""
            if url is not None:
                try:  # a static file: answers without running a notebook
                    with urllib.request.urlopen(f"{self.base_url}/voila/static/voila.js", timeout=2) as resp:
                        if resp.status == 200:
                            return
                except (urllib.error.URLError, OSError):
                    pass
            time.sleep(0.25)  # polling interval while the server boots, not an assertion
        what = "answer" if url else f"print its URL http://127.0.0.1:{self.port}/..."
        raise TimeoutError(f"Voilà did not {what} within {timeout:.0f} s:\n{self.log_tail()}")

    def kernel_pids(self) -> list[int]:
        """The kernels Voilà runs now (its direct children; each runs in a session of its own)."""
        return lab._children(self.proc.pid) if self.proc is not None else []

    def stop(self) -> None:
        """SIGTERM (Voilà then shuts its kernels down), then kill whatever is left; remove the temporary directory."""
        proc, self.proc = self.proc, None
        if proc is not None:
            kids = lab._children(proc.pid)
            self.kernels_seen.update(kids)
            if proc.poll() is None:
                try:
                    proc.send_signal(signal.SIGTERM)
                    proc.wait(timeout=15)
                except (ProcessLookupError, subprocess.TimeoutExpired):
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
            self.tmp = self.root = None

    # -- addresses
    @property
    def base_url(self) -> str:
        return f"http://127.0.0.1:{self.port}"

    @property
    def tree_url(self) -> str:
        """The file list Voilà shows at / (the served notebooks folder)."""
        return f"{self.base_url}/{self._query}"

    def url(self, notebook: Path) -> str:
        """Voilà page of ``notebook`` (a path under the served notebooks folder)."""
        rel = Path(notebook).resolve().relative_to(self.notebooks_src.resolve())
        return f"{self.base_url}/voila/render/{quote(rel.as_posix())}{self._query}"

    @property
    def _query(self) -> str:
        return f"?token={self.token}" if self.token else ""

    def log_tail(self, n: int = 40) -> str:
        if self.log_path is None or not self.log_path.exists():
            return "(no log)"
        text = self.log_path.read_text(errors="replace")
        if self.token:
            text = text.replace(self.token, "<token>")
        return "\n".join(text.splitlines()[-n:])


if __name__ == "__main__":  # print the command `make present` runs
    print(*(f"{k}={v}" for k, v in PRESENT_ENV.items()), "voila", *PRESENT_ARGS, "notebooks")
