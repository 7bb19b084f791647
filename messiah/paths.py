"""Where the shared data (teacher positions, openings, mate problems) lives: ``$MESSIAH_DATA`` when set,
else ``../shared/data`` beside the checkout, as the project lays it out (an installed package is in no
checkout: there only ``$MESSIAH_DATA`` says). The benchmarks, the tests and some defaults of the training
and match tools read it; the engine needs none of it.
"""

from __future__ import annotations

import os
from pathlib import Path

from messiah.errors import DataError

CHECKOUT = Path(__file__).resolve().parents[1]
BESIDE_CHECKOUT = CHECKOUT.parent / "shared" / "data" if (CHECKOUT / "pyproject.toml").is_file() else None
UNSET = Path("$MESSIAH_DATA")  # the folder of an installed package without $MESSIAH_DATA: a name saying what to set


def shared_data() -> Path:
    """The shared data folder: ``$MESSIAH_DATA``, else ``../shared/data`` beside the checkout, else (an installed
    package) the name ``$MESSIAH_DATA`` itself, whether or not it exists: :func:`shared_file` says what is
    missing, and a default shown in a message reads as ``$MESSIAH_DATA/openings/...``."""
    if os.environ.get("MESSIAH_DATA"):
        return Path(os.environ["MESSIAH_DATA"])
    return BESIDE_CHECKOUT or UNSET


SHARED_DATA = shared_data()


def shared_file(relative: str | os.PathLike) -> Path:
    """``relative`` inside the shared data folder; DataError naming both places it is looked for when absent."""
    path = SHARED_DATA / relative
    if not path.exists():
        if os.environ.get("MESSIAH_DATA"):
            where = f"$MESSIAH_DATA ({os.environ['MESSIAH_DATA']})"
        elif BESIDE_CHECKOUT:
            where = f"../shared/data beside the checkout ({BESIDE_CHECKOUT}; $MESSIAH_DATA is not set)"
        else:
            where = "$MESSIAH_DATA, which is not set"
        raise DataError(f"{relative} not found in the shared data folder, {where}: set MESSIAH_DATA to the "
                        "folder that holds it, or give the file's path")
    return path
