"""messiah: a value-only deep-learning shogi engine whose network scores every legal move in one pass."""

__version__ = "0.1.0"

# In a source checkout (or an editable install) search/, models/ and train/ sit beside messiah/ at the top of
# the repository; let them resolve as messiah.search, messiah.models and messiah.train, as an installed wheel
# maps them (pyproject's package-dir).
import os as _os

_root = _os.path.dirname(_os.path.dirname(_os.path.abspath(__file__)))
if _os.path.isfile(_os.path.join(_root, "search", "base.py")):
    __path__.append(_root)  # noqa: F821 (a package's __path__)
del _os, _root
