"""The live explorers of the notebooks, one module per lesson: ``nb02`` holds 02's ``qkv_explorer`` and so on.

Each explorer declares its controls and one pure ``show`` function (the protocol, and the smallest
explorer in full, are in ``helpers.explorer``). Every explorer has ``.widget``, ``.set(**values)`` (a
fixed state, for the plain nbval cell after the live one), ``.figure`` / ``.figures`` (matplotlib
Figures of the current state), ``.state()``, ``.weights`` and ``.output``. Its numbers come from the
math modules of ``helpers`` (``attention``, ``positions``, ``training``, ``generation``,
``longcontext``, ``induction``, ``sampling``, ``modern``), never from a formula of its own.

Adding a lesson's explorer is one short class in that lesson's module ``helpers/explorers/nbNN.py``
(a new module gets a line below), decorated with ``@register(demo=lambda: MyExplorer(...))``: the
registry ``REGISTRY`` (kind -> class, lesson, demo factory; see ``helpers.explorers.common``) is the
one list the tests, the screenshots and the benchmarks read. Export it in the module's ``__all__``
with its function-style alias (``my_explorer = MyExplorer``), and add its browser expectation, the
function of ``tests/ui/expected.py`` that recomputes what the page shows; ``tests/test_registry.py``
fails until it exists. Its argument checks come from ``helpers.validate``; the static figure of its
state is drawn by ``helpers.plots.draw_view`` (a lesson's other figures go into ``helpers.figures``).

Shapes as in ``helpers.attention``: ``T`` tokens, ``d_in`` input features, ``d_model`` width of
the projections, ``d_k`` width per head (``d_head`` in multi-head attention), ``h`` heads.
"""

from helpers.explorers import (
    nb00,
    nb01,
    nb02,
    nb03,
    nb04,
    nb05,
    nb06,
    nb07,
    nb08,
    nb09,
    nb10,
    nb11,
    nb12,
    nb13,
    nb14,
)
from helpers.explorers.common import REGISTRY, Registered, register
from helpers.explorers.nb00 import *  # noqa: F403
from helpers.explorers.nb01 import *  # noqa: F403
from helpers.explorers.nb02 import *  # noqa: F403
from helpers.explorers.nb03 import *  # noqa: F403
from helpers.explorers.nb04 import *  # noqa: F403
from helpers.explorers.nb05 import *  # noqa: F403
from helpers.explorers.nb06 import *  # noqa: F403
from helpers.explorers.nb07 import *  # noqa: F403
from helpers.explorers.nb08 import *  # noqa: F403
from helpers.explorers.nb09 import *  # noqa: F403
from helpers.explorers.nb10 import *  # noqa: F403
from helpers.explorers.nb11 import *  # noqa: F403
from helpers.explorers.nb12 import *  # noqa: F403
from helpers.explorers.nb13 import *  # noqa: F403
from helpers.explorers.nb14 import *  # noqa: F403

LESSONS = (nb00, nb01, nb02, nb03, nb04, nb05, nb06, nb07, nb08, nb09, nb10, nb11, nb12, nb13, nb14)

__all__ = ["REGISTRY", "Registered", "register", "LESSONS", *(name for m in LESSONS for name in m.__all__)]
