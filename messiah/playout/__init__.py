"""The playout core: the search's own board and the compiled leaf work around it (issue 70).

:mod:`messiah.playout.board` is a shogi position as one int64 array, with moves and Zobrist keys in numba;
:mod:`~messiah.playout.attacks` is the one home of attack queries (attacked, in check, checkers and pins, the
nearest piece, blockers, a king's flights) that the move generator, the rules and the mate searches all use;
:mod:`~messiah.playout.movegen` generates the legal moves (proven equal to cshogi's by the tests) and holds the
pawn-drop mate rule; :mod:`~messiah.playout.history` keeps a line's history and judges repetitions;
:mod:`~messiah.playout.rules` judges the entering-king rules, :mod:`~messiah.playout.mate_one` is cshogi's
mate-in-one detector, :mod:`~messiah.playout.checks` generates the checks and evasions that
:mod:`~messiah.playout.mate` (cshogi's odd-ply mate search) tries.
"""
