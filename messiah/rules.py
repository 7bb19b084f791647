"""The rules of a game that the board does not carry: how an entering king wins (YaneuraOu's
``EnteringKingRule``), what a draw is worth to the engine (``DrawValueBlack``/``DrawValueWhite``) and the ply
at which a game still going is a draw (``MaxMovesToDraw``). The searches value their leaves by them and the
USI engine declares by them, so the engine plays the game the GUI says it is playing. And the game's numbers
that the rest of messiah sizes or stops by: the most legal moves a position can have (:data:`MAX_LEGAL_MOVES`)
and the ply at which the project's own games are drawn (:data:`DRAW_PLY`).

Entering-king rules, with YaneuraOu's names (its ``Position::DeclarationWin``):

- ``NoEnteringKing``: no declaration.
- ``CSARule24``: the 24-point rule: the side to move declares and wins with 31 points or more.
- ``CSARule27``: the CSA rule of floodgate and the computer-shogi tournaments: 28 points for black, 27 for white.
- ``CSARule24H``, ``CSARule27H``: the same for handicap games: the handicap giver (white) needs as many points
  fewer as its missing pieces were worth, so that a two-piece game asks 27 - 10 = 17 of it under ``CSARule27H``
  (YaneuraOu's ``update_entering_point``).
- ``TryRule``: a king that reaches the square the opponent's king started on (5a for black, 5i for white)
  wins; the move itself is the win.

Points count 5 for a rook or bishop (promoted or not) and 1 for any other piece, over the declarer's pieces in
hand and on the opponent's three ranks, its king left out. Besides the points, a declaration needs the king on
those ranks, ten pieces there besides it, and the king not in check. cshogi judges the two point rules of a
full set (``Board.is_nyugyoku``); the handicap variants and the try rule are judged here.
"""

from __future__ import annotations

from dataclasses import dataclass

import cshogi

ENTERING_KING_RULES = ("NoEnteringKing", "CSARule24", "CSARule24H", "CSARule27", "CSARule27H", "TryRule")
DEFAULT_ENTERING_KING_RULE = "CSARule27"  # floodgate's and the CSA tournaments' rule, YaneuraOu's default
DRAW = 0.5  # a draw's value for the side to move when neither side is told to avoid one
MAX_LEGAL_MOVES = 593  # the most legal moves a shogi position can have (a known composed position)
# Plies of a game's history searched for a repetition (cshogi's Board.is_draw(16), the search's and the playout
# core's alike): a line that comes back to a position further back than this goes on.
REPETITION_PLIES = 16
# The ply at which the project's own games still going are draws: teacher generation (gensfen --max-ply), self-play
# (rl --max-ply) and matches (match --draw). The engine itself draws only at MaxMovesToDraw (0: never); cshogi.cli's
# own default is 256.
DRAW_PLY = 320

FULL_SET_POINTS = 54  # all 38 pieces but the kings: 2 x (17 small pieces at 1 + a rook and a bishop at 5)
POINTS_NEEDED = {"CSARule24": (31, 31), "CSARule27": (28, 27)}  # (black, white) for a full set
CSHOGI_LAW = {"CSARule24": cshogi.LAW_24, "CSARule27": cshogi.LAW_27}
CAMP_PIECES = 10  # pieces besides the king on the opponent's three ranks
TRY_SQUARE = (cshogi.A5, cshogi.I5)  # 5a for black, 5i for white: where the opponent's king started
# cshogi's piece codes: a rook or a bishop, promoted or not, of either colour
BIG = frozenset({cshogi.BBISHOP, cshogi.BROOK, cshogi.BPROM_BISHOP, cshogi.BPROM_ROOK,
                 cshogi.WBISHOP, cshogi.WROOK, cshogi.WPROM_BISHOP, cshogi.WPROM_ROOK})
HAND_POINTS = (1, 1, 1, 1, 1, 5, 5)  # cshogi's hand order: pawn, lance, knight, silver, gold, bishop, rook
WHITE_PIECE = 16  # cshogi's white piece codes are black's plus this


def in_camp(square: int, colour: int) -> bool:
    """Whether ``square`` is on the opponent's three ranks for ``colour`` (ranks a-c for black)."""
    rank = square % 9
    return rank <= 2 if colour == cshogi.BLACK else rank >= 6


def piece_points(piece: int) -> int:
    return 5 if piece in BIG else 1


