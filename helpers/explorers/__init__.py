"""The live explorers of the notebooks, one module per lesson: ``nb02`` holds 02's ``qkv_explorer`` and so on.

Each explorer declares its controls and one pure ``show`` function (the protocol, and the smallest
explorer in full, are in ``helpers.explorer``). Every explorer has ``.widget``, ``.set(**values)`` (a
fixed state, for the plain nbval cell after the live one), ``.figure`` / ``.figures`` (matplotlib
Figures of the current state), ``.state()``, ``.weights`` and ``.output``. Its numbers come from the
math modules of ``helpers`` (``attention``, ``positions``, ``training``, ``generation``,
``longcontext``, ``induction``, ``sampling``, ``modern``), never from a formula of its own.

Adding a lesson's explorer is one short class in that lesson's module ``helpers/explorers/nbNN.py``,
decorated with ``@register(demo=lambda: MyExplorer(...))``, and nothing else in this package: every
module ``nbNN`` here is found on disk and imported (``helpers.lesson_modules``; they are ``LESSONS``), and
the names of its ``__all__`` are exported here (``from helpers.explorers import my_explorer``). The
registry ``REGISTRY`` (kind -> class, lesson, demo factory; see ``helpers.explorers.common``) is the one
list the tests, the screenshots and the benchmarks read. Export the class in the module's ``__all__``
with its function-style alias (``my_explorer = MyExplorer``), and write its browser expectation, the
function that recomputes what the page shows, in ``tests/ui/expectations/nbNN.py`` (decorated with
``@expects("my-kind")``, found the same way); ``tests/test_registry.py`` fails until it exists. Its
argument checks come from ``helpers.validate``; the static figure of its state is drawn by
``helpers.plots.draw_view`` (a lesson's other figures go into ``helpers.figures``).

Shapes as in ``helpers.attention``: ``T`` tokens, ``d_in`` input features, ``d_model`` width of
the projections, ``d_k`` width per head (``d_head`` in multi-head attention), ``h`` heads.
"""

from helpers import lesson_modules
from helpers.explorers.common import REGISTRY, Registered, register

LESSONS = lesson_modules(__name__)  # nb00, nb01, ...: importing each registers its explorers, in lesson order
globals().update({name: getattr(m, name) for m in LESSONS for name in m.__all__})

__all__ = ["REGISTRY", "Registered", "register", "LESSONS", *(name for m in LESSONS for name in m.__all__)]
