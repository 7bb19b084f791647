"""`messiah analyze`: search one position and list every legal move with its Q, as text, JSON or a picture.

The search is the USI engine's (messiah.engine.engine), with its options: what analyze shows is what the engine
plays. Where the engine has a book in use (BookFile, USI_OwnBook) and the book holds the position, the analysis
names the move the engine would play from it at once, and still shows the search, as a GUI's analysis would
want; it never resigns (an analysis has no game to give up)."""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass

import cshogi
import numpy as np

from messiah.config import at_least, setting
from messiah.engine.engine import Engine, EngineChoice, overrides
from messiah.engine.openingbook import BookMove
from messiah.errors import UserError
from messiah.evaluator import Evaluator, MoveScores
from messiah.position import PositionError, parse_position
from messiah.search.base import SearchResult
from messiah.tools.picture import MovePicture


@dataclass
class AnalyzeConfig(EngineChoice):
    """``messiah analyze``: one position searched by the engine, every legal move's Q listed."""

    position: list[str] = setting(factory=list, positional=True)
    """an sfen, or 'startpos moves ...' / 'sfen ... moves ...'"""
    nodes: int | None = None
    """search this many nodes"""
    movetime: int | None = None
    """search this many milliseconds, as `go movetime` does (the engine's NetworkDelay2 kept back)"""
    depth: int | None = None
    """search to this depth (with no limit: the search's own small default)"""
    svg: str | None = None
    """also draw the board with every legal move coloured by its Q to this SVG file"""
    png: str | None = None
    """the same picture as PNG (needs rsvg-convert or cairosvg)"""
    flip: bool = False
    """draw the board from white's side"""

    def __post_init__(self) -> None:
        if not self.position:
            raise UserError("give a position: an sfen, or 'startpos moves ...'")
        if sum(limit is not None for limit in (self.nodes, self.movetime, self.depth)) > 1:
            raise UserError("give at most one of --nodes, --movetime and --depth")
        at_least(self, 1, "nodes", "movetime", "depth", "threads")


def read_position(position: str) -> cshogi.Board:
    """The board for an sfen or a USI position string (``startpos moves ...`` / ``sfen ... moves ...``).
    Raises ValueError saying what is wrong with it."""
    words = position.split()
    if words[:1] not in (["startpos"], ["sfen"]):
        words = ["sfen", *words]
    try:
        return parse_position(words)
    except PositionError as e:
        raise UserError(str(e)) from None


@dataclass
class Analysis:
    """One position searched: its board, every legal move's Q from one forward pass, the search, and the
    engine's book move for the position (None: no book in use, or the position is not in it)."""

    board: cshogi.Board
    search: str
    scores: MoveScores
    result: SearchResult
    book: BookMove | None = None

    def picture(self, flip: bool = False) -> MovePicture:
        """The move-score picture of this analysis (seen from white when ``flip``)."""
        return MovePicture(self.board, [int(m) for m in self.scores.moves], [float(q) for q in self.scores.q],
                           self.result.bestmove or None, self.result.pv, self.result.winrate, flip)

    def _repr_svg_(self) -> str:  # Jupyter shows an analysis as its picture, from the side to move's seat
        return self.picture(flip=self.board.turn == cshogi.WHITE).to_svg()

    def to_dict(self) -> dict:
        result, scores = self.result, self.scores
        order = np.argsort(-scores.q, kind="stable")
        score = {"winrate": result.winrate}
        if result.mate is not None:
            score["mate"] = result.mate
        return {
            "sfen": self.board.sfen(),
            "search": self.search,
            "bestmove": cshogi.move_to_usi(result.bestmove) if result.bestmove else "resign",
            "score": score,
            "pv": result.pv_usi,
            "nodes": result.nodes,
            "depth": result.depth,
            "evaluations": result.evaluations,
            "time_ms": round(result.elapsed * 1000),
            "book": self.book.move if self.book else None,
            "moves": [{"move": cshogi.move_to_usi(int(scores.moves[i])), "q": round(float(scores.q[i]), 4)}
                      for i in order],
        }


def analysis(engine: Engine, board: cshogi.Board, nodes: int | None = None, movetime: int | None = None,
             depth: int | None = None) -> Analysis:
    """``engine``'s analysis of ``board``: every legal move's Q and a search within the limits (movetime in
    milliseconds, searched as ``go movetime`` would be; no limit: the search's own small default)."""
    scores = engine.evaluator.score(board)
    result = engine.search(board, nodes=nodes, depth=depth, movetime=movetime)
    return Analysis(board.copy(), str(engine.settings["Search"]), scores, result)


def _tool_analysis(engine: Engine, board: cshogi.Board, nodes: int | None, movetime: int | None,
                   depth: int | None) -> Analysis:
    """The analysis the analyze tool shows: :func:`analysis` and the engine's book move. Only here: drawing a book
    move takes from the engine's random choices, which the web page's score picture must leave to its game."""
    result = analysis(engine, board, nodes, movetime, depth)
    result.book, _ = engine.book_move(board)
    return result


def search_board(board: cshogi.Board, evaluator: Evaluator, search: str | None = None, nodes: int | None = None,
                 movetime: int | None = None, depth: int | None = None,
                 options: Mapping[str, str] | None = None) -> Analysis:
    """Score every legal move of ``board`` and search it within the limits (movetime in milliseconds) with the
    engine that ``options`` make (USI option name -> value, as setoption takes it; the engine's defaults
    otherwise). ``search`` stands for the option Search; ``options`` win over it."""
    return _tool_analysis(Engine.from_options(overrides(options, Search=search), evaluator), board, nodes, movetime,
                          depth)


def analyze_position(position: str, search: str | None = None, nodes: int | None = None,
                     movetime: int | None = None, depth: int | None = None, model: str | None = None,
                     threads: int | None = None, options: Mapping[str, str] | None = None) -> Analysis:
    """The analysis of ``position`` (an sfen or a USI position string) by the engine that ``options`` make
    (``search``, ``model`` and ``threads`` stand for the options Search, ModelPath and Threads; ``options``
    win over them). In Jupyter it shows its picture::

        from messiah.tools.analyze import analyze_position
        analyze_position("startpos moves 7g7f 3c3d", nodes=2000, options={"Search": "alphabeta"})
    """
    board = read_position(position)
    engine = Engine.from_options(overrides(options, Search=search, ModelPath=model, Threads=threads))
    return _tool_analysis(engine, board, nodes, movetime, depth)
