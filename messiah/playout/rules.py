"""The entering-king rules (:mod:`messiah.rules`) judged on the playout core's board, in compiled code: whether
the side to move wins at once by declaring (or by the try rule's king move), and whether the last move was a
won try. The numbers are messiah.rules' (points, camp pieces, try squares); this module only counts them on the
core's board. tests/test_playout_rules.py holds it against cshogi's ``is_nyugyoku`` and messiah.rules."""

from __future__ import annotations

import numpy as np

from messiah.jit import njit
from messiah.playout.attacks import attacked, in_check
from messiah.playout.board import (
    BISHOP,
    HAND,
    KING,
    KING_TYPE,
    NEXT,
    NO_REFCOUNTS,
    PROMOTED,
    ROOK,
    TURN,
    WHITE,
    WHITE_CODE,
    colour_of,
    encode_move,
    in_zone,
    put,
)
from messiah.rules import (
    CAMP_PIECES,
    ENTERING_KING_RULES,
    FULL_SET_POINTS,
    HAND_POINTS,
    POINTS_NEEDED,
    TRY_SQUARE,
)

NO_ENTERING_KING, CSA_24, CSA_24_H, CSA_27, CSA_27_H, TRY = range(len(ENTERING_KING_RULES))
assert ENTERING_KING_RULES[CSA_27] == "CSARule27" and ENTERING_KING_RULES[TRY] == "TryRule"
NO_DECLARATION = -1
_NEEDED = np.array([(0, 0), POINTS_NEEDED["CSARule24"], POINTS_NEEDED["CSARule24"], POINTS_NEEDED["CSARule27"],
                    POINTS_NEEDED["CSARule27"], (0, 0)], np.int64)  # [rule, colour]
_HANDICAP = np.array([rule.endswith("H") for rule in ENTERING_KING_RULES])
_HAND_POINTS = np.array(HAND_POINTS, np.int64)
_TRY = np.array(TRY_SQUARE, np.int64)


def rule_code(name: str) -> int:
    """The code of an entering-king rule by its USI name (messiah.rules.ENTERING_KING_RULES)."""
    return ENTERING_KING_RULES.index(name)


@njit(**NO_REFCOUNTS)
def _points(code):
    t = code & 15
    return 5 if t == BISHOP or t == ROOK or t == BISHOP + PROMOTED or t == ROOK + PROMOTED else 1


@njit(**NO_REFCOUNTS)
def _try_move(b, us):
    """The side to move's king move to its try square when legal, else NO_DECLARATION."""
    king, target = b[KING + us], _TRY[us]
    if king < 0:
        return NO_DECLARATION
    for d in range(8):
        if NEXT[king, d] == target:
            code = b[target]
            if code and colour_of(code) == us:
                return NO_DECLARATION
            saved = b[king]
            put(b, king, 0)  # the king no longer shields the squares behind it
            safe = not attacked(b, target, 1 - us)
            put(b, king, saved)
            return encode_move(king, target, 0, KING_TYPE, code & 15) if safe else NO_DECLARATION
    return NO_DECLARATION


@njit(**NO_REFCOUNTS)
def declaration(b, rule):
    """How the side to move wins at once under ``rule`` (a code of :data:`ENTERING_KING_RULES`): 0 for a
    declaration, the king's move under the try rule, NO_DECLARATION when it cannot (messiah.rules.GameRules'
    ``declaration``, None there)."""
    if rule == NO_ENTERING_KING:
        return NO_DECLARATION
    us = b[TURN]
    if rule == TRY:
        return _try_move(b, us)
    king = b[KING + us]
    if king < 0 or not in_zone(us, king) or in_check(b):
        return NO_DECLARATION
    pieces = points = 0
    material = 0  # both sides' points, kings left out: a full set's unless pieces were given
    for sq in range(81):
        code = b[sq]
        if code == 0 or code & 15 == 8:
            continue
        material += _points(code)
        if colour_of(code) == us and in_zone(us, sq):
            pieces += 1
            points += _points(code)
    for c in range(2):
        for h in range(7):
            n = b[HAND + 7 * c + h]
            material += n * _HAND_POINTS[h]
            if c == us:
                points += n * _HAND_POINTS[h]
    if pieces < CAMP_PIECES:
        return NO_DECLARATION
    need = _NEEDED[rule, us]
    if _HANDICAP[rule] and us == WHITE:
        need -= FULL_SET_POINTS - material
    return 0 if points >= need else NO_DECLARATION


@njit(**NO_REFCOUNTS)
def tried(b, rule):
    """Whether the last move won by the try rule: the side that moved stands on its try square."""
    if rule != TRY:
        return False
    them = 1 - b[TURN]
    return b[KING + them] == _TRY[them] and b[_TRY[them]] == 8 + WHITE_CODE * them
