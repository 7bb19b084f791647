"""Files written whole or not at all: a run killed at any moment (a checkpoint, a log, a book, a model) leaves
the old file or the new one, never half of one, so that a resume or a viewer reads something whole."""

from __future__ import annotations

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
