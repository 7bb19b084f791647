"""What the search's leaf mate check costs a leaf: the playout core's (mate in one, else the LeafMatePly search, in one
compiled loop) against cshogi's (``mate_move_in_1ply`` and ``mate_move``, called from Python as the old leaf path
called them), on the leaves of random play one to six plies down from the bench positions. CPU time of this process
(``time.process_time``), the two timed in turn, each round, so that a busy machine's load falls on both alike.

    python scripts/leaf_mate_cost.py --ply 5 --rounds 5

Prints one JSON object: the leaves, the mates each found (they must agree: the core holds cshogi's verdicts), and
each round's microseconds a leaf for both. To compare two versions of the core, run it in turn from each checkout
with PYTHONPATH set to it (docs/benchmarks.md, "One leaf path"); the editable install maps messiah.search to this
repository's search/ whatever PYTHONPATH says, so a checkout elsewhere needs messiah/search (and models, train)
linked to its own folders first.
"""

from __future__ import annotations

import argparse
import json
import random
import time

import cshogi
import numpy as np
from numba import njit

from messiah.playout import attacks as core_attacks
from messiah.playout import history as core_history
from messiah.playout import mate, mate_one
from messiah.tools.bench import position_set

LINE = 16  # room for a leaf's mate line


def leaves(seed: int) -> list[cshogi.Board]:
    """A leaf a bench position: random legal play one to six plies down, the game's history kept."""
    rng = random.Random(seed)
    out = []
    for board in position_set().boards:
        board = cshogi.Board(board.sfen())
        for _ in range(rng.randint(1, 6)):
            moves = list(board.legal_moves)
            if not moves or board.is_game_over():
                break
            board.push(rng.choice(moves))
        if not board.is_game_over() and board.king_square(1 - board.turn) is not None:
            out.append(board)
    return out


def arrays(boards: list[cshogi.Board]) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
    made = [core_history.history_of(board) for board in boards]
    rows = max(history.shape[0] for _, history, _ in made)
    states = np.stack([state for state, _, _ in made])
    histories = np.zeros((len(made), rows, core_history.HISTORY_SLOTS), np.int64)
    for i, (_, history, _) in enumerate(made):
        histories[i, : history.shape[0]] = history
    return states, histories, np.array([row for _, _, row in made], np.int64)


@njit
def core_all(states, histories, at, ply, work):
    """The core's leaf check on every leaf; the mates found."""
    line = np.zeros(LINE, np.uint32)
    found = 0
    for i in range(states.shape[0]):
        b = states[i]
        if not core_attacks.in_check(b) and mate_one.mate_in_one(b):
            found += 1
        elif mate.mate_in_odd(work, b, histories[i], at[i], ply, line):
            found += 1
    return found


def cshogi_all(boards: list[cshogi.Board], ply: int) -> int:
    found = 0
    for board in boards:
        found += bool((not board.is_check() and board.mate_move_in_1ply()) or board.mate_move(ply))
    return found


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--ply", type=int, default=5)
    parser.add_argument("--rounds", type=int, default=5)
    parser.add_argument("--repeat", type=int, default=4, help="leaf sets of different random play")
    args = parser.parse_args()
    boards = [b for seed in range(args.repeat) for b in leaves(seed)]
    states, histories, at = arrays(boards)
    work = mate.MateWork.empty()
    core_all(states[:2], histories[:2], at[:2], args.ply, work)  # compiled before it is timed
    ours_us, theirs_us = [], []
    for _ in range(args.rounds):
        start = time.process_time()
        ours = core_all(states, histories, at, args.ply, work)
        ours_us.append(round((time.process_time() - start) * 1e6 / len(boards), 2))
        start = time.process_time()
        theirs = cshogi_all(boards, args.ply)
        theirs_us.append(round((time.process_time() - start) * 1e6 / len(boards), 2))
    print(json.dumps({"leaves": len(boards), "ply": args.ply, "mates_core": ours, "mates_cshogi": theirs,
                      "core_us": ours_us, "cshogi_us": theirs_us}))


if __name__ == "__main__":
    main()
