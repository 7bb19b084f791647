"""A line's history on the playout core's board, one row a position, and cshogi's repetition verdicts on it
(``Board.is_draw``, Apery's isDraw): what the search's leaves and the mate searches judge repetitions by. A row
is written from a position after each move (:func:`remember`, :func:`remember_move`); :func:`history_of` makes
the history of a game from cshogi's board.
"""

from __future__ import annotations

import cshogi
import numpy as np

from messiah.jit import njit
from messiah.playout.attacks import in_check
from messiah.playout.board import BOARD_KEY, HAND, HAND_KEY, NO_REFCOUNTS, TURN, from_board, push
from messiah.rules import REPETITION_PLIES

# --- the layout of a line's history, one row a position, for repetitions (cshogi's is_draw, Apery's isDraw)
H_BOARD_KEY, H_HAND_KEY = 0, 1
H_HAND = 2  # 7 slots: the side to move's hand, to tell a superior repetition from an inferior one
H_CHECKS = 9  # + colour: that colour's unbroken run of checking moves, 2 a move (cshogi's continuousCheck)
H_PLIES = 11  # plies since the position the game was set up from (cshogi's pliesFromNull)
H_TURN = 12
HISTORY_SLOTS = 13
MAX_LINE = 1024  # plies a search's line may add to a history: the deepest descent (search.tree.MAX_DEPTH)
# cshogi's verdicts (Board.is_draw), for the side to move
NOT_REPETITION, REPETITION_DRAW, REPETITION_WIN, REPETITION_LOSE, REPETITION_SUPERIOR, REPETITION_INFERIOR = range(6)


@njit(**NO_REFCOUNTS)
def _write_row(b, h):
    """The parts of a history row the position itself gives: its keys, side to move and that side's hand."""
    h[H_BOARD_KEY] = b[BOARD_KEY]
    h[H_HAND_KEY] = b[HAND_KEY]
    us = h[H_TURN] = b[TURN]
    for i in range(7):
        h[H_HAND + i] = b[HAND + 7 * us + i]


@njit(**NO_REFCOUNTS)
def remember_move(b, history, row, checking):
    """Write ``b`` into ``history[row]`` as the position after a move of ``history[row - 1]``'s, ``checking``
    telling whether that move gave check (a search that knows it saves asking the board)."""
    h = history[row]
    _write_row(b, h)
    us = b[TURN]
    before = history[row - 1]
    mover = 1 - us
    h[H_CHECKS + us] = before[H_CHECKS + us]
    h[H_CHECKS + mover] = before[H_CHECKS + mover] + 2 if checking else 0
    h[H_PLIES] = before[H_PLIES] + 1


@njit(**NO_REFCOUNTS)
def remember(b, history, row, first_plies):
    """Write ``b`` into ``history[row]``: as the position after the move of ``history[row - 1]``'s position, or,
    with ``row`` 0, as the first position known, ``first_plies`` plies after the game was set up, no checks
    before it counted."""
    if row > 0:
        remember_move(b, history, row, in_check(b))
        return
    h = history[0]
    _write_row(b, h)
    h[H_CHECKS] = h[H_CHECKS + 1] = 0
    h[H_PLIES] = first_plies


@njit(**NO_REFCOUNTS)
def repetition(history, row, lookback):
    """cshogi's verdict (``Board.is_draw(lookback)``) on the position of ``history[row]``: the same position an
    even number of plies (4 or more, at most ``lookback``) back is a draw, or a loss for the side to move when its
    every move since was a check (perpetual check), a win when the opponent's were; the same board with a hand at
    least as good for the side to move is superior, one at most as good inferior. The nearest one decides."""
    h = history[row]
    reach = min(h[H_PLIES], lookback, row)
    us = h[H_TURN]
    back = 4
    while back <= reach:
        past = history[row - back]
        if past[H_BOARD_KEY] == h[H_BOARD_KEY]:
            if past[H_HAND_KEY] == h[H_HAND_KEY]:
                if back <= h[H_CHECKS + us]:
                    return REPETITION_LOSE
                if back <= h[H_CHECKS + 1 - us]:
                    return REPETITION_WIN
                return REPETITION_DRAW
            superior = inferior = True
            for i in range(7):
                mine, theirs = h[H_HAND + i], past[H_HAND + i]
                superior &= mine >= theirs
                inferior &= mine <= theirs
            if superior:
                return REPETITION_SUPERIOR
            if inferior:
                return REPETITION_INFERIOR
        back += 2
    return NOT_REPETITION


def history_of(board: cshogi.Board, lookback: int = REPETITION_PLIES) -> tuple[np.ndarray, np.ndarray, int]:
    """The state of ``board`` and the history a repetition verdict needs: its last ``lookback`` plies (fewer when
    the game is shorter), replayed on the core's board from a copy taken back that far. Returns the state, the
    history array (room for ``lookback`` rows more, the line a search adds) and the row of ``board``'s
    position."""
    moves = board.history
    back = min(lookback, len(moves))
    earlier = board.copy()
    for _ in range(back):
        earlier.pop()
    state = from_board(earlier)
    history = np.zeros((back + 1 + lookback + MAX_LINE, HISTORY_SLOTS), np.int64)
    remember(state, history, 0, len(moves) - back)
    for row, move in enumerate(moves[len(moves) - back :], 1):
        push(state, move)
        remember(state, history, row, 0)
    return state, history, back
