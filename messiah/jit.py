"""numba's ``njit`` for all of messiah's compiled code, with one change: a call from one compiled function to another
is typed by its arguments' plain types (``int64``), never by their constant values (``Literal[int](7)``).

Why: numba types a constant argument by its value, and a compiled callee called with one is compiled anew for that
value; ``drop_move(7, to)`` and ``drop_move(6, to)`` were two compilations, each linked again into every
caller. The search's leaves call their helpers with constant colours, pieces and offsets everywhere: 271
compilations at a fresh install's first start, 84 of them for a constant, where 169 plain ones do the same work
(docs/benchmarks.md, "First start"). Nothing here needs a value at compile time (no ``numba.literally``), so the
plain types lose nothing but the copies.
"""

from __future__ import annotations

from functools import partial
from typing import Any

from numba import njit as numba_njit
from numba import types
from numba.core.dispatcher import Dispatcher

__all__ = ["njit"]


def njit(*args: Any, **options: Any) -> Any:
    """``numba.njit`` with the same arguments (used as ``@njit``, ``@njit(...)`` or with signatures), whose dispatcher
    types calls from compiled code by plain argument types."""
    made = numba_njit(*args, **options)
    if isinstance(made, Dispatcher):
        return _typed_plainly(made)
    return lambda function: _typed_plainly(made(function))


def _typed_plainly(dispatcher: Dispatcher) -> Dispatcher:
    dispatcher.get_call_template = partial(_plain_call_template, dispatcher)  # the one method a compiled call asks
    return dispatcher


def _plain_call_template(dispatcher: Dispatcher, args: tuple, kws: dict) -> tuple:
    return Dispatcher.get_call_template(dispatcher, tuple(types.unliteral(a) for a in args),
                                        {name: types.unliteral(a) for name, a in kws.items()})
