"""The USI engine (``messiah-usi``, or ``messiah usi``).

The search is chosen by the ``Search`` option (alpha-beta, UCB1, PUCT) and runs on a worker thread, so
``stop``, ``ponderhit`` and ``isready`` are answered while it thinks; bestmove is printed exactly once
per go. Whatever a GUI sends, the engine answers: a line it cannot use gets an ``info string`` saying
why, and the previous state stays.
"""

from __future__ import annotations

import sys
import threading
from collections.abc import Callable, Iterable
from dataclasses import dataclass

import cshogi

from messiah import __version__
from messiah.evaluator import Evaluator, ModelError
from messiah.winrate import MESSIAH, MESSIAH_OPTIONS, WinRateScale
from search.mcts import PUCT_C, PUCT_TEMPERATURE, UCB1_C

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


@dataclass
class Option:
    """A USI option: ``kind`` is spin, check, combo or string."""

    kind: str
    default: object
    low: int = 0
    high: int = 0
    choices: tuple[str, ...] = ()

    def declaration(self, name: str) -> str:
        default = str(self.default).lower() if self.kind == "check" else self.default
        text = f"option name {name} type {self.kind} default {default}"
        if self.kind == "spin":
            text += f" min {self.low} max {self.high}"
        if self.kind == "combo":
            text += "".join(f" var {c}" for c in self.choices)
        return text

    def parse(self, name: str, value: str) -> object:
        """The option's value from ``value``; raises UsiError (the option stays unchanged)."""
        if self.kind == "spin":
            wrong = UsiError(f"{name} must be an integer {self.low}..{self.high}, got {value!r} (unchanged)")
            if not value.lstrip("-").isdigit() or not self.low <= int(value) <= self.high:
                raise wrong
            return int(value)
        if self.kind == "check":
            if value not in ("true", "false"):
                raise UsiError(f"{name} must be true or false, got {value!r} (unchanged)")
            return value == "true"
        if self.kind == "combo" and value not in self.choices:
            raise UsiError(f"{name} must be one of {', '.join(self.choices)}, got {value!r} (unchanged)")
        return value


OPTIONS = {
    "ModelPath": Option("string", "<default>"),
    "Threads": Option("spin", 1, 1, 256),
    "Search": Option("combo", "alphabeta", choices=("alphabeta", "ucb1", "puct")),
    "USI_Hash": Option("spin", 256, 1, 65536),
    "USI_Ponder": Option("check", False),
    "ByoyomiMargin": Option("spin", 300, 0, 10000),  # ms kept back for process and GUI latency
    "MateNodes": Option("spin", 20000, 0, 10_000_000),  # df-pn budget at the root
    "BatchSize": Option("spin", 1, 1, 1024),  # leaves per forward pass for ucb1/puct (raise it on a GPU)
    "Ucb1C": Option("spin", round(100 * UCB1_C), 0, 1000),  # ucb1's exploration constant, in hundredths
    "PuctC": Option("spin", round(100 * PUCT_C), 0, 10000),  # puct's exploration constant, in hundredths
    "PuctTemperature": Option("spin", round(1000 * PUCT_TEMPERATURE), 1, 10000),  # softmax(Q / T), T in 1/1000
    "MultiPV": Option("spin", 1, 1, 600),
    "ResignValue": Option("spin", 99999, 0, 99999),  # resign at score cp <= -ResignValue (99999: never)
    "MaxMovesToDraw": Option("spin", 0, 0, 100000),  # a game still going after this ply is a draw (0: none)
    "ScoreScale": Option("spin", MESSIAH_OPTIONS[0], 1, 100000),  # cp = (logit(winrate) - b) * this
    "ScoreBias": Option("spin", MESSIAH_OPTIONS[1], -10000, 10000),  # b of that, in thousandths
}
HASH_ENTRY_BYTES = 256  # rough size of a transposition-table entry in Python
CACHE_ENTRY_BYTES = 1600  # rough size of a cached evaluation (80 moves: move, index, Q + Python overhead)
MOVES_TO_GO = 30  # sudden death / Fischer: a normal move takes this share of the main time left
MAX_STRETCH = 4  # a hard position may take this many normal shares of the main time


def think_time(go: dict[str, int], turn: int, margin_ms: int) -> tuple[float | None, float | None]:
    """(optimum, maximum) seconds to search for a ``go`` command's times; (None, None) for no time limit.

    A normal move takes ``optimum``; the search stretches it up to ``maximum`` while its best move keeps
    changing and stops well before it when the move is obvious (see search.base.Limits). Byoyomi is use-it-
    or-lose-it, so only the main time is stretched. The margin for process and GUI latency is taken off
    both, but never more than half of the time: a byoyomi shorter than the margin still gets a search."""
    if "movetime" in go:
        budget = go["movetime"] - min(margin_ms, go["movetime"] / 2)
        return None, max(0.0, budget) / 1000
    left = go.get("btime" if turn == cshogi.BLACK else "wtime")
    if left is None and "byoyomi" not in go:
        return None, None
    left = max(0, left or 0)
    increment = go.get("binc" if turn == cshogi.BLACK else "winc", 0)
    byoyomi = go.get("byoyomi", 0)
    sure = increment + byoyomi  # time this move gets whatever the main time does
    optimum = left / MOVES_TO_GO + sure
    maximum = left * MAX_STRETCH / MOVES_TO_GO + sure
    margin = min(margin_ms, maximum / 2)
    return max(0.0, optimum - margin) / 1000, max(0.0, maximum - margin) / 1000


