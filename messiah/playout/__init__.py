"""The playout core: the search's own board and the compiled leaf work around it (issue 70).

:mod:`messiah.playout.board` is a shogi position as one int64 array, with legal move generation, moves and
Zobrist keys in numba, proven equal to cshogi by the tests; :mod:`~messiah.playout.rules` judges the entering-king
rules on it, :mod:`~messiah.playout.attacks` finds attacks, pins and a king's flights for the mate searches,
:mod:`~messiah.playout.mate_one` is cshogi's mate-in-one detector, :mod:`~messiah.playout.checks` generates the
checks and evasions that :mod:`~messiah.playout.mate` (cshogi's odd-ply mate search) tries.
"""
