"""messiah: a value-only deep-learning shogi engine whose network scores every legal move in one pass."""

__version__ = "0.1.0"
