"""`messiah analyze`: search one position and list every legal move with its Q."""

from __future__ import annotations

import cshogi
import numpy as np

from messiah.evaluator import Evaluator
from messiah.position import PositionError, parse_position


def analyze(position: str, search: str = "alphabeta", nodes: int | None = None, movetime: int | None = None,
            depth: int | None = None, model: str | None = None, threads: int = 1) -> dict:
    """The search result and all legal moves with Q (best first) for ``position``: an sfen, or a USI
    position string (``startpos moves ...`` / ``sfen ... moves ...``)."""
    from search import Limits, make_searcher

    words = position.split()
    if words[:1] not in (["startpos"], ["sfen"]):
        words = ["sfen", *words]
    try:
        board = parse_position(words)
    except PositionError as e:
        raise ValueError(str(e)) from None
    evaluator = Evaluator(model, threads=threads)
    scores = evaluator.score(board)
    order = np.argsort(-scores.q, kind="stable")
    result = make_searcher(search, evaluator).search(
        board, Limits(nodes=nodes, depth=depth, movetime=None if movetime is None else movetime / 1000))
    score = {"winrate": result.winrate}
    if result.mate is not None:
        score["mate"] = result.mate
    return {
        "sfen": board.sfen(),
        "search": search,
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
