"""What a run or a match ran on: the machine and the versions of the libraries that decide its numbers.

A self-play run is a function of its seeds: each game of its seed, each batch of (seed, step). That makes a run
lost with its machine replayable, but only to the bit on the same library versions: lm1 replayed with other
library versions played generation 1's 240 games to the same 18,403 positions, and its learner's loss differed
in the fifth digit (docs/rl-results.md, 2026-11-28). So the run's folder and a match's card say what
they ran on, and a replay installs those versions first.
"""

from __future__ import annotations

import datetime
import os
import platform
import sys
from importlib import metadata

from messiah import __version__

# The distributions whose versions change a run's or a match's numbers: the board and move generation, the
# arrays, the compiled hot loops, inference (either build), and training, export and quantization.
PACKAGES = ("cshogi", "numpy", "numba", "onnxruntime", "onnxruntime-gpu", "torch", "onnx", "onnxscript")


def cpu_model() -> str:
    """The CPU's model name as the kernel reports it (what platform.processor() leaves empty on Linux)."""
    try:
        with open("/proc/cpuinfo") as f:
            for line in f:
                if line.startswith("model name"):
                    return line.split(":", 1)[1].strip()
    except OSError:
        pass
    return platform.processor() or platform.machine()


def environment() -> dict:
    """The machine (CPU model, core count, OS) and the versions of messiah, Python and :data:`PACKAGES` (those
    installed), with the date: a JSON-ready dict."""
    versions = {}
    for name in PACKAGES:
        try:
            versions[name] = metadata.version(name)
        except metadata.PackageNotFoundError:
            continue
    return {"date": datetime.datetime.now(datetime.timezone.utc).isoformat(timespec="seconds"),
            "messiah": __version__, "python": platform.python_version(), "platform": platform.platform(),
            "cpu": cpu_model(), "cores": os.cpu_count(), "executable": sys.executable, "packages": versions}
