"""messiah.jit.njit: calls between compiled functions compile one copy per plain argument type, not one per constant."""

from __future__ import annotations

import numba
from numba import types

from messiah.jit import njit


def test_constant_arguments_share_one_compilation() -> None:
    @njit
    def add(a, b):
        return a + b

    @njit
    def caller(x):
        return add(x, 7) + add(x, 6) + add(3, 5)

    assert caller(1) == 1 + 7 + 1 + 6 + 3 + 5
    assert add.signatures == [(types.int64, types.int64)]


def test_numba_alone_would_copy() -> None:
    """The same functions under numba's own njit compile a copy for each constant: what messiah.jit changes (if numba
    stops doing it, messiah.jit can go)."""

    @numba.njit
    def add(a, b):
        return a + b

    @numba.njit
    def caller(x):
        return add(x, 7) + add(x, 6)

    assert caller(1) == 15
    assert len(add.signatures) > 1


def test_options_and_signatures_pass_through() -> None:
    scaled = njit("float64(float64)", nogil=True)(lambda v: 2.0 * v)
    assert scaled(1.5) == 3.0
    assert scaled.targetoptions["nogil"] is True
