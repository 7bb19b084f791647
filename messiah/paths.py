"""Where the shared data (teacher positions, openings, mate problems) lives: ``$MESSIAH_DATA`` when set,
else ``../shared/data`` beside the checkout, as the project lays it out. The benchmarks, the tests and some
defaults of the training and match tools read it; the engine needs none of it.
"""

from __future__ import annotations

import os
from pathlib import Path

from messiah.errors import DataError

BESIDE_CHECKOUT = Path(__file__).resolve().parents[2] / "shared" / "data"


def shared_data() -> Path:
    """The shared data folder: ``$MESSIAH_DATA``, else ``../shared/data`` beside the checkout (whether or not
    it exists; :func:`shared_file` says what is missing)."""
    return Path(os.environ["MESSIAH_DATA"]) if os.environ.get("MESSIAH_DATA") else BESIDE_CHECKOUT


SHARED_DATA = shared_data()


def shared_file(relative: str | os.PathLike) -> Path:
    """``relative`` inside the shared data folder; DataError naming both places it is looked for when absent."""
    path = SHARED_DATA / relative
    if not path.exists():
        where = f"$MESSIAH_DATA ({os.environ['MESSIAH_DATA']})" if os.environ.get("MESSIAH_DATA") else \
            f"../shared/data beside the checkout ({BESIDE_CHECKOUT}; $MESSIAH_DATA is not set)"
        raise DataError(f"{relative} not found in the shared data folder, {where}: set MESSIAH_DATA to the "
                        "folder that holds it, or give the file's path")
    return path
