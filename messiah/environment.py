"""What a run or a match ran on: the machine and the versions of the libraries that decide its numbers.

A self-play run is a function of its seeds: each game of its seed, each batch of (seed, step). That makes a run
lost with its machine replayable, but only to the bit on the same library versions: lm1 replayed with other
library versions played generation 1's 240 games to the same 18,403 positions, and its learner's loss differed
in the fifth digit (docs/rl-results.md, 2026-11-28). So the run's folder and a match's card say what
they ran on, and a replay installs those versions first. From a git checkout they also say which commit the code
was and whether the checkout's tracked files had changes (``dirty``), as KataGo keeps its code with each run.
"""

from __future__ import annotations

import datetime
import os
import platform
import subprocess
import sys
from importlib import metadata
from pathlib import Path

from messiah import __version__

# The distributions whose versions change a run's or a match's numbers: the board and move generation, the
# arrays, the compiled hot loops, inference (either build), and training, export and quantization.
PACKAGES = ("cshogi", "numpy", "numba", "onnxruntime", "onnxruntime-gpu", "torch", "onnx", "onnxscript")
CHECKOUT = Path(__file__).resolve().parents[1]  # the repository's root when messiah runs from a checkout
GIT_SECONDS = 10.0  # for each git command: a hung git must not hold up a run's start


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


def _git(*args: str) -> str:
    # GIT_OPTIONAL_LOCKS=0: git status then leaves the index alone, so it never contends with a git command the
    # user runs at the same time
    done = subprocess.run(["git", "-C", str(CHECKOUT), *args], capture_output=True, text=True, check=True,
                          timeout=GIT_SECONDS, env={**os.environ, "GIT_OPTIONAL_LOCKS": "0"})
    return done.stdout.strip()


def code_version() -> dict:
    """The commit of the git checkout messiah runs from and whether its tracked files differ from it (``dirty``;
    files git does not track, such as a run's own output, do not count). Both None when messiah is not the
    checkout's own folder (an installed wheel, even inside some other repository) or git cannot say."""
    try:
        if Path(_git("rev-parse", "--show-toplevel")).resolve() != CHECKOUT:
            return {"commit": None, "dirty": None}
        changed = _git("status", "--porcelain", "--untracked-files=no")
        return {"commit": _git("rev-parse", "HEAD"), "dirty": bool(changed)}
    except (OSError, subprocess.SubprocessError):  # no git, not a repository, a git that hangs
        return {"commit": None, "dirty": None}


def environment() -> dict:
    """The machine (CPU model, core count, OS), the versions of messiah, Python and :data:`PACKAGES` (those
    installed) and the code's commit (:func:`code_version`), with the date: a JSON-ready dict."""
    versions = {}
    for name in PACKAGES:
        try:
            versions[name] = metadata.version(name)
        except metadata.PackageNotFoundError:
            continue
    return {"date": datetime.datetime.now(datetime.timezone.utc).isoformat(timespec="seconds"),
            "messiah": __version__, **code_version(), "python": platform.python_version(),
            "platform": platform.platform(), "cpu": cpu_model(), "cores": os.cpu_count(), "executable": sys.executable,
            "packages": versions}
