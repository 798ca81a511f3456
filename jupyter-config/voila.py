"""Voilà configuration of the classroom view: the worked solutions stay out of it, and its template is ours.

Voilà reads this file from JUPYTER_CONFIG_PATH, where the Makefile puts this folder: the standalone Voilà
of `make present`, and the Voilà server extension of `make lab` and `make notebook` (JupyterLab's "Render
with Voilà", /voila/render/...) alike.
- The file list does not show notebooks/solutions/; solutions/' own file list (/voila/tree/solutions, an
  address typed by hand) and a page under solutions/ answer 404, a page before any kernel starts: a class
  sees the lessons, not the worked solutions (JupyterLab and Notebook 7 still open them).
- Formulas are typeset by the MathJax that Voilà's page carries (the server extension would load one
  from a CDN).
- The template is `classroom` (voila/templates/classroom/ beside this file: nothing from a CDN, a
  prediction's answer in a closed box) wherever Voilà can find it, i.e. when this folder is on
  JUPYTER_PATH too (the Makefile sets both); elsewhere Voilà keeps its default template.
"""

import os

from jupyter_core.paths import jupyter_path
from tornado import web

c = get_config()  # noqa: F821 - defined by traitlets when it loads this file

HIDDEN = "solutions"
TEMPLATE = "classroom"

# Voilà's file list comes from its contents manager (a LargeFileManager); these are jupyter_server's
# defaults plus the solutions folder. (The server extension lists with JupyterLab's contents manager,
# which this file does not configure: JupyterLab's file browser shows solutions/.)
c.FileContentsManager.hide_globs = ["__pycache__", "*.pyc", "*.pyo", ".DS_Store", "*~", HIDDEN]


def _under_hidden(path: str) -> bool:
    return HIDDEN in path.replace("\\", "/").split("/")


def refuse_solutions(handler, notebook, cwd):
    """Voilà's prelaunch hook: runs before a page's kernel starts; a 404 for anything under solutions/."""
    if _under_hidden(cwd):
        raise web.HTTPError(404)
    return notebook


def classroom_page(page_config, notebook_path, **_):
    """Voilà's page_config hook, run for every file list and page it draws (a page's before its kernel
    starts): a 404 for solutions/' own file list, which hide_globs above leaves reachable by its address;
    and formulas typeset by the MathJax 3 that Voilà's page carries, not by MathJax 2 from a CDN."""
    if _under_hidden(notebook_path):
        raise web.HTTPError(404)
    # The standalone Voilà leaves both unset and typesets with its own MathJax; the server extension sets
    # them to cdnjs.cloudflare.com (offline: formulas stay raw TeX). Both None: the page's own, everywhere.
    page_config["fullMathjaxUrl"] = page_config["mathjaxConfig"] = None
    return page_config


c.VoilaConfiguration.prelaunch_hook = refuse_solutions
c.VoilaConfiguration.page_config_hook = classroom_page
if any(os.path.isfile(os.path.join(d, "voila", "templates", TEMPLATE, "conf.json")) for d in jupyter_path()):
    c.VoilaConfiguration.template = TEMPLATE
