"""The benchmark runs and reports consistent figures (no timing assertions: speed is not a test)."""

from pathlib import Path

import cshogi
import numpy as np
import pytest
from conftest import TEACHER

from messiah.evaluator import Evaluator
from messiah.features import SHAPE
from messiah.tools.bench import bench_core, position_set, scalar_twin


def test_bench_reports_every_figure(tmp_path):
    pytest.importorskip("torch")
    positions = position_set(limit=4)
    assert len(positions.boards) == 4
    for board in positions.boards:
        in_hand = sum(sum(side) for side in board.pieces_in_hand)
        assert 2 <= in_hand <= 12
    evaluator = Evaluator(threads=1, device="cpu")
    figures = bench_core(evaluator, positions, scalar_twin(evaluator, str(tmp_path), positions))
    legal = [len(list(b.legal_moves)) for b in positions.boards]
    assert figures["mean_legal_moves"] == sum(legal) / len(legal)
    for key in ("features_us_single", "features_pos_per_s_batch", "forward_us_batch1", "moves_scored_per_s",
                "per_child_moves_scored_per_s", "all_moves_vs_per_child_ratio"):
        assert figures[key] > 0, key
    assert set(figures["forward_per_s"]) == {"batch1", "batch8", "batch32", "batch128", "batch512"}
    assert all(rate > 0 for rate in figures["forward_per_s"].values())
    # boards are left as they were (the per-child path pushes and pops)
    assert [b.sfen() for b in positions.boards] == [b.sfen() for b in position_set(limit=4).boards]
    assert isinstance(positions.boards[0], cshogi.Board)


def test_the_scalar_twin_is_quantized_when_the_model_is(tmp_path):
    """The all-moves vs per-child ratio compares like with like: an int8 model's twin is int8 too."""
    pytest.importorskip("torch")
    import onnx

    from messiah.evaluator import default_model_path

    positions = position_set(limit=4)
    for int8 in (True, False):
        folder = tmp_path / ("int8" if int8 else "float")
        folder.mkdir()
        twin = scalar_twin(Evaluator(default_model_path(int8=int8), threads=1, device="cpu"), str(folder), positions)
        meta = twin.session.get_modelmeta().custom_metadata_map
        assert meta.get("messiah.precision", "float") == ("int8" if int8 else "float")
        files = sorted(p.name for p in folder.iterdir())
        assert files == (["twin-int8.onnx", "twin.onnx"] if int8 else ["twin.onnx"])
        ops = {node.op_type for node in onnx.load(str(folder / files[0])).graph.node}
        assert ("QuantizeLinear" in ops) == int8
        assert twin.values(np.zeros((2, *SHAPE), np.float32)).shape[0] == 2


def test_train_bench_reports_throughput_and_data_wait():
    pytest.importorskip("torch")
    from messiah.tools.bench import TrainBench, bench_train

    figures = bench_train(TrainBench(data=[str(TEACHER)], steps=2, workers=[0], batch_size=16, arch="3x8"))
    assert figures["architecture"] == "3x8"
    row = figures["cpu, workers=0"]
    assert row["positions_per_s"] > 0 and row["steps_per_s"] > 0 and 0 <= row["data_wait_percent"] <= 100


def test_shared_data_is_found_and_can_be_overridden(monkeypatch, tmp_path):
    from messiah.paths import shared_data

    monkeypatch.delenv("MESSIAH_DATA", raising=False)  # a clone outside /work finds it beside the checkout
    assert shared_data() == Path(__file__).resolve().parents[2] / "shared" / "data"
    monkeypatch.setenv("MESSIAH_DATA", str(tmp_path))
    assert shared_data() == tmp_path


def test_search_bench_compares_leaf_batch_sizes():
    from messiah.tools.bench import bench_search

    figures = bench_search(Evaluator(threads=1, device="cpu"), position_set(limit=2), 0.02, ["alphabeta", "puct"],
                           (1, 4))
    assert set(figures) == {"movetime_ms", "bare_score_per_s", "alphabeta batch 1", "puct batch 1", "puct batch 4",
                            "forward_batch1_per_s", "forward_batch4_per_s"}
    assert all(figures[k]["positions_evaluated_per_s"] > 0 for k in ("puct batch 1", "puct batch 4"))
    four = figures["puct batch 4"]  # against the forward passes alone at the search's own batch
    rate = four["positions_evaluated_per_s"] / figures["forward_batch4_per_s"]
    assert four["vs_forward_batch4"] == pytest.approx(rate)


