"""A plain, slow reference implementation of the 36 feature planes, written from the specification in
the module docstring of ``messiah/features.py`` only (none of its code or tables are used).

The board is first copied into a 9x9 grid seen from the side to move ("own"): own pieces always
advance toward rank a. Each piece's movement is a list of named (file delta, rank delta) vectors in
its owner's frame, with a flag saying whether it slides. Rays are walked square by square.

Only ``board.pieces``, ``board.pieces_in_hand`` and ``board.turn`` are read from cshogi.
"""

from __future__ import annotations

from typing import NamedTuple

import numpy as np

# --- tensor layout ----------------------------------------------------------------------------------

CHANNELS = 36
ROWS = 11  # row 0 = opponent's hand, rows 1..9 = ranks a..i, row 10 = own hand
COLS = 9  # column = file index (0 = the 1-file)
OPPONENT_HAND_ROW = 0
OWN_HAND_ROW = 10

CH_KIND = 0  # + kind index (P L N S G B R K)
CH_PROMOTED = 8
CH_OWN_ATTACK = 9
CH_OPP_ATTACK = 10
CH_OWN_DIRECTION = 11  # + direction index
CH_OPP_DIRECTION = 21  # + direction index
CH_OWN_HIMO = 31
CH_OPP_HIMO = 32
CH_OWN_ATARI = 33
CH_OPP_ATARI = 34
CH_BOARD = 35

OWN, OPP = 0, 1

# --- pieces -----------------------------------------------------------------------------------------

# Unpromoted kinds, numbered like the kind channels 0..7.
KIND_PAWN, KIND_LANCE, KIND_KNIGHT, KIND_SILVER, KIND_GOLD, KIND_BISHOP, KIND_ROOK, KIND_KING = range(8)

# cshogi piece types (a white piece's code is its type + 16).
PAWN, LANCE, KNIGHT, SILVER, BISHOP, ROOK, GOLD, KING = 1, 2, 3, 4, 5, 6, 7, 8
PROM_PAWN, PROM_LANCE, PROM_KNIGHT, PROM_SILVER, HORSE, DRAGON = 9, 10, 11, 12, 13, 14
WHITE_CODE_OFFSET = 16

# cshogi piece type -> (kind index, promoted?)
PIECE_TYPES = {
    PAWN: (KIND_PAWN, False),
    LANCE: (KIND_LANCE, False),
    KNIGHT: (KIND_KNIGHT, False),
    SILVER: (KIND_SILVER, False),
    GOLD: (KIND_GOLD, False),
    BISHOP: (KIND_BISHOP, False),
    ROOK: (KIND_ROOK, False),
    KING: (KIND_KING, False),
    PROM_PAWN: (KIND_PAWN, True),
    PROM_LANCE: (KIND_LANCE, True),
    PROM_KNIGHT: (KIND_KNIGHT, True),
    PROM_SILVER: (KIND_SILVER, True),
    HORSE: (KIND_BISHOP, True),
    DRAGON: (KIND_ROOK, True),
}

# Hands in cshogi order P L N S G B R: the kind channel of each and its maximum count.
HAND_KINDS = [KIND_PAWN, KIND_LANCE, KIND_KNIGHT, KIND_SILVER, KIND_GOLD, KIND_BISHOP, KIND_ROOK]
HAND_MAX_COUNTS = [18, 4, 4, 4, 4, 2, 2]

# --- directions, in a piece owner's own frame (forward = toward rank a = rank delta -1) --------------

N = (0, -1)
NE = (-1, -1)
E = (-1, 0)  # toward the 1-file
SE = (-1, 1)
S = (0, 1)
SW = (1, 1)
W = (1, 0)
NW = (1, -1)
KNIGHT_E = (-1, -2)
KNIGHT_W = (1, -2)

# Direction channel order (channel = CH_OWN_DIRECTION / CH_OPP_DIRECTION + index).
DIRECTIONS = [N, NE, E, SE, S, SW, W, NW, KNIGHT_E, KNIGHT_W]
DIRECTION_NAMES = ["N", "NE", "E", "SE", "S", "SW", "W", "NW", "knight-E", "knight-W"]


class Movement(NamedTuple):
    direction: tuple[int, int]
    slides: bool


def steps(*directions):
    return [Movement(d, False) for d in directions]


def slides(*directions):
    return [Movement(d, True) for d in directions]


GOLD_MOVES = steps(N, NE, NW, E, W, S)
ORTHOGONAL = [N, E, S, W]
DIAGONAL = [NE, SE, SW, NW]

MOVEMENTS = {
    PAWN: steps(N),
    LANCE: slides(N),
    KNIGHT: steps(KNIGHT_E, KNIGHT_W),
    SILVER: steps(N, NE, NW, SE, SW),
    GOLD: GOLD_MOVES,
    BISHOP: slides(*DIAGONAL),
    ROOK: slides(*ORTHOGONAL),
    KING: steps(*ORTHOGONAL, *DIAGONAL),
    PROM_PAWN: GOLD_MOVES,
    PROM_LANCE: GOLD_MOVES,
    PROM_KNIGHT: GOLD_MOVES,
    PROM_SILVER: GOLD_MOVES,
    HORSE: slides(*DIAGONAL) + steps(*ORTHOGONAL),
    DRAGON: slides(*ORTHOGONAL) + steps(*DIAGONAL),
}