def declaration_points(board: cshogi.Board) -> int | None:
    """The side to move's declaration points, or None when it cannot declare whatever its points: its king
    off the opponent's three ranks, fewer than ten other pieces there, or its king in check."""
    us = board.turn
    if not in_camp(board.king_square(us), us) or board.is_check():
        return None
    mine = [p for sq, p in enumerate(board.pieces) if p and (p >= WHITE_PIECE) == (us == cshogi.WHITE)
            and in_camp(sq, us)]
    if len(mine) - 1 < CAMP_PIECES:  # the king is among them
        return None
    hand = board.pieces_in_hand[us]
    return sum(map(piece_points, mine)) - 1 + sum(n * p for n, p in zip(hand, HAND_POINTS, strict=True))


def material_points(board: cshogi.Board) -> int:
    """Both sides' points on the board (kings left out) and in hand: FULL_SET_POINTS unless pieces were given."""
    on_board = sum(piece_points(p) for p in board.pieces if p and p not in (cshogi.BKING, cshogi.WKING))
    in_hand = sum(n * p for hand in board.pieces_in_hand for n, p in zip(hand, HAND_POINTS, strict=True))
    return on_board + in_hand


def points_needed(rule: str, board: cshogi.Board) -> int:
    """The points the side to move needs to declare under a point rule; under a handicap variant the
    handicap giver (white) needs fewer by its missing pieces' worth."""
    base = rule.rstrip("H")
    need = POINTS_NEEDED[base][board.turn]
    if rule.endswith("H") and board.turn == cshogi.WHITE:
        need -= FULL_SET_POINTS - material_points(board)
    return need


def try_move(board: cshogi.Board) -> int:
    """The side to move's king move to its try square if that move is legal (a move the opponent can answer
    by taking the king is not), else 0."""
    us = board.turn
    king, target = board.king_square(us), TRY_SQUARE[us]
    if abs(king // 9 - target // 9) > 1 or abs(king % 9 - target % 9) > 1 or king == target:
        return 0
    move = board.move(king, target, False)
    return move if board.is_legal(move) else 0


@dataclass(frozen=True)
class GameRules:
    """The rules a search values its leaves by. ``draw_black`` and ``draw_white`` are the engine's value of a
    draw (0..1) when it plays black and white (dlshogi's and YaneuraOu's DrawValueBlack/DrawValueWhite in
    thousandths): below 0.5 it avoids draws, above it seeks them; the opponent is taken to value a draw at one
    minus the engine's. ``max_moves`` (0: none) is the ply past which a game still going is a draw."""

    entering_king: str = DEFAULT_ENTERING_KING_RULE
    draw_black: float = DRAW
    draw_white: float = DRAW
    max_moves: int = 0

    def __post_init__(self) -> None:
        if self.entering_king not in ENTERING_KING_RULES:
            raise ValueError(f"unknown entering-king rule {self.entering_king!r}: one of "
                             f"{', '.join(ENTERING_KING_RULES)}")

    def declaration(self, board: cshogi.Board) -> int | None:
        """How the side to move wins at once by the entering-king rule: 0 for a declaration (USI's ``bestmove
        win``), the king's move under the try rule, None when it cannot."""
        rule = self.entering_king
        law = CSHOGI_LAW.get(rule)
        if law is not None:  # the usual rules first: this runs at every leaf of a search
            return 0 if board.is_nyugyoku(law) else None
        if rule == "NoEnteringKing":
            return None
        if rule == "TryRule":
            return try_move(board) or None
        if not in_camp(board.king_square(board.turn), board.turn):  # most positions: no need to count
            return None
        points = declaration_points(board)
        return 0 if points is not None and points >= points_needed(rule, board) else None

    def tried(self, board: cshogi.Board) -> bool:
        """Whether the game ended with the last move under the try rule: the side that moved stands on its try
        square (the side to move has lost)."""
        if self.entering_king != "TryRule":
            return False
        them = cshogi.opponent(board.turn)
        return board.king_square(them) == TRY_SQUARE[them]

    def draw_value(self, board: cshogi.Board, ply: int) -> float:
        """A draw's value for the side to move of ``board``, ``ply`` plies from the root, where the engine is to
        move: its own draw value for its colour at even plies, one minus it at odd plies."""
        engine = board.turn if ply % 2 == 0 else cshogi.opponent(board.turn)
        value = self.draw_black if engine == cshogi.BLACK else self.draw_white
        return value if ply % 2 == 0 else 1.0 - value

    def past_max_moves(self, board: cshogi.Board) -> bool:
        return bool(self.max_moves) and board.move_number > self.max_moves
