"""Where the shared data (teacher positions, openings, mate problems) lives.

``$MESSIAH_DATA`` when set; else ``../shared/data`` beside the checkout, as the project lays it out; else
``/work/shared/data``, so that a clone made elsewhere (a CI checkout in /tmp) still finds it. Only the
benchmark, the match's default openings and the tests read it; the engine needs none of it.
"""

from __future__ import annotations

import os
from pathlib import Path

_CANDIDATES = (Path(__file__).resolve().parents[2] / "shared" / "data", Path("/work/shared/data"))


def shared_data() -> Path:
    """The shared data folder (the first candidate that exists; the first one when none does, so that an
    error names the path the layout expects)."""
    if os.environ.get("MESSIAH_DATA"):
        return Path(os.environ["MESSIAH_DATA"])
    return next((p for p in _CANDIDATES if p.is_dir()), _CANDIDATES[0])


SHARED_DATA = shared_data()
