"""The USI engine (``messiah-usi``, or ``messiah usi``).

For now it searches one ply, as the method's authors report the evaluator alone already plays: a mate in
one when cshogi finds one, otherwise the legal move with the highest Q. Whatever a GUI sends, the engine
answers: a line it cannot use gets an ``info string`` saying why, and the previous state stays.
"""

from __future__ import annotations

import sys
from collections.abc import Callable, Iterable

import cshogi

from messiah import __version__
from messiah.evaluator import Evaluator, ModelError
from messiah.winrate import MAX_CP, WinRateScale

ENGINE_NAME = f"messiah {__version__}"


class UsiError(ValueError):
    """A command the engine cannot carry out; the message goes to the GUI as an info string."""


def parse_position(args: list[str]) -> cshogi.Board:
    """Board for the arguments of a ``position`` command. Raises UsiError naming what is wrong."""
    if not args:
        raise UsiError("position needs startpos or sfen")
    if "moves" in args:
        cut = args.index("moves")
        setup, moves = args[:cut], args[cut + 1 :]
    else:
        setup, moves = args, []
    board = cshogi.Board()
    if setup == ["startpos"]:
        board.reset()
    elif setup and setup[0] == "sfen" and len(setup) in (4, 5):
        sfen = " ".join(setup[1:] + ([] if len(setup) == 5 else ["1"]))
        if not _valid_sfen(board, sfen):
            raise UsiError(f"malformed sfen: {sfen}")
    else:
        raise UsiError(f"position: expected 'startpos' or 'sfen <board> <side> <hands> [ply]', got {' '.join(setup)!r}")
    for ply, usi in enumerate(moves, 1):
        move = board.move_from_usi(usi) if _looks_like_usi_move(usi) else 0
        # board.is_legal() accepts impossible promotions (7g7f+) and dead-rank drops: use the generator
        if move == 0 or move not in set(board.legal_moves):
            raise UsiError(f"illegal move {usi!r} at move {ply} of position (position unchanged)")
        board.push(move)
    return board


def _looks_like_usi_move(text: str) -> bool:
    squares = {f"{f}{r}" for f in "123456789" for r in "abcdefghi"}
    if len(text) == 4 and text[1] == "*":
        return text[0] in "PLNSGBR" and text[2:] in squares
    return len(text) in (4, 5) and text[:2] in squares and text[2:4] in squares and text[4:] in ("", "+")


def _valid_sfen(board: cshogi.Board, sfen: str) -> bool:
    """cshogi accepts some malformed sfens silently; check the parts it does not."""
    parts = sfen.split()
    if len(parts) != 4 or parts[1] not in ("b", "w") or not parts[3].isdigit():
        return False
    ranks = parts[0].split("/")
    if len(ranks) != 9:
        return False
    for rank in ranks:
        width, promoted = 0, False
        for ch in rank:
            if ch == "+":
                if promoted:
                    return False
                promoted = True
                continue
            if ch.isdigit():
                if promoted:
                    return False
                width += int(ch)
            elif ch.upper() in "PLNSGBRK":
                width += 1
            else:
                return False
            promoted = False
        if width != 9 or promoted:
            return False
    try:
        board.set_sfen(sfen)
    except Exception:
        return False
    # The side to move may lack a king (a tsume-shogi problem); the side that just moved may not.
    kings = {"K": parts[0].count("K"), "k": parts[0].count("k")}
    waiting = "k" if parts[1] == "b" else "K"
    return board.is_ok() and kings[waiting] == 1 and max(kings.values()) <= 1


class UsiEngine:
    """State and command handlers; ``run`` drives it from lines of input."""

    def __init__(self, write: Callable[[str], None]):
        self.write = write
        self.options = {"ModelPath": "<default>", "Threads": 1}
        self.evaluator: Evaluator | None = None
        self.board = cshogi.Board()
        self.scale = WinRateScale()

    def handle(self, line: str) -> bool:
        """Handle one line; returns False on quit."""
        words = line.split()
        if not words:
            return True
        command, args = words[0], words[1:]
        handler = getattr(self, f"cmd_{command}", None)
        if command == "quit":
            return False
        if handler is None:
            self.write(f"info string unknown command: {command}")
            return True
        try:
            handler(args)
        except UsiError as e:
            self.write(f"info string error: {e}")
        return True

    def run(self, lines: Iterable[str]) -> None:
        for line in lines:
            if not self.handle(line.strip()):
                break

    def cmd_usi(self, args: list[str]) -> None:
        self.write(f"id name {ENGINE_NAME}")
        self.write("id author the messiah developers")
        self.write("option name ModelPath type string default <default>")
        self.write("option name Threads type spin default 1 min 1 max 256")
        self.write("usiok")

    def cmd_setoption(self, args: list[str]) -> None:
        if len(args) < 2 or args[0] != "name":
            raise UsiError("setoption: expected 'setoption name <name> value <value>'")
        cut = args.index("value") if "value" in args else len(args)
        name, value = " ".join(args[1:cut]), " ".join(args[cut + 1 :])
        if name == "ModelPath":
            self.options[name] = value or "<default>"
            self.evaluator = None
        elif name == "Threads":
            if not value.isdigit() or not 1 <= int(value) <= 256:
                raise UsiError(f"Threads must be an integer 1..256, got {value!r} (unchanged)")
            self.options[name] = int(value)
            self.evaluator = None
        elif name.startswith("USI_"):
            pass  # USI_Hash, USI_Ponder: accepted, not used by a one-ply engine
        else:
            raise UsiError(f"unknown option {name!r}")

    def _load(self) -> Evaluator:
        if self.evaluator is None:
            path = None if self.options["ModelPath"] == "<default>" else self.options["ModelPath"]
            try:
                self.evaluator = Evaluator(path, threads=self.options["Threads"])
            except ModelError as e:
                raise UsiError(str(e)) from None
            self.evaluator.score(cshogi.Board())  # warm up
        return self.evaluator

    def cmd_isready(self, args: list[str]) -> None:
        try:
            self._load()
        except UsiError as e:
            self.write(f"info string error: {e}")
        self.write("readyok")

    def cmd_usinewgame(self, args: list[str]) -> None:
        pass

    def cmd_position(self, args: list[str]) -> None:
        self.board = parse_position(args)

    def cmd_go(self, args: list[str]) -> None:
        try:
            evaluator = self._load()
        except UsiError as e:
            self.write(f"info string error: {e}")
            self.write("bestmove resign")
            return
        if self.board.is_game_over():
            self.write("bestmove resign")
            return
        mate = self.board.mate_move_in_1ply()
        if mate:
            self.write(f"info depth 1 score mate 1 pv {cshogi.move_to_usi(mate)}")
            self.write(f"bestmove {cshogi.move_to_usi(mate)}")
            return
        move, q = evaluator.score(self.board).best()
        usi = cshogi.move_to_usi(move)
        cp = max(-MAX_CP + 1, min(MAX_CP - 1, self.scale.to_cp(q)))
        self.write(f"info depth 1 nodes 1 score cp {cp} pv {usi}")
        self.write(f"bestmove {usi}")

    def cmd_stop(self, args: list[str]) -> None:
        pass  # the one-ply search answers go at once; nothing is running

    def cmd_ponderhit(self, args: list[str]) -> None:
        pass

    def cmd_gameover(self, args: list[str]) -> None:
        pass


def main(argv: list[str] | None = None) -> None:
    def write(text: str) -> None:
        sys.stdout.write(text + "\n")
        sys.stdout.flush()

    UsiEngine(write).run(sys.stdin)