class UsiEngine:
    """State and command handlers; ``run`` drives it from lines of input. ``go`` searches on a worker
    thread so that ``stop``, ``ponderhit`` and ``isready`` are answered while it thinks."""

    def __init__(self, write: Callable[[str], None]):
        self._lock = threading.Lock()
        self._write = write
        self.options = {name: option.default for name, option in OPTIONS.items()}
        self.evaluator: Evaluator | None = None
        self.searcher = None
        self.board = cshogi.Board()
        self.scale = MESSIAH
        self._thread: threading.Thread | None = None
        self._stop = threading.Event()
        self._replied = threading.Event()  # set once the running go's bestmove is written
        self._pondering = False
        self._limits = None
        self._ponder_time: float | None = None

    def write(self, text: str) -> None:
        with self._lock:
            self._write(text)

    def handle(self, line: str) -> bool:
        """Handle one line; returns False on quit."""
        words = line.split()
        if not words:
            return True
        command, args = words[0], words[1:]
        if command == "quit":
            self._finish_search()
            return False
        handler = getattr(self, f"cmd_{command}", None)
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
        self._finish_search()

    def cmd_usi(self, args: list[str]) -> None:
        self.write(f"id name {ENGINE_NAME}")
        self.write("id author the messiah developers")
        for name, option in OPTIONS.items():
            self.write(option.declaration(name))
        self.write("usiok")

    def cmd_setoption(self, args: list[str]) -> None:
        if len(args) < 2 or args[0] != "name":
            raise UsiError("setoption: expected 'setoption name <name> value <value>'")
        cut = args.index("value") if "value" in args else len(args)
        name, value = " ".join(args[1:cut]), " ".join(args[cut + 1 :])
        if name not in OPTIONS:
            raise UsiError(f"unknown option {name!r}")
        if self._searching():
            raise UsiError(f"setoption {name} during a search is ignored")
        option = OPTIONS[name]
        self.options[name] = option.parse(name, value) if option.kind != "string" else value or "<default>"
        if name in ("ModelPath", "Threads"):
            self.evaluator = None
        self.searcher = None

    def _load(self) -> Evaluator:
        if self.evaluator is None:
            path = None if self.options["ModelPath"] == "<default>" else self.options["ModelPath"]
            try:
                self.evaluator = Evaluator(path, threads=self.options["Threads"])
            except ModelError as e:
                raise UsiError(str(e)) from None
            self.evaluator.score(cshogi.Board())  # warm up
            self.searcher = None
        if self.searcher is None:
            from search import make_searcher

            half = self.options["USI_Hash"] * 2**20 // 2  # the table gets half, the evaluation cache half
            extra: dict[str, float] = {"hash_entries": half // HASH_ENTRY_BYTES}
            if self.options["Search"] == "ucb1":
                extra = {"batch_size": self.options["BatchSize"], "c": self.options["Ucb1C"] / 100}
            elif self.options["Search"] == "puct":
                extra = {"batch_size": self.options["BatchSize"], "c": self.options["PuctC"] / 100,
                         "temperature": self.options["PuctTemperature"] / 1000}
            self.searcher = make_searcher(self.options["Search"], self.evaluator,
                                          mate_nodes=self.options["MateNodes"], **extra)
            self.searcher.cache.max_entries = max(1, half // CACHE_ENTRY_BYTES)
        self.searcher.multipv = self.options["MultiPV"]
        self.searcher.draw_ply = self.options["MaxMovesToDraw"]
        self.scale = WinRateScale.from_options(self.options["ScoreScale"], self.options["ScoreBias"])
        return self.evaluator

    def cmd_isready(self, args: list[str]) -> None:
        if not self._searching():
            try:
                self._load()
            except UsiError as e:
                self.write(f"info string error: {e}")
        self.write("readyok")

    def cmd_usinewgame(self, args: list[str]) -> None:
        self._finish_search()
        if self.searcher is not None:
            self.searcher.new_game()

    def cmd_position(self, args: list[str]) -> None:
        if self._searching():
            raise UsiError("position during a search is ignored (send stop first)")
        self.board = parse_position(args)

    def cmd_go(self, args: list[str]) -> None:
        if self._searching():
            raise UsiError("go during a search is ignored")
        self._finish_search()  # the previous worker has written its bestmove: join it
        go, flags = _parse_go(args)
        try:
            self._load()
        except UsiError as e:
            self.write(f"info string error: {e}")
            self.write("bestmove resign")
            return
        from search import Limits

        self._stop.clear()
        self._pondering = "ponder" in flags
        optimum, maximum = think_time(go, self.board.turn, self.options["ByoyomiMargin"])
        endless = "infinite" in flags or self._pondering
        self._ponder_time = (optimum, maximum) if self._pondering else None
        limits = Limits(nodes=go.get("nodes"), depth=go.get("depth"), movetime=None if endless else maximum,
                        optimum=None if endless else optimum, stop=self._stop)
        if "mate" in flags:
            self._go_mate(go.get("mate"))
            return
        self._limits = limits
        self._replied.clear()
        self._thread = threading.Thread(target=self._search, args=(self.board.copy(), limits), daemon=True)
        self._thread.start()

    def _go_mate(self, limit: int | None) -> None:
        from search.base import root_mate

        pv = root_mate(self.board, self.options["MateNodes"] or 1_000_000)
        self.write("checkmate " + " ".join(cshogi.move_to_usi(m) for m in pv) if pv else "checkmate nomate")

    def _search(self, board: cshogi.Board, limits) -> None:
        """Worker thread: search, report, wait out a ponder or infinite search, print bestmove once."""
        reply = "bestmove resign"
        try:
            if board.is_nyugyoku():
                reply = "bestmove win"
            elif not board.is_game_over():
                result = self.searcher.search(board, limits, self._info)
                if result.bestmove and self.scale.to_cp(result.winrate) <= -self.options["ResignValue"]:
                    reply = "bestmove resign"
                elif result.bestmove:
                    ponder = f" ponder {cshogi.move_to_usi(result.pv[1])}" if len(result.pv) > 1 else ""
                    reply = f"bestmove {cshogi.move_to_usi(result.bestmove)}{ponder}"
        except Exception as e:  # the engine must answer go whatever happens
            self.write(f"info string error: search failed: {e!r}")
        # USI: after go ponder / go infinite, bestmove waits for stop or ponderhit, whatever the answer
        while (self._pondering or limits.movetime is None and limits.nodes is None and limits.depth is None) \
                and not self._stop.is_set():
            self._stop.wait(0.01)
        self._replied.set()  # before the write: the GUI may answer at once
        self.write(reply)

    def _info(self, r) -> None:
        nps = int(r.nodes / r.elapsed) if r.elapsed > 0 else 0
        hashfull = f" hashfull {self.searcher.hashfull()}" if hasattr(self.searcher, "hashfull") else ""
        head = f"info depth {r.depth} seldepth {r.seldepth} nodes {r.nodes} nps {nps} time {int(r.elapsed * 1000)}"
        lines = r.lines or [(r.winrate, r.mate, r.pv)]
        for k, (winrate, mate, pv) in enumerate(lines, 1):
            score = f"mate {mate}" if mate is not None else f"cp {self.scale.to_cp(winrate)}"
            multipv = f" multipv {k}" if r.lines else ""
            self.write(f"{head}{hashfull}{multipv} score {score} pv {' '.join(cshogi.move_to_usi(m) for m in pv)}")

    def cmd_stop(self, args: list[str]) -> None:
        self._finish_search()

    def cmd_ponderhit(self, args: list[str]) -> None:
        """The expected move was played: the ponder search goes on as a timed search from now."""
        if self._searching() and self._pondering and self._limits is not None:
            if self._ponder_time is not None:
                optimum, maximum = self._ponder_time
                now = self._limits.elapsed()
                self._limits.optimum = None if optimum is None else now + optimum
                self._limits.movetime = None if maximum is None else now + maximum
            self._pondering = False

    def cmd_gameover(self, args: list[str]) -> None:
        self._finish_search()

    def _searching(self) -> bool:
        """Whether a go is still without its bestmove. The worker thread lives on for a moment after
        writing it, and a GUI may send the next position in that moment: that is not a search any more."""
        return self._thread is not None and not self._replied.is_set()

    def _finish_search(self) -> None:
        """Stop a running search and wait for its bestmove."""
        if self._thread is not None:
            self._pondering = False
            self._stop.set()
            self._thread.join()
            self._thread = None


GO_NUMBERS = ("btime", "wtime", "byoyomi", "binc", "winc", "nodes", "depth", "movetime")


def _parse_go(args: list[str]) -> tuple[dict[str, int], set[str]]:
    """go's numeric arguments and flags (infinite, ponder, mate). Raises UsiError for nonsense."""
    numbers, flags, i = {}, set(), 0
    while i < len(args):
        word = args[i]
        if word in GO_NUMBERS or (word == "mate" and i + 1 < len(args) and args[i + 1].lstrip("-").isdigit()):
            if i + 1 >= len(args) or not args[i + 1].lstrip("-").isdigit():
                raise UsiError(f"go: {word} needs a number")
            numbers[word] = int(args[i + 1])
            if word == "mate":
                flags.add("mate")
            i += 2
        elif word in ("infinite", "ponder", "mate"):
            flags.add(word)
            i += 1
        else:
            raise UsiError(f"go: unknown argument {word!r}")
    for key in ("nodes", "depth"):
        if key in numbers and numbers[key] < 1:
            raise UsiError(f"go: {key} must be positive")
    return numbers, flags


def main(argv: list[str] | None = None) -> None:
    def write(text: str) -> None:
        sys.stdout.write(text + "\n")
        sys.stdout.flush()

    UsiEngine(write).run(sys.stdin)
