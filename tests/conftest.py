"""Shared fixtures: positions from the teacher files and small helpers for hand-made positions."""

from __future__ import annotations

import glob
import os
import sys

import cshogi
import numpy as np
import pytest

from messiah.paths import SHARED_DATA

# Let the test modules import tests/reference_features.py as a plain module.
sys.path.insert(0, os.path.dirname(__file__))

TEACHER_GLOB = str(SHARED_DATA / "teacher" / "teacher_s*.hcpe")


def teacher_paths() -> list[str]:
    return sorted(glob.glob(TEACHER_GLOB))


@pytest.fixture(scope="session")
def teacher_records() -> np.ndarray:
    """Every record of every teacher file, concatenated (about 600k HuffmanCodedPosAndEval)."""
    paths = teacher_paths()
    if not paths:
        pytest.skip(f"no teacher data at {TEACHER_GLOB}")
    return np.concatenate([np.fromfile(p, cshogi.HuffmanCodedPosAndEval) for p in paths])


def spread_sample(records: np.ndarray, n: int, offset: int = 0) -> np.ndarray:
    """n records evenly spaced over the whole array (so over every file), shifted by ``offset``."""
    n = min(n, len(records))
    idx = (np.linspace(0, len(records) - 1, n).astype(np.int64) + offset) % len(records)
    return records[idx]


@pytest.fixture(scope="session")
def sample():
    return spread_sample


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
