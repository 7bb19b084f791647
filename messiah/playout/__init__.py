"""The playout core: the search's own board and the compiled leaf work around it (issue 70).

:mod:`messiah.playout.board` is a shogi position as one int64 array, with legal move generation, moves and
Zobrist keys in numba, proven equal to cshogi by the tests.
"""
