"""Voilà configuration of the classroom view (`make present`): the worked solutions stay out of it.

Voilà reads this file when this folder is on JUPYTER_CONFIG_PATH (`make present` puts it there). The file
list does not show notebooks/solutions/, and a page under solutions/ answers 404 before any kernel starts:
a class sees the lessons, not the worked solutions (JupyterLab and Notebook 7 still open them).
"""

from tornado import web

c = get_config()  # noqa: F821 - defined by traitlets when it loads this file

HIDDEN = "solutions"

# Voilà's file list comes from its contents manager (a LargeFileManager); these are jupyter_server's
# defaults plus the solutions folder.
c.FileContentsManager.hide_globs = ["__pycache__", "*.pyc", "*.pyo", ".DS_Store", "*~", HIDDEN]


def refuse_solutions(handler, notebook, cwd):
    """Voilà's prelaunch hook: runs before a page's kernel starts; a 404 for anything under solutions/."""
    if HIDDEN in cwd.replace("\\", "/").split("/"):
        raise web.HTTPError(404)
    return notebook


c.VoilaConfiguration.prelaunch_hook = refuse_solutions
