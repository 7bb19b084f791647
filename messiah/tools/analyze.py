"""`messiah analyze`: search one position and list every legal move with its Q, as text, JSON or a picture."""

from __future__ import annotations

from dataclasses import dataclass

import cshogi
import numpy as np

from messiah.evaluator import Evaluator, MoveScores
from messiah.position import PositionError, parse_position
from messiah.search import DEFAULT_SEARCH
from messiah.search.base import SearchResult
from messiah.tools.picture import MovePicture


def read_position(position: str) -> cshogi.Board:
    """The board for an sfen or a USI position string (``startpos moves ...`` / ``sfen ... moves ...``).
    Raises ValueError saying what is wrong with it."""
    words = position.split()
    if words[:1] not in (["startpos"], ["sfen"]):
        words = ["sfen", *words]
    try:
        return parse_position(words)
    except PositionError as e:
        raise ValueError(str(e)) from None


@dataclass
class Analysis:
    """One position searched: its board, every legal move's Q from one forward pass, and the search."""

    board: cshogi.Board
    search: str
    scores: MoveScores
    result: SearchResult

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
            "moves": [{"move": cshogi.move_to_usi(int(scores.moves[i])), "q": round(float(scores.q[i]), 4)}
                      for i in order],
        }


def search_board(board: cshogi.Board, evaluator: Evaluator, search: str = DEFAULT_SEARCH, nodes: int | None = None,
                 movetime: int | None = None, depth: int | None = None) -> Analysis:
    """Score every legal move of ``board`` and search it within the limits (movetime in milliseconds)."""
    from messiah.search import Limits, make_searcher

    scores = evaluator.score(board)
    result = make_searcher(search, evaluator).search(
        board, Limits(nodes=nodes, depth=depth, movetime=None if movetime is None else movetime / 1000))
    return Analysis(board.copy(), search, scores, result)


def analyze_position(position: str, search: str = DEFAULT_SEARCH, nodes: int | None = None,
                     movetime: int | None = None, depth: int | None = None, model: str | None = None,
                     threads: int = 1) -> Analysis:
    """The analysis of ``position`` (an sfen or a USI position string). In Jupyter it shows its picture::

        from messiah.tools.analyze import analyze_position
        analyze_position("startpos moves 7g7f 3c3d", nodes=2000)
    """
    board = read_position(position)
    return search_board(board, Evaluator(model, threads=threads), search, nodes, movetime, depth)


def analyze(position: str, search: str = DEFAULT_SEARCH, nodes: int | None = None, movetime: int | None = None,
            depth: int | None = None, model: str | None = None, threads: int = 1) -> dict:
    """The search result and all legal moves with Q (best first) for ``position``: an sfen, or a USI
    position string (``startpos moves ...`` / ``sfen ... moves ...``)."""
    return analyze_position(position, search, nodes, movetime, depth, model, threads).to_dict()
