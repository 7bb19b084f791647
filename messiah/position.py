"""Positions from text a GUI or a user sends: sfen and USI ``position`` arguments, checked before cshogi
sees them.

cshogi's sfen parser is C++ that aborts the whole process on some malformed hands (``+P``, ``x``, ``-+``)
and accepts positions no game can reach (a pawn on its last rank, 100 pawns in hand, two kings of one
side), on which its move generator then produces moves that are not legal. So the text is checked
against the sfen grammar first and the position against the rules second; cshogi only parses what passed.
"""

from __future__ import annotations

import re

import cshogi

from messiah.errors import UserError

# How many pieces of each kind a game has (a promoted piece counts as its base kind).
PIECE_TOTALS = {"P": 18, "L": 4, "N": 4, "S": 4, "G": 4, "B": 2, "R": 2, "K": 2}
PROMOTABLE = set("PLNSBR")
HAND_PIECE = re.compile(r"([1-9][0-9]?)?([PLNSGBRplnsgbr])")
MOVE_NUMBER = re.compile(r"[0-9]{1,9}")
USI_MOVE = re.compile(r"[1-9][a-i][1-9][a-i]\+?|[PLNSGBR]\*[1-9][a-i]")
# Ranks (0 = rank a, the top of an sfen) where a piece of that kind could never move again.
DEAD_RANKS = {"P": {0}, "L": {0}, "N": {0, 1}, "p": {8}, "l": {8}, "n": {7, 8}}


class PositionError(UserError):
    """Text that is not a playable position, or a move that is not legal in it; the message says why."""


class IllegalMove(PositionError):
    """A move of a position's ``moves`` that is not legal where it stands. ``board`` is the position its first
    ``played`` moves, all legal, lead to: what YaneuraOu and Stockfish search after such a ``position``, ignoring
    the rest."""

    def __init__(self, message: str, board: cshogi.Board, played: int):
        super().__init__(message)
        self.board = board
        self.played = played


def board_from_sfen(sfen: str) -> cshogi.Board:
    """A cshogi board for ``sfen`` (board, side, hands and an optional move number), or PositionError.

    Refused: anything outside the sfen grammar, more pieces of a kind than a game has, a side with two
    kings, a piece on a rank it can never leave, two unpromoted pawns of a side on one file, and the side
    that has just moved standing in check. The side to move may lack a king (a tsume-shogi problem); the
    side that has just moved may not."""
    parts = sfen.split()
    if len(parts) == 3:
        parts.append("1")
    if len(parts) != 4:
        raise PositionError(f"sfen needs 3 or 4 fields (board side hands [move number]), got {len(parts)}: {sfen!r}")
    placement, side, hands, number = parts
    if side not in ("b", "w"):
        raise PositionError(f"side to move must be b or w, got {side!r}")
    if not MOVE_NUMBER.fullmatch(number):
        raise PositionError(f"move number must be a whole number, got {number!r}")
    counts = dict.fromkeys(PIECE_TOTALS, 0)
    kings = {"K": 0, "k": 0}
    pawn_files: set[tuple[str, int]] = set()
    for rank, cells in enumerate(_ranks(placement)):
        for file_index, cell in enumerate(cells):
            if cell is None:
                continue
            piece = cell[-1]
            counts[piece.upper()] += 1
            if piece in kings:
                kings[piece] += 1
            if cell in DEAD_RANKS and rank in DEAD_RANKS[cell]:
                raise PositionError(f"{piece} on rank {'abcdefghi'[rank]} can never move: {sfen!r}")
            if cell in ("P", "p"):
                if (cell, file_index) in pawn_files:
                    raise PositionError(f"two unpromoted pawns of one side on file {9 - file_index}: {sfen!r}")
                pawn_files.add((cell, file_index))
    for piece, count in _hand_counts(hands).items():
        counts[piece.upper()] += count
    for kind, total in PIECE_TOTALS.items():
        if counts[kind] > total:
            raise PositionError(f"{counts[kind]} pieces of kind {kind} (a game has {total}): {sfen!r}")
    if max(kings.values()) > 1:
        raise PositionError(f"a side has two kings: {sfen!r}")
    waiting = "k" if side == "b" else "K"
    if kings[waiting] == 0:
        raise PositionError(f"the side that has just moved has no king: {sfen!r}")
    board = cshogi.Board()
    board.set_sfen(" ".join(parts))
    if not board.is_ok():
        raise PositionError(f"cshogi refuses the position: {sfen!r}")
    other = cshogi.Board(" ".join([placement, "w" if side == "b" else "b", hands, number]))
    if other.is_check():
        raise PositionError(f"the side that has just moved is in check: {sfen!r}")
    return board