class Piece(NamedTuple):
    owner: int  # OWN or OPP
    piece_type: int  # cshogi piece type, 1..14


def own_frame_grid(board) -> list[list[Piece | None]]:
    """grid[file][rank] in the side to move's frame (rotated 180 degrees when white is to move)."""
    white_to_move = board.turn == 1
    grid = [[None] * 9 for _ in range(9)]
    for square, code in enumerate(board.pieces):
        if code == 0:
            continue
        file, rank = divmod(square, 9)
        piece_is_white = code > WHITE_CODE_OFFSET
        piece_type = code - WHITE_CODE_OFFSET if piece_is_white else code
        owner = OWN if piece_is_white == white_to_move else OPP
        if white_to_move:
            file, rank = 8 - file, 8 - rank
        grid[file][rank] = Piece(owner, piece_type)
    return grid


def on_board(file, rank):
    return 0 <= file < 9 and 0 <= rank < 9


def attacked_squares(grid, file, rank, *, slider_stops=True, flip_opponent=True):
    """Yield (file, rank, direction index) for every square the piece on (file, rank) attacks.

    The keyword switches exist only to build deliberately wrong planes in the tests (a slider that does
    not stop at the first occupied square; opponent pieces moving as if they were own pieces).
    """
    piece = grid[file][rank]
    for direction, is_slider in MOVEMENTS[piece.piece_type]:
        direction_index = DIRECTIONS.index(direction)
        df, dr = direction
        if piece.owner == OPP and flip_opponent:  # the opponent's "forward" points toward rank i
            df, dr = -df, -dr
        f, r = file + df, rank + dr
        while on_board(f, r):
            yield f, r, direction_index
            if not is_slider:
                break
            if grid[f][r] is not None and slider_stops:
                break
            f, r = f + df, r + dr


def reference_planes(board, *, slider_stops=True, flip_opponent=True) -> np.ndarray:
    """The (36, 11, 9) float32 feature planes of a cshogi board, computed the slow, obvious way."""
    out = np.zeros((CHANNELS, ROWS, COLS), np.float32)
    grid = own_frame_grid(board)

    def row(rank):
        return 1 + rank

    # Board mask.
    out[CH_BOARD, 1:10, :] = 1

    # Piece kinds and promotion.
    for file in range(9):
        for rank in range(9):
            piece = grid[file][rank]
            if piece is None:
                continue
            kind, promoted = PIECE_TYPES[piece.piece_type]
            out[CH_KIND + kind, row(rank), file] = 1 if piece.owner == OWN else -1
            if promoted:
                out[CH_PROMOTED, row(rank), file] = 1

    # Hands: count / max on every cell of the row, positive for own, negative for the opponent.
    black_hand, white_hand = board.pieces_in_hand
    own_hand, opp_hand = (black_hand, white_hand) if board.turn == 0 else (white_hand, black_hand)
    for i, kind in enumerate(HAND_KINDS):
        out[CH_KIND + kind, OWN_HAND_ROW, :] = own_hand[i] / HAND_MAX_COUNTS[i]
        out[CH_KIND + kind, OPPONENT_HAND_ROW, :] = -opp_hand[i] / HAND_MAX_COUNTS[i]

    # Attacks, overall and by direction.
    for file in range(9):
        for rank in range(9):
            piece = grid[file][rank]
            if piece is None:
                continue
            attack_channel = CH_OWN_ATTACK if piece.owner == OWN else CH_OPP_ATTACK
            direction_base = CH_OWN_DIRECTION if piece.owner == OWN else CH_OPP_DIRECTION
            for f, r, d in attacked_squares(grid, file, rank, slider_stops=slider_stops, flip_opponent=flip_opponent):
                out[attack_channel, row(r), f] = 1
                out[direction_base + d, row(r), f] = 1

    # Himo (defended by a piece of the same side) and atari (attacked by the other side).
    for file in range(9):
        for rank in range(9):
            piece = grid[file][rank]
            if piece is None:
                continue
            own_attacks = out[CH_OWN_ATTACK, row(rank), file] == 1
            opp_attacks = out[CH_OPP_ATTACK, row(rank), file] == 1
            if piece.owner == OWN:
                out[CH_OWN_HIMO, row(rank), file] = 1 if own_attacks else 0
                out[CH_OWN_ATARI, row(rank), file] = 1 if opp_attacks else 0
            else:
                out[CH_OPP_HIMO, row(rank), file] = 1 if opp_attacks else 0
                out[CH_OPP_ATARI, row(rank), file] = 1 if own_attacks else 0
    return out


CHANNEL_NAMES = (
    [f"kind {k}" for k in "PLNSGBRK"]
    + ["promoted", "own attack", "opponent attack"]
    + [f"own attack {d}" for d in DIRECTION_NAMES]
    + [f"opponent attack {d}" for d in DIRECTION_NAMES]
    + ["own himo", "opponent himo", "own atari", "opponent atari", "board"]
)
assert len(CHANNEL_NAMES) == CHANNELS
