"""Lambda-returns for Q(lambda) in a two-player zero-sum game, on the 0..1 win-rate scale (docs/method.md section 3).

For the moves a_0 .. a_{n-1} played from positions s_0 .. s_{n-1} of one game, with V(s) the value of s for its
side to move (max_a Q_target(s, a), the double-DQN choice, or the self-play search's root value), the value of
the next position is seen from the other side (negamax): ``flip(x) = 0.5 + gamma * (0.5 - x)``, which is
``1 - x`` for gamma = 1 and discounts toward the draw value otherwise. Accumulated backwards through the game:

    G_{n-1} = the game's result for the side that played a_{n-1} (exact, not discounted), or, for a game
              truncated at the maximum ply, flip(V(s_n)) (its last position bootstraps)
    G_t     = flip((1 - lambda) V(s_{t+1}) + lambda * C_{t+1})
    C_{t+1} = G_{t+1}, except under Watkins's Q(lambda) where a_{t+1} was exploratory: then V(s_{t+1})
              (the trace is cut: what followed a non-greedy move says nothing about the greedy policy)

lambda = 0 gives one-step Q-learning (G_t = flip(V(s_{t+1}))); lambda = 1 with Peng's variant and gamma = 1
gives the game's result from each mover's side. A position whose root search proved a mate has the exact
value 1 in place of V. Returns are computed for a whole replay window at once, each time the target network
changes (the "cached lambda-returns" of Daley and Amato, 2019): a batch then only reads them.
"""

from __future__ import annotations

import numpy as np

from messiah.records.formats import result_for_side_to_move
from messiah.records.selfplayfile import END_TRUNCATED, EXPLORATORY, FINAL, PROVEN


def flip(x: float | np.ndarray, gamma: float) -> float | np.ndarray:
    """The value of a position seen from the side that moved into it, discounted toward 0.5."""
    return 0.5 + gamma * (0.5 - x)


def lambda_returns(values: np.ndarray, exploratory: np.ndarray, last: float, lam: float, gamma: float,
                   watkins: bool) -> np.ndarray:
    """G_t for the n moves of one game. ``values[k]`` is V(s_k) for its side to move (``values[0]`` is not
    used); ``exploratory[k]`` whether a_k was exploratory; ``last`` is G_{n-1} (the result for its mover,
    or the truncation bootstrap)."""
    n = len(values)
    out = np.empty(n, np.float64)
    if n == 0:
        return out.astype(np.float32)
    out[n - 1] = last
    for t in range(n - 2, -1, -1):
        v = float(values[t + 1])
        carry = v if watkins and exploratory[t + 1] else out[t + 1]
        out[t] = flip((1.0 - lam) * v + lam * carry, gamma)
    return out.astype(np.float32)


def side_to_move(hcp: np.ndarray) -> np.ndarray:
    """0 black / 1 white for rows of (N, 32) hcp bytes: the first bit of a HuffmanCodedPos."""
    return (np.asarray(hcp)[:, 0] & 1).astype(np.int8)


def game_targets(records: np.ndarray, values: np.ndarray, lam: float, gamma: float, watkins: bool) -> np.ndarray:
    """The lambda-return of every row of one game's records (NaN for a final row, which has no move).
    ``values`` are V of each row's position for its side to move (from the target network); rows flagged
    PROVEN use their exact value 1 instead."""
    flags = np.asarray(records["flags"])
    values = np.where(flags & PROVEN, 1.0, values)
    moved = np.flatnonzero((flags & FINAL) == 0)
    out = np.full(len(records), np.nan, np.float32)
    if len(moved) == 0:
        return out
    last_row = int(moved[-1])
    end = int(records["end"][last_row])
    if end == END_TRUNCATED:
        final = np.flatnonzero(flags & FINAL)
        if len(final) == 0:
            raise ValueError("a truncated game without its final position")
        last = flip(float(values[final[-1]]), gamma)
    else:
        turn = int(side_to_move(np.asarray(records["hcp"][last_row : last_row + 1]))[0])
        last = float(result_for_side_to_move(records["gameResult"][last_row : last_row + 1], turn)[0])
    out[moved] = lambda_returns(values[moved], (flags[moved] & EXPLORATORY).astype(bool), last, lam, gamma, watkins)
    return out


def window_targets(records: np.ndarray, game_starts: np.ndarray, values: np.ndarray, lam: float, gamma: float,
                   watkins: bool) -> np.ndarray:
    """:func:`game_targets` for every game of a window (``game_starts``: each game's first row)."""
    out = np.full(len(records), np.nan, np.float32)
    bounds = list(game_starts) + [len(records)]
    for a, b in zip(bounds[:-1], bounds[1:], strict=True):
        out[a:b] = game_targets(records[a:b], values[a:b], lam, gamma, watkins)
    return out
