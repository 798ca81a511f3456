"""nbconvert configuration of `make html`: pages that work offline, opened from disk, answers hidden.

    jupyter nbconvert --config jupyter-config/export_html.py --to html notebooks/02-query-key-value.ipynb

Uses the template nbconvert/templates/lab-offline/ beside this file (JupyterLab's look, MathJax 3 from the
installed `django-static-mathjax` package written into each page, no CDN) instead of nbconvert's default,
which loads require.js and MathJax 2 from a public CDN (offline, its formulas show as raw TeX).
"""

from pathlib import Path

import mathjax  # the django-static-mathjax package: MathJax 3's files, no Django needed

c = get_config()  # noqa: F821 - defined by traitlets when it loads this file

c.TemplateExporter.extra_template_basedirs = [str(Path(__file__).resolve().parent / "nbconvert" / "templates")]
c.HTMLExporter.template_name = "lab-offline"
c.TemplateExporter.extra_template_paths = [str(Path(mathjax.__file__).resolve().parent / "static" / "mathjax" / "es5")]
