"""messiah: a value-only deep-learning shogi engine whose network scores every legal move in one pass.

This package is the core (move indices, feature planes, the evaluator, win rates, positions); the engine,
the arena and the tools are its subpackages, and search/, models/ and train/ at the top of the repository
install as messiah.search, messiah.models and messiah.train (pyproject's package-dir; an editable install
maps them the same way)."""

__version__ = "0.5.0"