def test_selfplay_bench_plays_the_games_and_reports_per_batch():
    from messiah.tools.bench import SelfPlayBench, bench_selfplay

    # with the shared opening set where it is, else (a clone without it) random plies from the start
    figures = bench_selfplay(SelfPlayBench(games=1, nodes=8, search_batch=[1, 4]))
    one, four = figures["search_batch=1"], figures["search_batch=4"]
    assert one["positions"] > 0 and one["positions_per_s"] > 0 and 0 < one["forward_share"] < 1
    assert one["leaves_per_forward"] == 1.0 and 1.0 < four["leaves_per_forward"] <= 4.0


def test_choices_bench_records_each_choice_and_compares_with_an_earlier_run(tmp_path):
    """The same run compared with itself agrees everywhere; a run whose recorded move was changed disagrees there
    and only there; a file of other positions is refused."""
    import json

    from messiah.errors import UserError
    from messiah.tools.bench import ChoicesBench, bench_choices

    first = bench_choices(ChoicesBench(nodes=16, positions=3, searches=["puct"]))
    assert len(first["puct"]) == 3 and all(row["nodes"] == 16 for row in first["puct"])
    for row in first["puct"]:
        board = cshogi.Board(row["sfen"])
        assert board.move_from_usi(row["move"]) in set(board.legal_moves)
    changed = json.loads(json.dumps(first))
    changed["puct"][1]["move"], changed["puct"][1]["pv"] = "resign", ["resign"]
    (tmp_path / "changed.json").write_text(json.dumps(changed))
    again = bench_choices(ChoicesBench(nodes=16, positions=3, searches=["puct"],
                                       compare=str(tmp_path / "changed.json")))
    agreement = again["puct agreement"]
    assert agreement["positions"] == 3 and agreement["same_move"] == 2
    assert agreement["same_line_and_winrate"] == 2  # the two untouched positions: the search is deterministic
    assert agreement["different_moves"] == [first["puct"][1]["sfen"]]
    changed["puct"][0]["sfen"] = "9/9/9/9/9/9/9/9/9 b - 1"
    (tmp_path / "other.json").write_text(json.dumps(changed))
    with pytest.raises(UserError, match="positions are not these"):
        bench_choices(ChoicesBench(nodes=16, positions=3, searches=["puct"], compare=str(tmp_path / "other.json")))


def test_the_stand_in_bench_runs_each_bandit_search_on_stored_scores():
    from messiah.tools.bench import bench_stand_in, stored_scores

    stored = stored_scores(None)
    q = stored.run(np.zeros((2, 1, 11, 9), np.float32), np.array([[0, 5], [7, 7]]))
    assert q.shape == (2, 2) and q[1, 0] == q[1, 1] and stored.calls == 1 and stored.positions == 2
    figures = bench_stand_in(None, position_set(limit=2), 0.02, batches=(8,))
    assert set(figures) == {"puct batch 8", "ucb1 batch 8"}
    assert all(f["leaves_per_s"] > 0 for f in figures.values())


def test_the_perft_bench_counts_by_the_core_and_by_cshogi():
    from messiah.tools.bench import PerftBench, bench_perft

    figures = bench_perft(PerftBench(depth=3))
    assert figures["core"] == figures["cshogi"] == 25_470 and figures["equal"]
    after_a_move = bench_perft(PerftBench("lnsgkgsnl/1r5b1/ppppppppp/9/9/2P6/PP1PPPPPP/1B5R1/LNSGKGSNL w - 2", 2))
    assert after_a_move["core"] == after_a_move["cshogi"] > 0 and after_a_move["depth"] == 2


def test_the_clock_bench_drives_both_engines_through_the_projects_usi_client(fake):
    """bench clock plays through messiah.arena.client.UsiClient (an engine's stderr is not left to fill a pipe, a
    dead one is an error): the fake engine answers each go at once, so no flag falls."""
    from messiah.tools.bench import ClockBench, bench_clock

    figures = bench_clock(ClockBench(engine=fake, byoyomi=100, plies=4, options={"MultiPV": "1"}))
    assert figures["moves"] == 4 and not figures["flag_fell"] and figures["left_ms"] == [0, 0]
