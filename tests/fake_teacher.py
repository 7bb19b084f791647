"""A USI engine for the tests of teacher generation (tests/test_gensfen.py): it plays a legal move drawn from the
position and reports a search as ``argv[1]`` says, writing its pid and every go it gets to the file ``argv[2]``.

- "yaneuraou": as the project's YaneuraOu build is said to: a go without btime and wtime is answered at once at
  depth 1 with 0 nodes and a score of 0 (a junk label). With the clocks it searches: the nodes or depth asked,
  an eval that is never 0 and grows for black from ply 20 (games end by adjudication), and, as real engines do,
  it answers at once (depth 1, 0 nodes) where that is honest: with a single legal move, and with a mate found
  (at every third ply, more than a quarter of the searches).
- "junk": every go is answered at once at depth 1 with 0 nodes, clocks or not.
- "silent": a go is never answered (the engine keeps reading).
"""

import os
import random
import sys

import cshogi

SEARCHED_CP = 100  # the eval of a searched position before ply 20; a junk answer's is 0


def answer(board: cshogi.Board, words: list[str], mode: str) -> list[str]:
    """The lines that answer the go ``words`` in ``board``."""
    moves = list(board.legal_moves)
    if not moves:
        return ["bestmove resign"]
    move = cshogi.move_to_usi(random.Random(board.zobrist_hash()).choice(moves))
    ply = board.move_number - 1
    black = board.turn == cshogi.BLACK
    clocks = "btime" in words and "wtime" in words
    if mode == "junk" or not clocks:
        return [f"info depth 1 seldepth 0 score cp 0 nodes 0 nps 0 time 1 pv {move}", f"bestmove {move}"]
    if len(moves) == 1:
        return [f"info depth 1 seldepth 1 score cp {SEARCHED_CP} nodes 0 time 0 pv {move}", f"bestmove {move}"]
    if ply % 3 == 0:  # a mate for black, found at once
        return [f"info depth 1 seldepth 1 score mate {5 if black else -5} nodes 0 time 0 pv {move}", f"bestmove {move}"]
    cp = SEARCHED_CP + 250 * max(0, ply - 20)
    cp = cp if black else -cp
    if "nodes" in words:
        nodes = int(words[words.index("nodes") + 1])
        # the last line is an unfinished iteration's, one depth less, as YaneuraOu reports it
        return [f"info depth 5 seldepth 6 score cp {cp} nodes {nodes // 3} pv {move}",
                f"info depth 9 seldepth 12 score cp {cp} nodes {nodes + 7} pv {move}",
                f"info depth 8 seldepth 12 score cp {cp} nodes {nodes + 15} pv {move}", f"bestmove {move}"]
    depth = int(words[words.index("depth") + 1])
    return [f"info depth {depth} seldepth {depth + 2} score cp {cp} nodes 1000 pv {move}", f"bestmove {move}"]


def main(mode: str, log_path: str) -> None:
    board = cshogi.Board()
    with open(log_path, "a") as log:
        log.write(f"pid {os.getpid()}\n")
        log.flush()
        for line in sys.stdin:
            words = line.split()
            if not words:
                continue
            if words[0] == "usi":
                print(f"id name fake-{mode}\nusiok", flush=True)
            elif words[0] == "isready":
                print("readyok", flush=True)
            elif words[0] == "position":
                board.set_position(line[len("position "):].strip())
            elif words[0] == "go":
                log.write(line)
                log.flush()
                if mode != "silent":
                    print("\n".join(answer(board, words, mode)), flush=True)
            elif words[0] == "quit":
                break


if __name__ == "__main__":
    main(sys.argv[1], sys.argv[2])
