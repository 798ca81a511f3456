"""The browser expectations, one module per lesson (``nb02`` for ``helpers.explorers.nb02``); ``expected.py`` finds
every module here and imports it, so its ``@expects`` functions fill ``expected.KINDS``."""
