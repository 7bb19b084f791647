"""The engine's USI options: what ``usi`` declares, what ``setoption`` accepts, and the values every tool that
plays builds its engine from (:mod:`messiah.engine.engine`). Each search's own options come from the search
registry (:data:`messiah.search.SEARCHERS`), so a new search brings its options with it."""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass

from messiah.engine.openingbook import NO_BOOK, BookRules
from messiah.engine.strength import LEVELS
from messiah.engine.thinktime import GAME_PLY_HORIZON, MIN_MOVES_TO_GO, NETWORK_DELAY2
from messiah.evaluator import DEVICES
from messiah.protocol import INTEGER, UsiError, parse_int
from messiah.rules import DEFAULT_ENTERING_KING_RULE, ENTERING_KING_RULES, GameRules
from messiah.search import DEFAULT_SEARCH, SEARCHERS, Searcher, search_options
from messiah.search.base import INFO_EVERY
from messiah.search.timeman import OBVIOUS, UNSTABLE
from messiah.winrate import MESSIAH_SCALE

DEFAULT_MODEL = "<default>"  # ModelPath of the shipped model
NO_LOG = "<empty>"  # WriteDebugLog's "no log", as YaneuraOu declares an empty string option


@dataclass
class Option:
    """A USI option: ``kind`` is spin, check, combo, string or filename (a string a GUI offers a file
    picker for)."""

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
            number = parse_int(value, name) if INTEGER.fullmatch(value) else self.low - 1
            if not self.low <= number <= self.high:
                raise UsiError(f"{name} must be an integer {self.low}..{self.high}, got {value[:40]!r} (unchanged)")
            return number
        if self.kind == "check":
            if value not in ("true", "false"):
                raise UsiError(f"{name} must be true or false, got {value[:40]!r} (unchanged)")
            return value == "true"
        if self.kind == "combo" and value not in self.choices:
            raise UsiError(f"{name} must be one of {', '.join(self.choices)}, got {value[:40]!r} (unchanged)")
        return value or self.default


def usi_options(searchers: Mapping[str, type[Searcher]] = SEARCHERS) -> dict[str, Option]:
    """The engine's option table for the registered ``searchers``: Search chooses among them, and each brings
    the options it declares (Searcher.options)."""
    return {
        "ModelPath": Option("filename", DEFAULT_MODEL),
        "Threads": Option("spin", 1, 1, 256),
        # where the network runs: auto is a GPU when onnxruntime-gpu can use one, else the CPU (evaluator.py)
        "Device": Option("combo", "auto", choices=DEVICES),
        "Search": Option("combo", DEFAULT_SEARCH, choices=tuple(searchers)),
        "USI_Hash": Option("spin", 256, 1, 65536),  # MB, sized by the searcher (Searcher.set_hash)
        "USI_Ponder": Option("check", False),  # also whether bestmove names a ponder move (cshogi.cli ponders on it)
        # time, with YaneuraOu's names (engine.thinktime.think_time): ms off the aimed time, ms off the deadline,
        # the least a move takes (defaults for a local GUI; YaneuraOu's 120, 1120, 2000 suit a server's clock)
        "NetworkDelay": Option("spin", 0, 0, 10000),
        "NetworkDelay2": Option("spin", NETWORK_DELAY2, 0, 10000),
        "MinimumThinkingTime": Option("spin", 0, 0, 100000),
        "PvInterval": Option("spin", round(1000 * INFO_EVERY), 0, 100000),  # ms between progress lines (puct, ucb1)
        # the searches' own options (MateNodes, BatchSize, PuctC, ...), as they declare them
        **{name: Option("spin", o.usi_default, o.low, o.high) for name, o in search_options(searchers).items()},
        # time management with a main time (sudden death, Fischer): see engine.thinktime.think_time
        "TimeHorizon": Option("spin", GAME_PLY_HORIZON, 1, 1000),  # the ply by which the main time should be spent
        "TimeMinMovesToGo": Option("spin", MIN_MOVES_TO_GO, 1, 1000),  # the main time is shared over at least these
        "TimeObvious": Option("spin", round(100 * OBVIOUS), 1, 1000),  # % of a move's share for an obvious move
        "TimeUnstable": Option("spin", round(100 * UNSTABLE), 1, 1000),  # % of it while the best move keeps changing
        "MultiPV": Option("spin", 1, 1, 600),
        "NodesLimit": Option("spin", 0, 0, 10**9),  # at most this many nodes a move, whatever the clock (0: none)
        "Strength": Option("spin", 0, 0, LEVELS),  # a weaker player for people (engine.strength; 0: full strength)
        "DepthLimit": Option("spin", 0, 0, 10000),  # at most this depth a move, whatever the clock (0: none)
        "ResignValue": Option("spin", 99999, 0, 99999),  # resign at score cp <= -ResignValue (99999: never)
        "MaxMovesToDraw": Option("spin", 0, 0, 100000),  # a game still going after this ply is a draw (0: none)
        # the rules the GUI plays by (messiah.rules): how an entering king wins, a draw's worth (thousandths)
        "EnteringKingRule": Option("combo", DEFAULT_ENTERING_KING_RULE, choices=ENTERING_KING_RULES),
        "DrawValueBlack": Option("spin", 500, 0, 1000),  # a draw's worth to the engine when it plays black
        "DrawValueWhite": Option("spin", 500, 0, 1000),  # and when it plays white
        "ConsiderationMode": Option("check", False),  # analysis for a GUI: no book move, no resignation
        "ScoreScale": Option("spin", MESSIAH_SCALE, 1, 100000),  # score cp = logit(winrate) * this (zero-sum)
        # the opening book, with YaneuraOu's names and meanings (engine.openingbook.BookRules)
        "USI_OwnBook": Option("check", True),  # whether the BookFile is used
        "BookFile": Option("filename", NO_BOOK),  # a YANEURAOU-DB2016 book, or no_book
        "BookMoves": Option("spin", BookRules.moves, 0, 10000),
        "BookEvalDiff": Option("spin", BookRules.eval_diff, 0, 99999),
        "BookEvalBlackLimit": Option("spin", BookRules.black_limit, -99999, 99999),
        "BookEvalWhiteLimit": Option("spin", BookRules.white_limit, -99999, 99999),
        "BookDepthLimit": Option("spin", BookRules.depth_limit, 0, 99999),
        "NarrowBook": Option("check", BookRules.narrow),
        "FlippedBook": Option("check", BookRules.flipped),
        "IgnoreBookPly": Option("check", BookRules.ignore_ply),
        "ConsiderBookMoveCount": Option("check", BookRules.by_count),
        "WriteDebugLog": Option("filename", NO_LOG),  # a file that gets every line in and out, timed (YaneuraOu's)
    }


def book_rules(values: Mapping[str, object]) -> BookRules:
    """The book options' values as the book's rules."""
    return BookRules(values["BookMoves"], values["BookEvalDiff"], values["BookEvalBlackLimit"],
                     values["BookEvalWhiteLimit"], values["BookDepthLimit"], values["NarrowBook"],
                     values["FlippedBook"], values["IgnoreBookPly"], values["ConsiderBookMoveCount"])


def game_rules(values: Mapping[str, object]) -> GameRules:
    """The rules options' values as the rules the search values its leaves by."""
    return GameRules(values["EnteringKingRule"], values["DrawValueBlack"] / 1000, values["DrawValueWhite"] / 1000,
                     values["MaxMovesToDraw"])


OPTIONS = usi_options()
