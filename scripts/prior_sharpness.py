"""How sharp PUCT's prior is for each model: the prior is softmax(Q / T) over a position's legal moves
(``PuctTemperature`` T/1000), so a model whose move scores lie closer together gets a flatter prior at the same T.
On every tenth floodgate test position (600 of them), for each model and temperature: the median and mean prior of
the best move, and the median gap between the two best moves' Q.

    python scripts/prior_sharpness.py m7-int8.onnx m9-int8.onnx --temperatures 10 14 18 24

Prints one JSON object a model. It measures the prior's shape only; which temperature plays better is for games
(docs/search.md, "PuctTemperature with m9").
"""

from __future__ import annotations

import argparse
import json

import cshogi
import numpy as np

from messiah.evaluator import Evaluator, softmax_weights
from messiah.paths import shared_file

POSITIONS = 600  # every tenth of floodgate/test.hcpe's 5,998


def positions() -> list[cshogi.Board]:
    records = np.fromfile(shared_file("floodgate/test.hcpe"), cshogi.HuffmanCodedPosAndEval)[::10][:POSITIONS]
    boards = []
    for record in records:
        board = cshogi.Board()
        board.set_hcp(record["hcp"])
        boards.append(board)
    return boards


def sharpness(model: str, boards: list[cshogi.Board], temperatures: list[float]) -> dict:
    """The best move's prior at each temperature (median, mean) and the median Q gap of the two best moves."""
    scores = [np.sort(s.q)[::-1] for s in Evaluator(model, threads=1).score_batch(boards)]
    scores = [q for q in scores if len(q) > 1]  # one legal move: no prior to shape
    result = {"model": model, "positions": len(scores),
              "median_gap_best_two": round(float(np.median([q[0] - q[1] for q in scores])), 4)}
    for t in temperatures:
        best = np.array([1.0 / softmax_weights(q, t / 1000).sum() for q in scores])  # q sorted: the best's weight is 1
        result[f"T{t:g}"] = {"best_prior_median": round(float(np.median(best)), 3),
                             "best_prior_mean": round(float(best.mean()), 3)}
    return result


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("models", nargs="+")
    parser.add_argument("--temperatures", type=float, nargs="+", default=[10, 14, 18, 24],
                        help="PuctTemperature values (thousandths)")
    args = parser.parse_args()
    boards = positions()
    for model in args.models:
        print(json.dumps(sharpness(model, boards, args.temperatures)))


if __name__ == "__main__":
    main()
