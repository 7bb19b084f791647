"""A USI engine for the tests of what drives engines (the watchdog relay, the soak): it plays the first legal
move, and misbehaves as ``$FAKE_MODE`` says: "ok" (the default) never; "hang N": its N-th go and every later one
is never answered; "die N": it exits on its N-th go; "faults": a line that is not USI at go 1, go 2 answered
twice, an illegal move at go 3, go 5 never answered (it still reads, so isready resyncs it); "broken": its model
stopped loading after the match's check of the engine, so every go says so, as messiah-usi does, and resigns;
"slow-ready S": every isready after the first is answered S seconds late (an engine that loads or compiles then;
the first is prompt, so that a test need not time the engine's start)."""

import os
import sys
import time

import cshogi


def main() -> None:
    mode, after = (os.environ.get("FAKE_MODE", "ok").split() + ["0"])[:2]
    board, gos, readies = cshogi.Board(), 0, 0
    for line in sys.stdin:
        words = line.split()
        if not words:
            continue
        if words[0] == "usi":
            print("id name fake\noption name MultiPV type spin default 1 min 1 max 10\nusiok", flush=True)
        elif words[0] == "isready":
            readies += 1
            if mode == "slow-ready" and readies > 1:
                time.sleep(float(after))
            print("readyok", flush=True)
        elif words[0] == "position":
            board = cshogi.Board()
            board.set_position(line[len("position "):].strip())
        elif words[0] == "go":
            gos += 1
            if mode == "broken":
                print("info string error: cannot load the model: no such file: gone.onnx\nbestmove resign", flush=True)
                continue
            if mode in ("hang", "die") and gos >= int(after):
                if mode == "die":
                    sys.exit(3)
                time.sleep(3600)
            moves = [cshogi.move_to_usi(m) for m in board.legal_moves]
            best = "bestmove " + (moves[0] if moves else "resign")
            if mode == "faults":
                if gos == 1:
                    print("hello from the fake", flush=True)
                elif gos == 3:
                    best = "bestmove 5i5a"
                elif gos == 5:
                    continue
            print(best, flush=True)
            if mode == "faults" and gos == 2:
                print(best, flush=True)
        elif words[0] == "quit":
            break


if __name__ == "__main__":
    main()