def _ranks(placement: str) -> list[list[str | None]]:
    """The nine ranks of an sfen board, each nine cells of a piece ('P', '+p', ...) or None."""
    ranks = placement.split("/")
    if len(ranks) != 9:
        raise PositionError(f"sfen board needs 9 ranks separated by '/', got {len(ranks)}: {placement!r}")
    out = []
    for text in ranks:
        cells: list[str | None] = []
        i = 0
        while i < len(text):
            ch = text[i]
            if ch in "123456789":
                cells += [None] * int(ch)
                i += 1
            elif ch == "+" and i + 1 < len(text) and text[i + 1].upper() in PROMOTABLE:
                cells.append(text[i : i + 2])
                i += 2
            elif ch.upper() in PIECE_TOTALS:
                cells.append(ch)
                i += 1
            else:
                raise PositionError(f"unexpected {ch!r} in sfen rank {text!r}")
        if len(cells) != 9:
            raise PositionError(f"sfen rank {text!r} is {len(cells)} squares wide, not 9")
        out.append(cells)
    return out


def _hand_counts(hands: str) -> dict[str, int]:
    """Pieces in hand by sfen letter; '-' is none. Each letter at most once, counts 1..18."""
    if hands == "-":
        return {}
    counts: dict[str, int] = {}
    at = 0
    for match in HAND_PIECE.finditer(hands):
        if match.start() != at:
            break
        piece = match.group(2)
        if piece in counts:
            raise PositionError(f"{piece} appears twice in the hands {hands!r}")
        counts[piece] = int(match.group(1) or 1)
        at = match.end()
    if at != len(hands) or not counts:
        raise PositionError(f"hands must be '-' or counts and pieces such as 2Pb, got {hands!r}")
    return counts


def parse_position(args: list[str]) -> cshogi.Board:
    """The board for the arguments of a USI ``position`` command (``startpos`` or ``sfen <4 fields>``,
    then optionally ``moves ...``). Raises PositionError naming what is wrong: IllegalMove, which carries the
    position before it, for a move that is not legal."""
    if not args:
        raise PositionError("position needs startpos or sfen")
    if "moves" in args:
        cut = args.index("moves")
        setup, moves = args[:cut], args[cut + 1 :]
    else:
        setup, moves = args, []
    if setup == ["startpos"]:
        board = cshogi.Board()
    elif setup and setup[0] == "sfen" and len(setup) in (4, 5):
        board = board_from_sfen(" ".join(setup[1:]))
    else:
        raise PositionError(f"expected 'startpos' or 'sfen <board> <side> <hands> [move number]', "
                            f"got {' '.join(setup)[:200]!r}")
    for ply, usi in enumerate(moves, 1):
        move = board.move_from_usi(usi) if USI_MOVE.fullmatch(usi) else 0
        # board.is_legal() accepts impossible promotions (7g7f+) and dead-rank drops: use the generator
        if move == 0 or move not in set(board.legal_moves):
            raise IllegalMove(f"illegal move {usi[:20]!r} at move {ply} of position", board, ply - 1)
        board.push(move)
    return board


def perpetual_check_winner(board: cshogi.Board, repetition: int) -> int | None:
    """The winner (a colour) of a game that repeated into ``board`` when the repetition (``board.is_draw()``) is a
    perpetual check, which the side giving the checks loses; None for a plain repetition, a draw."""
    if repetition == cshogi.REPETITION_WIN:  # the side to move was checked throughout
        return board.turn
    if repetition == cshogi.REPETITION_LOSE:
        return cshogi.opponent(board.turn)
    return None
