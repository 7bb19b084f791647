"""Shared fixtures: positions from the teacher files and small helpers for hand-made positions."""

from __future__ import annotations

import os
import shutil
import sys
from pathlib import Path

import cshogi
import numpy as np
import pytest

from messiah.paths import SHARED_DATA

# Let the test modules import tests/reference_features.py as a plain module.
sys.path.insert(0, os.path.dirname(__file__))

# The small data set the tests run on, in the repository (tests/make_fixtures.py makes it; README.md there).
FIXTURES = Path(__file__).resolve().parent / "data"
TEACHER = FIXTURES / "teacher.hcpe"  # 40 whole teacher games, 3,775 positions, from every teacher file
GAMES = FIXTURES / "games.hcpe"  # 6 whole games from the start position, moves and results, no evals
FORMATS = FIXTURES / "formats"
OPENINGS = FIXTURES / "openings.sfen"
MATES = FIXTURES / "mates"

IN_CI = os.environ.get("CI", "").lower() in ("1", "true", "yes")
GUARD = 30.0  # seconds a test waits for a search, a reply or a process: a guard against hanging, not a speed claim
STEP = 0.01  # seconds a TickingTime moves at each reading
LOOKS = 10  # readings a search may take past its time: the one that finds it up, then unwinding and reporting


class TickingTime:
    """A stand-in for the ``time`` module of a module that reads a clock (search.timeman, engine.mate,
    engine.usi): each reading is ``STEP`` seconds after the one before, so a search's time is the number of times
    it has read its clock, the same on any machine and under any load. No unit test asserts a wall-clock time."""

    def __init__(self):
        self.readings = 0

    def perf_counter(self) -> float:
        self.readings += 1
        return self.readings * STEP


@pytest.fixture
def ticking(monkeypatch) -> TickingTime:
    """Every search Clock made in the test runs on a TickingTime."""
    from messiah.search import timeman

    fake = TickingTime()
    monkeypatch.setattr(timeman, "time", fake)
    return fake


def require(present: bool, what: str) -> None:
    """Skip the test with one reason when ``what`` it needs (the full shared data, a program) is absent (under
    CI=true every skip fails: pytest_runtest_makereport)."""
    if not present:
        pytest.skip(f"needs {what}")


@pytest.hookimpl(hookwrapper=True)
def pytest_runtest_makereport(item, call):
    """Under CI=true no test may skip, whatever made it (``require``, an ``importorskip`` of an extra that did not
    install, a skip marker): CI must not pass by skipping what it was meant to check."""
    outcome = yield
    report = outcome.get_result()
    if IN_CI and report.skipped and not hasattr(report, "wasxfail"):
        reason = report.longrepr[2] if isinstance(report.longrepr, tuple) else str(report.longrepr)
        report.outcome, report.longrepr = "failed", f"skipped under CI=true: {reason}"


def shared(relative: str) -> Path:
    """A file of the full shared data ($MESSIAH_DATA or ../shared/data), for the tests that need more than the
    fixtures: skipped without it (failed under CI=true)."""
    path = SHARED_DATA / relative
    require(path.exists(), f"the shared data's {relative} (set MESSIAH_DATA; absent at {path})")
    return path


def program(path: str, package: str) -> str:
    """An installed program a test needs (fairy-stockfish, chromium): skipped without it (failed under CI=true,
    where .ci/run installs it). ``package`` is the Debian package that brings it."""
    require(os.access(path, os.X_OK), f"{path} (Debian package {package})")
    return path


@pytest.fixture
def messiah_usi() -> str:
    """The installed messiah-usi (the README's install puts it on the PATH): skipped without it, failed under
    CI=true."""
    path = shutil.which("messiah-usi")
    require(path is not None, "messiah-usi on the PATH (pip install . installs it)")
    return path


@pytest.fixture
def fake(tmp_path) -> str:
    """The command of tests/fake_engine.py, one executable as cshogi.cli wants it; ``$FAKE_MODE`` says how it
    misbehaves."""
    script = tmp_path / "fake"
    script.write_text(f"#!/bin/sh\nexec {sys.executable} {Path(__file__).parent / 'fake_engine.py'} \"$@\"\n")
    script.chmod(0o755)
    return str(script)


def read_hcpe(path: Path, count: int = -1) -> np.ndarray:
    return np.fromfile(path, cshogi.HuffmanCodedPosAndEval, count=count)


@pytest.fixture(scope="session")
def teacher_records() -> np.ndarray:
    """The fixture's teacher records: whole games of every teacher file."""
    return read_hcpe(TEACHER)


def mirror_sfen(sfen: str) -> str:
    """The sfen of the left-right mirror image (the 9-file becomes the 1-file): each rank's cells in
    reverse order. Hands, side to move and move number stay."""
    board, rest = sfen.split(" ", 1)
    ranks = []
    for rank in board.split("/"):
        cells, i = [], 0
        while i < len(rank):
            width = 2 if rank[i] == "+" else 1
            cells.append(rank[i : i + width])
            i += width
        ranks.append("".join(reversed(cells)))
    return "/".join(ranks) + " " + rest


def rotate_sfen(sfen: str) -> str:
    """The same position seen from the other side: the board turned 180 degrees, the colours of the pieces
    and of the hands swapped, the other side to move. (cshogi.rotate_sfen, as of cshogi 1.1.0, drops the
    tens of a hand count: 11P comes back as a single pawn.)"""
    placement, side, hands, *rest = mirror_sfen(sfen).split()
    turned = "/".join(reversed(placement.split("/"))).swapcase()
    return " ".join([turned, "w" if side == "b" else "b", hands.swapcase(), *rest])


def mirror_board(board: cshogi.Board) -> cshogi.Board:
    mirror = cshogi.Board(mirror_sfen(board.sfen()))
    assert mirror.is_ok() and mirror.turn == board.turn, board.sfen()
    return mirror


def mirror_usi(usi: str) -> str:
    """The USI move of the mirrored position: files f -> 10 - f."""
    mirror = {str(f): str(10 - f) for f in range(1, 10)}
    return "".join(mirror.get(c, c) if i in (0, 2) else c for i, c in enumerate(usi))


def make_board(sfen: str) -> cshogi.Board:
    """A cshogi board for a hand-written sfen, checked to be a legal position: it parses back to the
    same sfen, one king per side, and the side not to move is not in check."""
    board = cshogi.Board(sfen)
    assert board.is_ok(), sfen
    assert board.sfen().split()[:3] == sfen.split()[:3], (board.sfen(), sfen)
    pieces = list(board.pieces)
    assert pieces.count(cshogi.BKING) == 1 and pieces.count(cshogi.WKING) == 1, sfen
    # The side that has just moved must not have left its king in check.
    flipped = cshogi.Board(sfen.replace(" b ", " x ").replace(" w ", " b ").replace(" x ", " w "))
    assert not flipped.is_check(), f"side not to move is in check: {sfen}"
    return board
