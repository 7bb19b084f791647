"""Files written whole or not at all: a run killed at any moment (a checkpoint, a log, a book, a model) leaves
the old file or the new one, never half of one, so that a resume or a viewer reads something whole. And JSON that
every reader takes: Python's json writes NaN and Infinity, which jq, browsers and strict parsers refuse."""

from __future__ import annotations

import json
import math
import os
from collections.abc import Iterator
from contextlib import contextmanager
from pathlib import Path


@contextmanager
def atomic_path(path: str | os.PathLike, suffix: str = ".tmp") -> Iterator[Path]:
    """A temporary path beside ``path`` (its name + ``suffix``; a writer that chooses its format by the name, as
    matplotlib does, wants a suffix such as ".tmp.png") for the block to write; when the block ends without an
    error it replaces ``path`` in one step, and when it fails the temporary file is removed."""
    path = Path(path)
    tmp = path.with_name(path.name + suffix)
    try:
        yield tmp
        os.replace(tmp, path)
    finally:
        tmp.unlink(missing_ok=True)


def _finite(value: object) -> object:
    if isinstance(value, float):
        return value if math.isfinite(value) else None
    if isinstance(value, dict):
        return {k: _finite(v) for k, v in value.items()}
    if isinstance(value, list | tuple):
        return [_finite(v) for v in value]
    return value


def json_text(data: object, indent: int | None = None) -> str:
    """``data`` as strict JSON: a float that is not finite (an Elo of a match won or lost in every game, a rate
    with nothing to count) becomes null, which the figures beside it explain (a score of 0 or 1, a count of 0)."""
    return json.dumps(_finite(data), indent=indent, allow_nan=False)


def write_json(path: str | os.PathLike, data: object, indent: int | None = 1) -> None:
    """``data`` to ``path`` as strict JSON (:func:`json_text`), whole or not at all."""
    with atomic_path(path) as tmp:
        tmp.write_text(json_text(data, indent))
