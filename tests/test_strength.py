"""The Strength option: each level's nodes and temperature, the choice among near-best moves, and the USI
engine playing a level. Where the levels stand in games is a benchmark (docs/strength.md), not a test."""

import random
from collections import Counter

import numpy as np
import pytest

from messiah.engine.strength import CANDIDATES, LEVELS, Strength
from messiah.engine.usi import UsiEngine
from messiah.evaluator import MoveScores


def scores(q: list[float]) -> MoveScores:
    return MoveScores(np.arange(1, len(q) + 1, dtype=np.uint32), np.arange(len(q)), np.array(q, np.float32))


def test_levels_search_more_and_choose_less_freely_as_they_rise():
    levels = [Strength(s) for s in range(1, LEVELS + 1)]
    assert [s.nodes for s in levels] == sorted(s.nodes for s in levels) and levels[0].nodes == 2
    assert levels[-1].nodes == 1448 and levels[-1].temperature == 0
    assert all(a.temperature > b.temperature for a, b in zip(levels, levels[1:], strict=False))
    for bad in (0, LEVELS + 1):
        with pytest.raises(ValueError, match="Strength must be"):
            Strength(bad)


def test_the_choice_follows_the_softmax_of_the_near_best_moves():
    """Level 1 (temperature 0.08): moves at 0.50, 0.46, 0.42 and 0.10 are drawn as exp(-d / 0.08) says; the one
    more than three temperatures below the best never is."""
    level, rng = Strength(1), random.Random(7)
    position = scores([0.50, 0.46, 0.42, 0.10])
    drawn = Counter(level.choose(1, 0.50, False, position, rng)[0] for _ in range(20000))
    weights = np.exp((np.array([0.50, 0.46, 0.42]) - 0.50) / level.temperature)
    expected = weights / weights.sum()
    assert drawn[4] == 0 and 0.10 < 0.50 - CANDIDATES * level.temperature
    for move in (1, 2, 3):
        assert drawn[move] / 20000 == pytest.approx(expected[move - 1], abs=0.015)


def test_the_search_s_best_stands_level_with_the_network_s_favourite_and_a_proven_win_is_always_played():
    """The network rates move 2 best (0.6) and the search chose move 3 (0.2 by the network, 0.55 searched): both are
    drawn about equally, move 1 (0.3 points below) never; the search's move comes with its searched value."""
    level, rng = Strength(1), random.Random(1)
    drawn = Counter(level.choose(3, 0.55, False, scores([0.3, 0.6, 0.2]), rng) for _ in range(4000))
    assert {move for move, _ in drawn} == {2, 3}
    assert drawn[(3, 0.55)] / 4000 == pytest.approx(0.5, abs=0.03)
    assert all(value == pytest.approx(0.6) for move, value in drawn if move == 2)
    assert {level.choose(3, 1.0, True, scores([0.5, 0.5, 0.5]), rng)[0] for _ in range(200)} == {3}
    assert {Strength(LEVELS).choose(3, 0.5, False, scores([0.5, 0.5, 0.5]), rng)[0] for _ in range(200)} == {3}


def test_the_engine_at_a_level_caps_its_nodes_and_varies_its_moves():
    out: list[str] = []
    e = UsiEngine(out.append)
    e.handle("setoption name Strength value 3")
    e.handle("isready")
    played = set()
    for _ in range(12):
        e.handle("position startpos moves 7g7f 3c3d")
        e.handle("go byoyomi 60000")  # a minute, but level 3's four nodes
        e._await_search()
        played.add(out[-1])
    nodes = [int(line.split(" nodes ")[1].split()[0]) for line in out if " nodes " in line]
    assert max(nodes) <= Strength(3).nodes and len(played) > 2
    assert sum(line.startswith("bestmove") for line in out) == 12
    e.handle("setoption name Strength value 21")
    assert "info string error: Strength must be an integer 0..20" in out[-1]
