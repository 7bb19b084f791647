"""The opening book: YaneuraOu's standard text format (``#YANEURAOU-DB2016 1.00``), read, written and probed
as YaneuraOu does, so that a player's books and habits carry over.

The format, one position after another, sorted by sfen::

    #YANEURAOU-DB2016 1.00
    sfen lnsgkgsnl/1r5b1/ppppppppp/9/9/2P6/PP1PPPPPP/1B5R1/LNSGKGSNL w - 2
    3c3d 2g2f 0 0 2745
    8c8d 2g2f 0 0 1301

Each move line is ``<move> <ponder> [<value> [<depth> [<count>]]]``: the move, the expected reply ('none'
when unknown), the value in cp for the side to move, the depth of the search that gave it, and how often the
move was played. Lines starting with ``#`` or ``//`` are comments. cshogi reads only Apery's binary books,
and the one PyPI reader of this format writes none, hence this small module.

Probing follows YaneuraOu's rules and option names (:class:`BookRules`): the book is used up to game ply
``BookMoves``; with ``NarrowBook`` moves played in less than 10% of the position's games are dropped; if the
best move's depth is below ``BookDepthLimit`` (0: any) the book is not used; moves more than ``BookEvalDiff``
cp below the best, or below ``BookEvalBlackLimit``/``BookEvalWhiteLimit`` for the side to move, are dropped;
one of the rest is drawn, in proportion to its count with ``ConsiderBookMoveCount``, else uniformly. A
position missing from the book is looked up with colours swapped (``FlippedBook``), and the sfen's ply is
part of the key unless ``IgnoreBookPly``.
"""

from __future__ import annotations

import os
import random
from dataclasses import dataclass, field
from pathlib import Path

import cshogi

from messiah.errors import DataError
from messiah.files import atomic_path

HEADER = "#YANEURAOU-DB2016 1.00"
NO_BOOK = "no_book"
NARROW_SHARE = 0.1  # NarrowBook drops moves played in less than this share of the position's games


@dataclass
class BookMove:
    """One move of a book position (USI strings; ``ponder`` is 'none' when unknown)."""

    move: str
    ponder: str = "none"
    value: int = 0
    depth: int = 0
    count: int = 1

    def line(self) -> str:
        return f"{self.move} {self.ponder} {self.value} {self.depth} {self.count}"


@dataclass(frozen=True)
class BookRules:
    """How a book move is chosen: YaneuraOu's options of the same names (messiah.engine.options)."""

    moves: int = 16  # BookMoves: the book is used up to this game ply
    eval_diff: int = 30  # BookEvalDiff
    black_limit: int = 0  # BookEvalBlackLimit
    white_limit: int = -140  # BookEvalWhiteLimit
    depth_limit: int = 0  # BookDepthLimit (0: any depth; books built from game records have none)
    narrow: bool = False  # NarrowBook
    flipped: bool = True  # FlippedBook
    ignore_ply: bool = False  # IgnoreBookPly
    by_count: bool = True  # ConsiderBookMoveCount


def _key(sfen: str, ignore_ply: bool) -> str:
    """The book's key of an sfen: board, side and hands, with the ply unless ``ignore_ply``."""
    words = sfen.split()
    return " ".join(words[:3] if ignore_ply else words[:4])


def flip_sfen(sfen: str) -> str:
    """The same position with the colours swapped: the board turned 180 degrees, pieces and hands changing
    owner, the other side to move (the ply kept)."""
    board, side, hands, *ply = sfen.split()
    flipped = "/".join("".join(_flip_rank(rank)) for rank in reversed(board.split("/")))
    hands = "-" if hands == "-" else _flip_hands(hands)
    return " ".join([flipped, "w" if side == "b" else "b", hands, *ply])


def _flip_rank(rank: str) -> list[str]:
    tokens, i = [], 0
    while i < len(rank):
        token = rank[i : i + 2] if rank[i] == "+" else rank[i]
        tokens.append(token.swapcase())
        i += len(token)
    return tokens[::-1]


def _flip_hands(hands: str) -> str:
    """Hands with the owners swapped, black's first as an sfen writes them."""
    swapped = hands.swapcase()
    pieces, count = [], ""
    for ch in swapped:
        if ch.isdigit():
            count += ch
        else:
            pieces.append(count + ch)
            count = ""
    return "".join(sorted(pieces, key=lambda p: p[-1].islower()))


def flip_move(move: str) -> str:
    """A USI move seen from the other side: squares turned 180 degrees (7g7f -> 3c3d, P*5e -> P*5e)."""
    if move in ("none", "resign", "win"):
        return move

    def square(s: str) -> str:
        return f"{10 - int(s[0])}{chr(ord('a') + ord('i') - ord(s[1]))}"

    if move[1] == "*":
        return move[:2] + square(move[2:4])
    return square(move[0:2]) + square(move[2:4]) + move[4:]


@dataclass
class Book:
    """Positions (their sfen with the ply) and their book moves, best or most played first."""

    positions: dict[str, list[BookMove]] = field(default_factory=dict)
    # IgnoreBookPly's index, built when first needed
    _plyless: dict[str, list[BookMove]] | None = field(default=None, init=False, repr=False, compare=False)

    def __len__(self) -> int:
        return len(self.positions)

    def add(self, sfen: str, move: BookMove) -> None:
        """Count ``move`` in ``sfen`` (an existing entry of the same move adds its count)."""
        self._plyless = None
        moves = self.positions.setdefault(_key(sfen, False), [])
        for known in moves:
            if known.move == move.move:
                known.count += move.count
                return
        moves.append(move)

    def lookup(self, sfen: str, ignore_ply: bool = False, flipped: bool = True) -> list[BookMove]:
        """The book moves of ``sfen`` (empty when it is not in the book), as moves of this position even when
        found with colours swapped."""
        index = self._index(ignore_ply)
        found = index.get(_key(sfen, ignore_ply))
        if found is None and flipped:
            found = [BookMove(flip_move(m.move), flip_move(m.ponder), m.value, m.depth, m.count)
                     for m in index.get(_key(flip_sfen(sfen), ignore_ply), [])]
        return list(found or [])

    def _index(self, ignore_ply: bool) -> dict[str, list[BookMove]]:
        if not ignore_ply:
            return self.positions
        if self._plyless is None:
            self._plyless = {}
            for sfen, moves in self.positions.items():
                self._plyless.setdefault(_key(sfen, True), moves)  # the first ply seen of a position, as YaneuraOu
        return self._plyless

    def sort(self) -> None:
        """Each position's moves best first: by value, then by count."""
        for moves in self.positions.values():
            moves.sort(key=lambda m: (-m.value, -m.count))

    def choose(self, board: cshogi.Board, rules: BookRules, rng: random.Random) -> tuple[BookMove | None, list[str]]:
        """The book move to play in ``board`` under ``rules`` (None: not from the book) and why moves were
        dropped, as lines for an ``info string``."""
        notes: list[str] = []
        if board.move_number > rules.moves:
            return None, notes
        legal = {cshogi.move_to_usi(m) for m in board.legal_moves}
        moves = [m for m in self.lookup(board.sfen(), rules.ignore_ply, rules.flipped) if m.move in legal]
        if not moves:
            return None, notes
        moves.sort(key=lambda m: (-m.value, -m.count))
        total = max(1, sum(m.count for m in moves))
        if rules.narrow:
            kept = [m for m in moves if m.count / total >= NARROW_SHARE]
            if len(kept) < len(moves):
                notes.append(f"NarrowBook: {len(moves)} moves to {len(kept)}")
            moves = kept
        if moves and rules.depth_limit and moves[0].depth < rules.depth_limit:
            notes.append(f"BookDepthLimit {rules.depth_limit}: the book's depth here is {moves[0].depth}")
            moves = []
        if moves:
            limit = rules.black_limit if board.turn == cshogi.BLACK else rules.white_limit
            floor = max(moves[0].value - rules.eval_diff, limit)
            kept = [m for m in moves if m.value >= floor]
            if len(kept) < len(moves):
                notes.append(f"BookEvalDiff {rules.eval_diff}, limit {limit}: {len(moves)} moves to {len(kept)}")
            moves = kept
        if not moves:
            return None, notes
        if rules.by_count and any(m.count for m in moves):
            chosen = rng.choices(moves, weights=[m.count for m in moves])[0]
        else:
            chosen = rng.choice(moves)
        if chosen.ponder == "none":  # the most played reply, where the book knows the next position
            board.push_usi(chosen.move)
            replies = sorted(self.lookup(board.sfen(), rules.ignore_ply, rules.flipped), key=lambda m: -m.count)
            board.pop()
            if replies:
                chosen = BookMove(chosen.move, replies[0].move, chosen.value, chosen.depth, chosen.count)
        return chosen, notes

    def write(self, path: str | os.PathLike) -> Path:
        """Write the book as YaneuraOu does: the header, then the positions sorted by sfen, five fields a move
        (atomically: a reader never sees half a book)."""
        path = Path(path)
        self.sort()
        with atomic_path(path) as tmp, open(tmp, "w", encoding="utf-8", newline="\n") as f:
            f.write(HEADER + "\n")
            for sfen in sorted(self.positions):
                f.write(f"sfen {sfen}\n")
                f.writelines(m.line() + "\n" for m in self.positions[sfen])
        return path


def read_book(path: str | os.PathLike) -> Book:
    """A book in YaneuraOu's text format. DataError naming the file and line for anything else."""
    path = Path(path)
    try:
        lines: list[str] = path.read_text(encoding="utf-8").splitlines()
    except (OSError, UnicodeDecodeError) as e:
        raise DataError(f"{path}: cannot read the book ({e})") from None
    book, sfen = Book(), None
    for number, line in enumerate(lines, 1):
        line = line.strip()
        if not line or line.startswith(("#", "//")):
            continue
        words = line.split()
        if words[0] == "sfen":
            if len(words) < 4:
                raise DataError(f"{path}:{number}: 'sfen <board> <side> <hands> [<ply>]' expected, got {line[:80]!r}")
            sfen = " ".join(words[1:5]) if len(words) >= 5 else " ".join([*words[1:4], "1"])
            book.positions.setdefault(sfen, [])
            continue
        if sfen is None:
            raise DataError(f"{path}:{number}: a move line before any 'sfen' line")
        try:
            fields = [int(w) for w in words[2:5]]
        except ValueError:
            raise DataError(f"{path}:{number}: value, depth and count must be integers, got {line[:80]!r}") from None
        ponder = words[1] if len(words) > 1 else "none"
        book.positions[sfen].append(BookMove(words[0], ponder, *fields))
    if not book.positions:
        if any(line.strip() == HEADER for line in lines):
            raise DataError(f"{path}: the book is empty (its header and no position)")
        raise DataError(f"{path}: no positions (not a {HEADER.split()[0][1:]} book?)")
    return book
