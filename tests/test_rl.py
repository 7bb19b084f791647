"""messiah rl: lambda-returns, self-play records and their repair, loading a net from ONNX, the leaf batcher, a
tiny end-to-end run that resumes, and the Ray actors on a local instance."""

from __future__ import annotations

import csv
import json
import math
import os
import shutil
import threading
import warnings
from dataclasses import replace

import cshogi
import numpy as np
import pytest
from conftest import FIXTURES, GAMES, OPENINGS, TEACHER

from messiah.records import game_index_path, read_records
from messiah.records.selfplayfile import (
    END_MATED,
    END_PROVEN_MATE,
    END_REPETITION,
    END_TRUNCATED,
    EXPLORATORY,
    FINAL,
    PROVEN,
    SELFPLAY,
    TREE,
    append_game,
    prepare,
    read_selfplay_games,
    tree_file,
)
from messiah.train.batch import value_target
from messiah.train.rl.targets import flip, game_targets, lambda_returns

torch = pytest.importorskip("torch")


# --------------------------------------------------------------------------- lambda-returns

def test_one_step_targets_are_the_negamax_flip_of_the_next_value():
    values = np.array([np.nan, 0.3, 0.8, 0.6])
    g = lambda_returns(values, np.zeros(4, bool), last=1.0, lam=0.0, gamma=1.0, watkins=True)
    np.testing.assert_allclose(g, [0.7, 0.2, 0.4, 1.0], atol=1e-6)


def test_peng_with_lambda_one_is_the_result_from_each_movers_side():
    values = np.array([np.nan, 0.3, 0.8, 0.6, 0.1])
    g = lambda_returns(values, np.array([0, 1, 0, 1, 0], bool), last=1.0, lam=1.0, gamma=1.0, watkins=False)
    np.testing.assert_allclose(g, [1.0, 0.0, 1.0, 0.0, 1.0], atol=1e-6)  # the last mover won


def test_lambda_return_by_hand_and_watkins_cuts_at_an_exploratory_move():
    lam = 0.7
    values = np.array([np.nan, 0.4, 0.9])
    explore = np.array([False, False, True])  # the last move (a_2) was exploratory
    # G_2 = 1 (the mover of a_2 won); Peng: G_1 = 1 - (0.3 * 0.9 + 0.7 * 1) = 0.03,
    # G_0 = 1 - (0.3 * 0.4 + 0.7 * 0.03) = 0.859
    peng = lambda_returns(values, explore, 1.0, lam, 1.0, watkins=False)
    np.testing.assert_allclose(peng, [0.859, 0.03, 1.0], atol=1e-6)
    # Watkins: a_2 was exploratory, so G_1 = 1 - V(s_2) = 0.1 and G_0 = 1 - (0.3 * 0.4 + 0.7 * 0.1) = 0.81
    watkins = lambda_returns(values, explore, 1.0, lam, 1.0, watkins=True)
    np.testing.assert_allclose(watkins, [0.81, 0.1, 1.0], atol=1e-6)


def test_gamma_discounts_toward_a_draw():
    assert flip(1.0, 0.9) == pytest.approx(0.05)  # a loss seen from the winner's side, discounted: 0.5 + 0.9 * 0.5
    assert flip(0.5, 0.5) == pytest.approx(0.5)
    g = lambda_returns(np.array([np.nan, 0.0]), np.zeros(2, bool), 1.0, 0.0, 0.9, watkins=True)
    np.testing.assert_allclose(g, [0.95, 1.0], atol=1e-6)


def _game(n: int, end: int, result: int, flags: list[int] | None = None) -> np.ndarray:
    """A game of ``n`` rows from the start position alternating sides; ``result`` an hcpe gameResult."""
    rows = np.zeros(n, SELFPLAY)
    board = cshogi.Board()
    moves = ["7g7f", "3c3d", "2g2f", "8c8d", "2f2e", "8d8e", "6i7h", "4a3b"]
    for i in range(n):
        board.to_hcp(rows["hcp"][i])
        if i < len(moves):
            board.push_usi(moves[i])
    rows["end"], rows["gameResult"] = end, result
    if flags is not None:
        rows["flags"] = flags
    return rows


def test_a_terminal_result_is_exact_for_the_last_mover():
    # black moves at rows 0 and 2; white mated after row 2's move: black won
    rows = _game(3, END_MATED, 1)
    values = np.array([0.5, 0.2, 0.6])
    g = game_targets(rows, values, lam=0.0, gamma=0.9, watkins=True)
    np.testing.assert_allclose(g, [flip(0.2, 0.9), flip(0.6, 0.9), 1.0], atol=1e-6)
    white_won = _game(3, END_MATED, 2)  # row 2 is black's move: black lost
    assert game_targets(white_won, values, 0.0, 1.0, True)[2] == 0.0


def test_a_truncated_game_bootstraps_from_its_final_position_not_from_a_draw():
    rows = _game(4, END_TRUNCATED, 0, flags=[0, 0, 0, FINAL])
    values = np.array([0.5, 0.5, 0.5, 0.9])  # the final position is good for its side to move
    g = game_targets(rows, values, lam=0.5, gamma=1.0, watkins=True)
    assert np.isnan(g[3])  # the final row has no move
    assert g[2] == pytest.approx(0.1)  # 1 - V(final), not 0.5
    assert g[1] == pytest.approx(1 - (0.5 * 0.5 + 0.5 * 0.1))


def test_a_proven_position_counts_exactly_in_the_returns():
    rows = _game(3, END_PROVEN_MATE, 1, flags=[0, 0, PROVEN])  # row 2 (black to move) proved a mate: black won
    values = np.array([0.5, 0.5, 0.3])  # the network undervalues the proven position
    g = game_targets(rows, values, lam=0.0, gamma=1.0, watkins=True)
    np.testing.assert_allclose(g, [0.5, 0.0, 1.0], atol=1e-6)  # row 1: 1 - V(s_2) = 1 - 1


def test_game_targets_read_the_exploratory_flag():
    rows = _game(3, END_MATED, 1, flags=[0, 0, EXPLORATORY])
    values = np.array([0.5, 0.4, 0.9])
    watkins = game_targets(rows, values, 0.7, 1.0, True)
    peng = game_targets(rows, values, 0.7, 1.0, False)
    assert watkins[1] == pytest.approx(0.1) and peng[1] == pytest.approx(0.03)


# --------------------------------------------------------------------------- records

def test_records_append_repair_after_a_crash_and_exact_index(tmp_path):
    path = tmp_path / "g0001.selfplay"
    games = [_game(5, END_MATED, 1), _game(3, END_MATED, 2), _game(7, END_MATED, 0)]
    for i, game in enumerate(games[:2]):
        game["game"] = i
        append_game(path, game)
    assert prepare(path) == 8
    # a crash: the third game's data half written, never indexed, and a partial index entry
    with open(path, "ab") as f:
        f.write(games[2].tobytes()[: SELFPLAY.itemsize * 3 + 100])
    with open(game_index_path(path), "ab") as f:
        f.write(b"\x07\x00")
    with warnings.catch_warnings(record=True) as caught:
        warnings.simplefilter("always")
        assert prepare(path) == 8
    assert len(caught) == 2  # the partial index entry and the cut data, each said
    records, starts = read_selfplay_games(path)
    assert len(records) == 8 and starts.tolist() == [0, 5]
    assert np.fromfile(game_index_path(path), np.uint32).tolist() == [5, 3]
    games[2]["game"] = 2
    append_game(path, games[2])
    records, starts = read_selfplay_games(path)
    assert starts.tolist() == [0, 5, 8] and records["game"].tolist() == [0] * 5 + [1] * 3 + [2] * 7
    # readable as hcpe data (messiah evaluate, pretraining), with its exact game boundaries
    data = read_records(path)
    assert len(data) == 15 and data.game_starts.tolist() == [0, 5, 8]
    assert data[np.arange(15)]["hcp"].tobytes() == np.asarray(records["hcp"]).tobytes()


def test_an_index_longer_than_the_data_is_cut_back(tmp_path):
    path = tmp_path / "g.selfplay"
    append_game(path, _game(4, END_MATED, 1))
    append_game(path, _game(4, END_MATED, 1))
    os.truncate(path, SELFPLAY.itemsize * 6)  # the second game's data lost, its index entry kept
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        assert prepare(path) == 4
    assert np.fromfile(game_index_path(path), np.uint32).tolist() == [4]


# --------------------------------------------------------------------------- nets and evaluation

@pytest.mark.parametrize("trained", [True, False])
def test_a_net_loaded_from_onnx_scores_as_the_onnx_model(tmp_path, trained):
    """Also a net exported as initialised, whose export leaves out the folded biases (all zeros): loading it raised
    a KeyError, so `messiah rl --init` given a random-weights run's models/g0000.onnx died at its start."""
    from messiah.evaluator import Evaluator
    from messiah.models.config import NetConfig
    from messiah.models.export import export_onnx
    from messiah.models.from_onnx import calibration_positions, net_from_onnx
    from messiah.models.net import AllMovesNet

    torch.manual_seed(3)
    original = AllMovesNet(NetConfig(channels=8, blocks=1, head_channels=4, embed_dim=16))
    original.train()
    if trained:
        with torch.no_grad():  # batch norms with non-trivial statistics, as after training
            original(torch.from_numpy(calibration_positions(64, seed=1)))
    path = export_onnx(original, tmp_path / "m.onnx")
    net = net_from_onnx(path)
    assert net.config == original.config
    board = cshogi.Board()
    board.push_usi("7g7f")
    scores = Evaluator(path, threads=1).score(board)
    from messiah.features import board_planes

    x = torch.from_numpy(board_planes(board)[None].copy())
    with torch.no_grad():
        q = torch.sigmoid(net.move_logits(net(x), torch.from_numpy(scores.indices[None])))[0].numpy()
        q0 = torch.sigmoid(original.eval().move_logits(original(x), torch.from_numpy(scores.indices[None])))[0]
    np.testing.assert_allclose(q, scores.q, atol=1e-5)
    np.testing.assert_allclose(q, q0.numpy(), atol=1e-5)
    # training mode (batch statistics) computes nearly the same function: fine-tuning starts where the model is
    many = torch.from_numpy(calibration_positions(256, seed=9))
    with torch.no_grad():
        h_train = net.train()(many)
        h_eval = net.eval()(many)
    assert ((h_train - h_eval).norm() / h_eval.norm()).item() < 0.2


def test_a_run_given_a_narrower_model_and_more_channels_widens_it_and_keeps_its_play(tmp_path):
    from messiah.models.config import NetConfig
    from messiah.models.export import export_onnx
    from messiah.models.from_onnx import calibration_positions, net_from_onnx
    from messiah.train.trainer import initial_net

    small = NetConfig(channels=8, blocks=1, head_channels=4, embed_dim=16)
    trained = initial_net(tiny(tmp_path, net=small)).train()
    with torch.no_grad():  # batch norms with non-trivial statistics, as after training
        trained(torch.from_numpy(calibration_positions(64, seed=1)))
    path = export_onnx(trained, tmp_path / "m.onnx")
    narrow = net_from_onnx(path).eval()
    wide = initial_net(tiny(tmp_path, init=str(path), net=replace(small, channels=12))).eval()
    same = initial_net(tiny(tmp_path, init=str(path))).eval()  # as many channels as the model: as it is
    assert (wide.config.channels, same.config.channels) == (12, 8)
    x = torch.from_numpy(calibration_positions(16, seed=4))
    with torch.no_grad():
        torch.testing.assert_close(wide(x), narrow(x), atol=1e-5, rtol=1e-5)


def test_leaf_batcher_gives_each_game_its_own_scores():
    from messiah.evaluator import Evaluator
    from messiah.train.rl.selfplay import LeafBatcher

    evaluator = Evaluator(None, threads=1)
    boards = []
    for moves in (["7g7f"], ["2g2f", "8c8d"], ["5g5f", "3c3d", "8h2b+"]):
        b = cshogi.Board()
        for m in moves:
            b.push_usi(m)
        boards.append(b)
    batcher = LeafBatcher(evaluator, len(boards))
    got = [None] * len(boards)

    def work(i: int) -> None:
        proxy = batcher.game_evaluator()
        for _ in range(5):
            got[i] = proxy.score(boards[i]).q
        batcher.done()

    threads = [threading.Thread(target=work, args=(i,)) for i in range(len(boards))]
    for t in threads:
        t.start()
    for t in threads:
        t.join(timeout=60)
    for board, q in zip(boards, got, strict=True):
        np.testing.assert_allclose(q, evaluator.score(board).q, atol=1e-5)
    assert evaluator.calls < 15 + len(boards)  # batched: fewer passes than the 15 requests plus the checks
    # a game's evaluator is the shared model (built by Evaluator's own constructor: nothing copied by hand) with
    # its forward pass through the batcher and counters of its own
    proxy = LeafBatcher(evaluator, 1).game_evaluator()
    assert proxy.model is evaluator.model and proxy.describe() == evaluator.describe() and proxy.gpu_batch == 0
    calls = evaluator.calls
    np.testing.assert_allclose(proxy.score(boards[0]).q, evaluator.score(boards[0]).q, atol=1e-5)
    assert (proxy.calls, proxy.positions, evaluator.calls) == (1, 1, calls + 2)


# --------------------------------------------------------------------------- end to end

def tiny(tmp_path, **overrides):
    """A tiny run on the fixtures: the teacher fixture's rows and the fixture's 8-ply openings (not the
    default, the shared data's openings where they are: the run is the same with or without them)."""
    from messiah.models.config import NetConfig
    from messiah.train.rl.config import RLConfig

    settings = dict(out=str(tmp_path / "rl"), init="random", net=NetConfig(channels=8, blocks=1, head_channels=4,
                                                                          embed_dim=16),
                    generations=1, games=2, actors=1, nodes=8, mate_nodes=200, max_ply=50, steps=3, batch_size=16,
                    checkpoint_every=2, window=10_000, teacher=[str(TEACHER)], openings=str(OPENINGS),
                    val_positions=64, gate_games=2, gate_nodes=4, gate_jobs=1, progress=False, threads=1, seed=5)
    settings.update(overrides)
    return RLConfig(**settings)


def test_a_tiny_run_plays_learns_gates_logs_and_resumes_after_a_crash(tmp_path):
    from messiah.train.rl.loop import run

    cfg = tiny(tmp_path, verify_every=1, verify_games=2)
    best = run(cfg)
    out = tmp_path / "rl"
    assert best.exists() and (out / "models" / "g0001.onnx").exists()
    from messiah.evaluator import Evaluator

    # the CPU actors played with the int8 copy of the best model when their generation began (generation 1: g0000)
    copy = out / "models" / "best-int8.onnx"
    assert Evaluator(copy).metadata["messiah.precision"] == "int8"
    assert Evaluator(copy).metadata["messiah.generation"] == "0"
    row = json.loads((out / "gens" / "g0001.json").read_text())
    assert row["games"] == 2 and row["learner_steps"] == 3 and row["gate_games"] == 2
    # the verification against the fixed starting model: its games' records, W-L-D and Elo with an interval
    assert row["verify_games"] == 2 == row["verify_wins"] + row["verify_losses"] + row["verify_draws"]
    assert len(list((out / "verify" / "g0001").glob("*.csa"))) == 2
    assert row["verify_elo_low"] <= row["verify_elo"] <= row["verify_elo_high"]
    assert row["truncated_share"] > 0  # random weights, 50 plies: games are cut at the maximum ply
    records, starts = read_selfplay_games(out / "selfplay" / "g0001.selfplay")
    assert len(starts) == 2 and set(np.asarray(records["game"]).tolist()) == {0, 1}
    truncated = np.asarray(records["end"]) == END_TRUNCATED
    assert ((np.asarray(records["flags"]) & FINAL) > 0).sum() == sum(
        bool(truncated[s]) for s in starts)  # one final position per truncated game
    # log.csv: the whole header, and a column written for every figure of the generation but the JSON-only ones
    from messiah.train.rl.figures import LOG_FIELDS

    with open(out / "log.csv", newline="") as f:
        header, *written = list(csv.reader(f))
    assert header == LOG_FIELDS and len(written) == 1
    filled = {name for name, cell in zip(header, written[0], strict=True) if cell}
    assert set(row) - set(LOG_FIELDS) == {"endings", "sprt"}  # the JSON-only figures
    assert filled == {k for k, v in row.items() if k in LOG_FIELDS and v is not None} | {"total_elo"}
    # once dropped unsaid; the floodgate figures come with the shared data's floodgate test set only
    floodgate = {"floodgate_agreement", "floodgate_value_mse"} if "floodgate_agreement" in row else set()
    assert {"generation_s", "teacher_value_mse"} | floodgate <= filled
    steps_before = torch.load(out / "learner.pt", weights_only=True)["step"]

    # a kill -9 in generation 2's self-play, halfway through writing its second game
    cfg2 = tiny(tmp_path, generations=2, verify_every=2, verify_games=2)
    from messiah.train.rl.loop import selfplay

    selfplay(tiny(tmp_path, games=1), 2, best)  # only the first game of generation 2 (same seeds)
    path = out / "selfplay" / "g0002.selfplay"
    one_game = path.read_bytes()
    with open(path, "ab") as f:
        f.write(b"\0" * (SELFPLAY.itemsize + 7))
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        run(cfg2)
    records, starts = read_selfplay_games(path)
    assert len(starts) == 2 and path.read_bytes()[: len(one_game)] == one_game  # the game before the crash kept
    assert sorted(set(np.asarray(records["game"]).tolist())) == [0, 1]  # and the lost one played again
    best_after_1 = json.loads((out / "gens" / "g0001.json").read_text())["best_generation"]
    assert Evaluator(copy).metadata["messiah.generation"] == str(best_after_1)  # remade for generation 2
    assert torch.load(out / "learner.pt", weights_only=True)["step"] == steps_before + 3
    assert len((out / "log.csv").read_text().splitlines()) == 3
    assert json.loads((out / "gens" / "g0002.json").read_text())["verify_games"] == 2  # every 2nd generation
    assert (out / "log.png").exists()
    # rerunning the finished command does nothing more; a command that changes the run is refused
    run(cfg2)
    assert len((out / "log.csv").read_text().splitlines()) == 3
    # each start said what it ran on, and from which generation: the versions a replay to the bit installs
    starts = [json.loads(x) for x in (out / "environment.jsonl").read_text().splitlines()]
    assert [s["from_generation"] for s in starts] == [1, 2, 3]
    assert all(s["packages"]["torch"] == torch.__version__ and s["packages"]["numpy"] == np.__version__
               for s in starts)
    with pytest.raises(ValueError, match="lam 0.7 -> 0.5"):
        run(tiny(tmp_path, generations=2, lam=0.5))


def test_gates_and_verifications_without_an_opening_file_play_random_openings(tmp_path, monkeypatch):
    """With --openings '' a gate or a verification draws its openings as self-play does (--random-plies random
    moves), one per pair, from its own seed: the bare start position at a fixed node count would replay the
    same two games in every pair (a run's 100-game verifications read 100-0 and 50-50)."""
    from pathlib import Path

    from messiah.arena import match, stats
    from messiah.train.rl import loop

    played = []
    monkeypatch.setattr(match, "play_match", lambda cfg, progress: played.append(cfg) or (("a", "b"), []))
    monkeypatch.setattr(stats, "summarize", lambda games, sprt: {"games": len(games)})
    cfg = tiny(tmp_path, openings="", random_plies=6)
    for name, seed in (("v1", 7), ("v2", 7), ("v3", 8)):
        loop.play_models(cfg, tmp_path / name, Path("c.onnx"), Path("r.onnx"), 100, seed)
    files = [Path(m.openings) for m in played]
    assert [f.parent.name for f in files] == ["v1", "v2", "v3"]
    lines = files[0].read_text().splitlines()
    assert len(lines) == 50 and len(set(lines)) >= 45
    for line in lines:
        board = cshogi.Board()
        words = line.split()
        assert words[:2] == ["startpos", "moves"] and len(words) == 2 + 6
        for move in words[2:]:
            assert board.is_legal(board.move_from_usi(move))
            board.push_usi(move)
    assert files[1].read_text() == files[0].read_text() and files[2].read_text() != files[0].read_text()
    # with an opening file the match draws from it, as before
    loop.play_models(tiny(tmp_path), tmp_path / "v4", Path("c.onnx"), Path("r.onnx"), 4, 7)
    assert played[-1].openings == str(OPENINGS)


def test_a_run_without_the_shared_data_names_what_it_goes_without(tmp_path, monkeypatch):
    """An installed package finds the shared data only through $MESSIAH_DATA: each share or figure the defaults
    would silently drop is named, and a run with its data says nothing."""
    from messiah.train.rl import loop
    from messiah.train.rl.config import RLConfig

    monkeypatch.setattr(loop, "AGREEMENT_SET", tmp_path / "absent" / "test.hcpe")
    monkeypatch.setattr(loop, "DEFAULT_OPENINGS", tmp_path / "absent" / "records.sfen")
    bare = RLConfig(out=str(tmp_path / "rl"), teacher=[], strong=[], strong_fraction=0.1, openings="")
    lines = loop.missing_data(bare)
    assert len(lines) == 4
    assert "--teacher-fraction 0.25" in lines[0] and "--strong-fraction 0.1" in lines[1]
    assert "test.hcpe" in lines[2] and "random plies" in lines[3]
    assert all("MESSIAH_DATA" in line for line in lines)
    teacher = tmp_path / "t.hcpe"
    monkeypatch.setattr(loop, "AGREEMENT_SET", teacher)
    teacher.write_bytes(b"")
    full = RLConfig(out=str(tmp_path / "rl"), teacher=[str(teacher)], strong=[str(teacher)], strong_fraction=0.1,
                    openings=str(teacher))
    assert loop.missing_data(full) == []
    # random openings chosen with --openings '' while the shared set is there: nothing is missing
    monkeypatch.setattr(loop, "DEFAULT_OPENINGS", teacher)
    assert loop.missing_data(replace(full, openings="")) == []


def test_a_net_loaded_from_onnx_trains_its_batch_norms(tmp_path):
    """A run from an ONNX model (eval mode when loaded) normalises by each batch and updates the running statistics
    from its first step; before, its first generation trained with them frozen until the first validate()."""
    from messiah.models.export import export_onnx
    from messiah.models.from_onnx import calibration_positions, net_from_onnx
    from messiah.train.rl.learner import Learner, Window
    from messiah.train.trainer import initial_net

    cfg = tiny(tmp_path)
    (tmp_path / "rl").mkdir()
    trained = initial_net(cfg).train()
    with torch.no_grad():  # batch norms with statistics of their own, as after training (and so kept in the export)
        trained(torch.from_numpy(calibration_positions(64, seed=1)))
    model = export_onnx(trained, tmp_path / "rl" / "m.onnx")
    net = net_from_onnx(model)
    assert not net.training
    learner = Learner(replace(cfg, init=str(model)), net)
    norms = [m for m in learner.trainer.net.modules() if isinstance(m, torch.nn.BatchNorm2d)]
    before = [m.running_mean.clone() for m in norms]
    learner.train(Window([], cfg.window), 1)  # teacher rows only
    assert learner.trainer.net.training
    assert all(not torch.equal(a, m.running_mean) for a, m in zip(before, norms, strict=True))


def test_the_learner_resumes_from_its_checkpoint_mid_generation(tmp_path):
    from messiah.train.rl.learner import Learner, Window, selfplay_files
    from messiah.train.rl.loop import selfplay
    from messiah.train.trainer import initial_net

    os.environ["MESSIAH_RL_INPROCESS"] = "1"
    try:
        cfg = tiny(tmp_path, steps=4, checkpoint_every=2)
        (tmp_path / "rl").mkdir()
        from messiah.models.export import export_onnx

        model = export_onnx(initial_net(cfg), tmp_path / "rl" / "m.onnx")
        selfplay(cfg, 1, model)
        window = Window(selfplay_files(cfg.layout, 1), cfg.window)
        a = Learner(cfg, initial_net(cfg))
        a.refresh_target(window)
        assert len(window.trainable) > 0 and np.isfinite(window.targets[window.trainable]).all()
        a.train(window, 2)
        b = Learner(cfg, initial_net(cfg))  # a new process after a kill: from learner.pt
        assert b.load() and b.steps_done == 2
        for x, y in zip(a.trainer.net.state_dict().values(), b.trainer.net.state_dict().values(), strict=True):
            assert torch.equal(x, y)
        for x, y in zip(a.target.state_dict().values(), b.target.state_dict().values(), strict=True):
            assert torch.equal(x, y)
        batch_a, batch_b = a.batch(window, 2), b.batch(window, 2)  # the same batch is redrawn
        assert torch.equal(batch_a["features"], batch_b["features"])
    finally:
        del os.environ["MESSIAH_RL_INPROCESS"]


def test_an_old_runs_config_resumes_unless_it_set_a_deleted_lever(tmp_path):
    """--bootstrap search is deleted (a closed lever): a run saved with it is refused by name, never continued as
    a --bootstrap net run; a run saved with the old field at the kept setting ('net') loads as it was."""
    from messiah.errors import UserError
    from messiah.train.rl.config import load_config, save_config

    cfg = tiny(tmp_path, lam=0.5)
    (tmp_path / "rl").mkdir()
    save_config(cfg)
    path = tmp_path / "rl" / "config.json"
    saved = json.loads(path.read_text())
    path.write_text(json.dumps({**saved, "bootstrap": "net"}))
    assert load_config(tmp_path / "rl") == cfg
    path.write_text(json.dumps({**saved, "bootstrap": "search"}))
    with pytest.raises(UserError, match="bootstrap 'search'"):
        load_config(tmp_path / "rl")


def test_a_batch_mixes_self_play_teacher_and_strong_rows_in_their_shares(tmp_path, monkeypatch):
    import messiah.train.rl.learner as learner_module
    from messiah.errors import UserError
    from messiah.train.rl.learner import Learner, Window, selfplay_files
    from messiah.train.rl.loop import selfplay
    from messiah.train.trainer import initial_net

    with pytest.raises(UserError, match="more than the whole batch"):
        tiny(tmp_path, teacher_fraction=0.6, strong_fraction=0.5)
    monkeypatch.setenv("MESSIAH_RL_INPROCESS", "1")
    strong = GAMES  # game records: the moves played and the results, as the shared floodgate games
    cfg = tiny(tmp_path, teacher_fraction=0.25, strong_fraction=0.25, strong=[str(strong)])
    (tmp_path / "rl").mkdir()
    from messiah.models.export import export_onnx

    selfplay(cfg, 1, export_onnx(initial_net(cfg), tmp_path / "rl" / "m.onnx"))
    learner = Learner(cfg, initial_net(cfg))
    assert [str(f.path) for f in learner.strong.files] == [str(strong)]
    assert len(learner.strong.train_index) == len(learner.strong.files[0])  # all trained on, none held out
    drawn = []
    draw = learner_module.teacher_batch
    monkeypatch.setattr(learner_module, "teacher_batch",
                        lambda data, rows: drawn.append((data, len(rows))) or draw(data, rows))

    window = Window(selfplay_files(cfg.layout, 1), cfg.window)
    window.compute_targets(learner.values, cfg)
    batch = learner.batch(window, 0)
    assert drawn == [(learner.teacher, 4), (learner.strong, 4)]
    assert len(batch["features"]) == 16
    assert (~torch.isnan(batch["dense"])).any(1).sum() == 8  # only self-play rows carry the root's move values
    target, _, has_target = value_target(batch, cfg.scale)
    assert has_target[12:].all()  # the strong rows' value target is their game's result
    assert torch.isin(target[12:], torch.tensor([0.0, 0.5, 1.0])).all()

    drawn.clear()  # an empty window: the data files fill the batch in their proportions
    batch = learner.batch(Window([], cfg.window), 0)
    assert drawn == [(learner.teacher, 8), (learner.strong, 8)] and len(batch["features"]) == 16


def test_a_self_play_game_ends_on_the_board_as_the_rules_say():
    """Mated (the side to move lost), a perpetual check (lost by the checking side), a plain repetition (a draw)
    once a move of the game has been played but not in the opening's own history, and a game still going past
    --max-ply (truncated, no winner)."""
    from messiah.train.rl.config import RLConfig
    from messiah.train.rl.selfplay import game_over

    cfg = RLConfig(teacher=[], strong=[], openings="", max_ply=6)
    mated = cshogi.Board("4k4/4G4/4G4/9/9/9/9/9/4K4 w - 1")  # white's king on 5a: no legal move
    assert game_over(mated, 3, cfg) == (END_MATED, cshogi.BLACK)
    board = cshogi.Board()
    assert game_over(board, 0, cfg) is None
    for move in ["5i5h", "5a5b", "5h5i", "5b5a"]:  # back to the start position: a repetition
        board.push_usi(move)
    assert game_over(board, 4, cfg) == (END_REPETITION, None)
    assert game_over(board, 0, cfg) is None  # the same moves as an opening: its history does not count
    checked = cshogi.Board("8k/9/9/9/9/9/9/9/K6R1 b - 1")
    for move in ["2i1i", "1a2a", "1i2i", "2a1a"]:  # black's rook checks round a cycle: black loses
        checked.push_usi(move)
    assert game_over(checked, 4, cfg) == (END_REPETITION, cshogi.WHITE)
    checked.push_usi("2i1i")  # the same cycle completed by the check, white to move: white wins
    assert game_over(checked, 5, cfg) == (END_REPETITION, cshogi.WHITE)
    for move in ["7g7f", "3c3d"]:
        board.push_usi(move)
    assert board.move_number == 7 and game_over(board, 6, cfg) == (END_TRUNCATED, None)


def test_tree_rows_are_searched_nodes_off_the_played_line_most_visited_first():
    """TreeStrap rows of one search with the shipped model: each is the position of a node of a root move's
    subtree other than the played move's, visited at least tree_visits times, with that node's move values and
    its most visited move; the board is left as it was."""
    from messiah.evaluator import Evaluator
    from messiah.moves import legal_move_indices
    from messiah.search import Limits
    from messiah.search.playout import CoreLeaves
    from messiah.train.rl.config import RLConfig
    from messiah.train.rl.selfplay import TREE_ROWS_PER_MOVE, GameSpec, make_game_searcher, tree_rows

    cfg = RLConfig(tree_visits=6, teacher=[], strong=[], openings="")
    searcher = make_game_searcher(cfg, Evaluator(threads=1))
    board = cshogi.Board("lnsgkgsnl/1r5b1/ppppppppp/9/9/2P6/PP1PPPPPP/1B5R1/LNSGKGSNL w - 2")
    searcher.search(board, Limits(visits=400))
    root, key = searcher.root, CoreLeaves.key(board)  # the tree's key of a position
    played = max(root.children, key=lambda m: root.children[m].visits)  # the most searched line: the next root

    def subtree(node, out):
        out[node.key] = node
        for child in node.children.values():
            subtree(child, out)
        return out

    off_line = {}
    for move, child in root.children.items():
        if move != played:
            subtree(child, off_line)
    on_line = subtree(root.children[played], {})
    rows = tree_rows(searcher, board, played, GameSpec(3, 7, None, 0), cfg)
    assert CoreLeaves.key(board) == key
    eligible = sorted((n.visits for n in off_line.values() if n.visits >= 6 and n.terminal is None), reverse=True)
    assert len(rows) == min(TREE_ROWS_PER_MOVE, len(eligible)) > 0
    position = cshogi.Board()
    for row in rows:
        position.set_hcp(np.asarray(row["hcp"]))
        node = off_line.get(CoreLeaves.key(position))
        assert node is not None and CoreLeaves.key(position) not in on_line
        assert node.visits >= 6 and row["flags"] == TREE and row["game"] == 3 and row["generation"] == 7
        moves, _ = legal_move_indices(position)
        assert row["moves"] == len(moves) == len(node.moves)
        values = np.asarray(row["values"][: row["moves"]], np.float64)
        assert np.all((values >= 0) & (values <= 1))
        order = [int(np.flatnonzero(node.moves == m)[0]) for m in moves]  # the tree's moves in the record's order
        n, w = node.n[order], node.w[order]
        most = np.flatnonzero(n == n.max())  # the most visited move; a tie goes to the better mean
        assert row["best"] == row["played"] == int(most[np.argmax(w[most] / n[most])])
        assert cshogi.move16(int(moves[row["best"]])) == int(row["bestMove16"]) & 0xFFFF
        # moves searched beyond their prior visit, to unproven positions: the mean of the search's values
        real = (n > 1) & np.array([getattr(node.children.get(int(m)), "terminal", None) is None for m in moves])
        assert real.any() and np.allclose(values[real], (w / n)[real], atol=2e-3)
    visits = []
    for row in rows:
        position.set_hcp(np.asarray(row["hcp"]))
        visits.append(off_line[CoreLeaves.key(position)].visits)
    assert visits == eligible[: len(rows)]
    assert tree_rows(searcher, board, played, GameSpec(0, 1, None, 0), RLConfig(teacher=[], strong=[])) == []


def test_playout_cap_searches_a_share_of_moves_with_the_fast_budget_and_flags_them():
    """--fast-nodes: each move draws its budget, the row of a fast move is flagged FAST, and only the deep
    searches add TreeStrap rows (with every move fast there are none, where the same game has them otherwise)."""
    from messiah.errors import UserError
    from messiah.evaluator import Evaluator
    from messiah.records.selfplayfile import FAST
    from messiah.train.rl.config import RLConfig
    from messiah.train.rl.selfplay import GameSpec, make_game_searcher, play_selfplay_game

    def game(**fast):
        cfg = RLConfig(nodes=40, tree_visits=3, teacher=[], strong=[], openings="", max_ply=50, resign=0, **fast)
        searcher = make_game_searcher(cfg, Evaluator(threads=1))
        budgets, search = [], searcher.search

        def spy(board, limits):
            budgets.append(limits.visits)
            return search(board, limits)

        searcher.search = spy
        records, stats = play_selfplay_game(searcher, GameSpec(0, 1, None, 11), cfg)
        return records, stats, budgets

    records, stats, budgets = game(fast_nodes=6, fast_fraction=0.5)
    moved = records[(records["flags"] & (TREE | FINAL)) == 0]
    fast = (moved["flags"] & FAST) != 0
    assert len(budgets) in (len(moved), len(moved) + 1)  # + a search that proved the game lost: no row
    assert budgets[: len(moved)] == [6 if f else 40 for f in fast]
    assert 0 < stats.fast == fast.sum() < len(moved)
    assert not (records["flags"][(records["flags"] & TREE) != 0] & FAST).any()

    records, stats, budgets = game(fast_nodes=6, fast_fraction=1.0)
    assert set(budgets) == {6} and not (records["flags"] & TREE).any()
    assert ((records["flags"][(records["flags"] & FINAL) == 0] & FAST) != 0).all()
    records, stats, budgets = game()
    assert set(budgets) == {40} and (records["flags"] & TREE).any() and not (records["flags"] & FAST).any()
    with pytest.raises(UserError, match="--fast-nodes 40 must be fewer than --nodes 40"):
        RLConfig(nodes=40, fast_nodes=40, teacher=[], strong=[])


def test_root_noise_is_puct_only_and_a_noised_game_replays_from_its_seed():
    """--root-noise needs PUCT's prior (and a share within 0..1); a noised game is the same game again from its seed,
    and another game than without the noise."""
    from messiah.errors import UserError
    from messiah.evaluator import Evaluator
    from messiah.train.rl.config import RLConfig
    from messiah.train.rl.selfplay import GameSpec, make_game_searcher, play_selfplay_game

    with pytest.raises(UserError, match="--search ucb1 has none"):
        RLConfig(root_noise=0.25, search="ucb1", teacher=[], strong=[])
    with pytest.raises(UserError, match="--root-noise must be in"):
        RLConfig(root_noise=1.5, teacher=[], strong=[])
    evaluator = Evaluator(threads=1)

    def game(noise: float) -> bytes:
        cfg = RLConfig(nodes=64, teacher=[], strong=[], openings="", max_ply=50, resign=0, explore_plies=0, epsilon=0,
                       root_noise=noise, tree_visits=0)
        # (game seed 2: with m8, seed 7's 64-node game kept every move under a quarter of noise; seed 2's changes 21)
        rows, _ = play_selfplay_game(make_game_searcher(cfg, evaluator), GameSpec(0, 1, None, 2), cfg)
        return bytes(rows["bestMove16"].tobytes())

    noised = game(0.25)
    assert game(0.25) == noised
    assert game(0.0) != noised


def test_a_stop_ends_a_self_play_game_before_its_next_search_and_drops_it(monkeypatch):
    """A stopping run (Ctrl-C, SIGTERM) waits for one search, not for the games under way: a game raises
    GameStopped before its first search after the stop, and an actor drops its unfinished games instead of
    delivering them."""
    import threading

    from messiah.evaluator import Evaluator, default_model_path
    from messiah.train.rl import selfplay
    from messiah.train.rl.config import RLConfig
    from messiah.train.rl.selfplay import Actor, GameSpec, GameStopped, play_selfplay_game

    cfg = RLConfig(nodes=16, teacher=[], strong=[], openings="", max_ply=60, resign=0, games_per_actor=2)
    stop, searches, lock = threading.Event(), [], threading.Lock()
    make_searcher = selfplay.make_game_searcher

    def stopping_after_three_searches(cfg, evaluator):
        searcher = make_searcher(cfg, evaluator)
        search = searcher.search

        def counted(board, limits):
            with lock:
                searches.append(board.move_number)
                if len(searches) == 3:
                    stop.set()
            return search(board, limits)

        searcher.search = counted
        return searcher

    searcher = stopping_after_three_searches(cfg, Evaluator(threads=1))
    with pytest.raises(GameStopped, match="game 0 stopped after 3 moves"):
        play_selfplay_game(searcher, GameSpec(0, 1, None, 11), cfg, stop)
    assert len(searches) == 3

    monkeypatch.setattr(selfplay, "make_game_searcher", stopping_after_three_searches)
    stop.clear()
    searches.clear()
    delivered = []
    specs = [GameSpec(g, 1, None, g) for g in range(4)]
    played = Actor(str(default_model_path()), cfg).play(specs, lambda *game: delivered.append(game), stop)
    assert played == delivered == []  # both games under way dropped, the next two never started
    assert 3 <= len(searches) <= 4  # the other game's search already under way when the stop came


def test_a_run_with_tree_rows_files_them_apart_and_trains_on_their_share(tmp_path, monkeypatch):
    """--tree-visits: the game file keeps only the games' positions (its index unchanged), the tree file beside
    it holds the TREE rows with their own index, the log counts them, and a batch draws --tree-fraction of its
    rows from them, with move values and no return."""
    from messiah.train.rl.learner import Learner, Window, selfplay_files
    from messiah.train.rl.loop import run
    from messiah.train.trainer import initial_net

    monkeypatch.setenv("MESSIAH_RL_INPROCESS", "1")
    cfg = tiny(tmp_path, tree_visits=2, tree_fraction=0.25, nodes=24, gate=False)
    run(cfg)
    out = tmp_path / "rl"
    games, starts = read_selfplay_games(out / "selfplay" / "g0001.selfplay")
    tree, tree_starts = read_selfplay_games(tree_file(out / "selfplay" / "g0001.selfplay"))
    assert len(tree) > 0 and len(starts) == 2 and 1 <= len(tree_starts) <= 2
    assert ((np.asarray(games["flags"]) & TREE) == 0).all() and (np.asarray(tree["flags"]) == TREE).all()
    assert (np.asarray(tree["gameResult"]) == 0).all()
    assert set(np.asarray(tree["game"]).tolist()) <= set(np.asarray(games["game"]).tolist())
    row = json.loads((out / "gens" / "g0001.json").read_text())
    assert row["tree_positions"] == len(tree) == row["tree_window"]
    assert "tree_positions" in (out / "log.csv").read_text().splitlines()[0]

    learner = Learner(cfg, initial_net(cfg))
    window = Window(selfplay_files(cfg.layout, 1), cfg.window)
    window.compute_targets(learner.values, cfg)
    assert window.tree_size == len(tree) and np.isfinite(window.targets[window.trainable]).all()
    batch = learner.batch(window, 0)
    assert len(batch["features"]) == 16
    # 12 self-play rows, of which 4 (0.25 of the batch) are tree rows, then 4 teacher rows (0.25)
    _, _, has_target = value_target(batch, cfg.scale)
    assert has_target[:8].all()  # the games' positions: their lambda-return
    assert not has_target[8:12].any()  # tree rows: no return, only their move values and choice
    assert (~torch.isnan(batch["dense"][8:12])).any(1).all() and torch.isnan(batch["dense"][12:]).all()


def test_the_log_sums_gated_promotions_only(tmp_path):
    """total_elo adds the gate Elo of promoted candidates; a generation without a gate (--no-gate) measured
    no gain against the best, so its row has no sum (a flat 0 in the plot said nothing)."""
    import csv

    from messiah.train.rl.figures import write_log

    gens = tmp_path / "gens"
    gens.mkdir()
    rows = [{"generation": 1, "gate_games": 40, "elo": 30.0, "promoted": 1},
            {"generation": 2, "gate_games": 40, "elo": -10.0, "promoted": 0},
            {"generation": 3, "gate_games": 40, "elo": 12.5, "promoted": 1},
            {"generation": 4, "promoted": 1}]
    for row in rows:
        (gens / f"g{row['generation']:04d}.json").write_text(json.dumps(row))
    with open(write_log(tmp_path), newline="") as f:
        assert [r["total_elo"] for r in csv.DictReader(f)] == ["30.0", "30.0", "42.5", ""]
    # a promoted sweep's Elo is infinite, written as null: it adds nothing, and its cell is empty
    (gens / "g0005.json").write_text(json.dumps({"generation": 5, "gate_games": 40, "elo": None, "promoted": 1}))
    with open(write_log(tmp_path), newline="") as f:
        assert [(r["elo"], r["total_elo"]) for r in csv.DictReader(f)][-1] == ("", "42.5")
    # a figure with no column is refused, naming the generation's file, rather than dropped from the log
    (gens / "g0006.json").write_text(json.dumps({"generation": 6, "promoted": 1, "new_figure_s": 1.0}))
    with pytest.raises(ValueError, match="g0006.json: figures with no column in log.csv: new_figure_s"):
        write_log(tmp_path)


def test_an_older_run_s_figures_make_the_log_they_made(tmp_path):
    """The figures files and log.csv of a tiny run (--strong-fraction 0.1 --tree-visits 2 --target-every 2) saved by
    the loop of 1997a08, before the log's columns became Figures' fields: the figures read back make that log.csv to
    the byte (every column in its place, its JSON-only figures read and left out, its nulls empty cells)."""
    from messiah.train.rl.figures import write_log

    shutil.copytree(FIXTURES / "rl-run" / "gens", tmp_path / "gens")
    assert write_log(tmp_path).read_bytes() == (FIXTURES / "rl-run" / "log.csv").read_bytes()


def test_every_column_of_the_log_is_a_field_with_its_meaning():
    """Figures is the log's one home: its fields, in order, are log.csv's columns (those of the loop's earlier
    LOG_FIELDS, in their places), each with a docstring; a phase's figure with no field fails at once, before its
    generation's file is written (it failed at the next write_log, the file already on disk)."""
    from messiah.config import field_docs
    from messiah.train.rl.figures import LOG_FIELDS, Figures

    with open(FIXTURES / "rl-run" / "log.csv", newline="") as f:
        assert LOG_FIELDS == next(csv.reader(f))
    docs = field_docs(Figures)
    assert all(docs.get(name) for name in [*LOG_FIELDS, "endings", "sprt"])
    with pytest.raises(ValueError, match="new_figure_s"):
        Figures(1).update({"games": 2, "new_figure_s": 1.0})


def test_the_elo_panel_says_when_a_run_played_no_games(tmp_path):
    """A run with --no-gate and --verify-every 0 has no Elo to draw: log.png's panel says so instead of showing an
    empty frame; a run gated or verified in some generations only draws those generations' Elo (it drew none
    when a single generation lacked a gate's figure)."""
    import csv

    import matplotlib

    matplotlib.use("Agg")
    import matplotlib.pyplot as plt

    from messiah.train.plot import elo_panel
    from messiah.train.rl.figures import write_log

    def panel(rows: list[dict]) -> tuple[bool, list[str]]:
        gens = tmp_path / "gens"
        shutil.rmtree(gens, ignore_errors=True)
        gens.mkdir()
        for row in rows:
            (gens / f"g{row['generation']:04d}.json").write_text(json.dumps(row))
        path = write_log(tmp_path)
        with open(path, newline="") as f:
            fig, ax = plt.subplots()
            drawn = elo_panel(ax, list(csv.DictReader(f)))
        texts = [t.get_text() for t in ax.texts]
        plt.close(fig)
        return drawn, texts

    drawn, texts = panel([{"generation": g, "promoted": 1, "loss": 0.19} for g in (1, 2, 3)])
    assert not drawn and len(texts) == 1 and texts[0].startswith("no games in this run")
    drawn, texts = panel([{"generation": 1, "gate_games": 40, "elo": 30.0, "elo_low": -20.0, "elo_high": 80.0,
                           "promoted": 1}, {"generation": 2, "promoted": 1}])  # gated once: one point, drawn
    assert drawn and texts == []
    drawn, texts = panel([{"generation": 1, "promoted": 1}, {"generation": 2, "promoted": 1, "verify_games": 20,
                           "verify_elo": 12.0, "verify_elo_low": -60.0, "verify_elo_high": 84.0}])
    assert drawn and texts == []


def test_a_run_replays_to_the_bit_with_any_number_of_actors(tmp_path):
    """Games are written in game order and each is a function of its seed, each batch of (seed, step): the same
    command replays a run to the bit with more or fewer actors (on a machine with another number of cores),
    its records and the model its learner makes."""
    from messiah.train.rl.loop import run

    files = []
    for actors in (1, 3):
        cfg = tiny(tmp_path / str(actors), games=5, actors=actors, tree_visits=2, tree_fraction=0.25, nodes=24,
                   gate=False)
        run(cfg)
        out = tmp_path / str(actors) / "rl"
        path = out / "selfplay" / "g0001.selfplay"
        files.append([p.read_bytes() for p in (path, tree_file(path), game_index_path(path),
                                                game_index_path(tree_file(path)), out / "models" / "g0001.onnx")])
    records, starts = read_selfplay_games(path)
    assert np.asarray(records["game"])[starts].tolist() == [0, 1, 2, 3, 4]
    assert files[0] == files[1]


def test_actors_on_a_local_ray_instance(tmp_path):
    ray = pytest.importorskip("ray")
    from messiah.models.export import export_onnx
    from messiah.train.rl.loop import selfplay
    from messiah.train.trainer import initial_net

    cfg = tiny(tmp_path, ray="local", games=3, actors=2)
    (tmp_path / "rl").mkdir()
    model = export_onnx(initial_net(cfg), tmp_path / "rl" / "m.onnx")
    try:
        figures = selfplay(cfg, 1, model)
    finally:
        ray.shutdown()
    records, starts = read_selfplay_games(tmp_path / "rl" / "selfplay" / "g0001.selfplay")
    assert figures["games"] == 3 and len(starts) == 3
    assert sorted(set(np.asarray(records["game"]).tolist())) == [0, 1, 2]


def test_rollback_goes_back_only_when_the_candidate_is_clearly_below_the_best_verified():
    from messiah.train.rl.loop import rollback_target

    def figures(elo, low, high):
        return {"verify_elo": elo, "verify_elo_low": low, "verify_elo_high": high}

    start = [0, 0.0]  # the reference itself, verified at 0 by definition
    assert rollback_target(start, 4, figures(70.0, 4.0, 136.0)) == ([4, 70.0], None)
    assert rollback_target([4, 70.0], 8, figures(-7.0, -71.0, 57.0)) == ([4, 70.0], 4)  # rl-n64's g24 against g12
    assert rollback_target([4, 70.0], 8, figures(20.0, -40.0, 80.0)) == ([4, 70.0], None)  # worse, within noise
    assert rollback_target(start, 2, figures(-60.0, -126.0, 7.0)) == (start, None)  # not clearly below the start
    assert rollback_target(start, 2, figures(-90.0, -160.0, -20.0)) == (start, 0)  # back to the starting model
    # a sweep's Elo is infinite: its interval's finite end stands for it
    assert rollback_target(start, 3, figures(math.inf, 287.0, math.inf)) == ([3, 287.0], None)
    assert rollback_target([3, 287.0], 6, figures(150.0, 90.0, 210.0)) == ([3, 287.0], 3)


def test_a_sweep_read_back_after_a_crash_decides_as_it_did_when_played(tmp_path, monkeypatch):
    """A verification won in every game has an infinite Elo; its result.json says null (strict JSON). A run
    killed after the match reads it back instead of playing again, and rolls back or not exactly as before."""
    from pathlib import Path

    from messiah.arena import match, stats
    from messiah.train.rl import loop

    sweep = {"games": 40, "wins": 40, "losses": 0, "draws": 0, "score": 1.0, "elo": math.inf, "elo_low": 287.0,
             "elo_high": math.inf}
    played = []
    monkeypatch.setattr(match, "play_match", lambda cfg, progress: played.append(cfg) or (("a", "b"), []))
    monkeypatch.setattr(stats, "summarize", lambda games, sprt: dict(sweep))
    cfg = tiny(tmp_path)
    fresh = loop.verify(cfg, 3, Path("c.onnx"))
    saved = json.loads((Path(cfg.out) / "verify" / "g0003" / "result.json").read_text(),
                       parse_constant=lambda name: pytest.fail(f"{name} in result.json"))
    assert saved["elo"] is None and saved["elo_high"] is None and saved["elo_low"] == 287.0
    again = loop.verify(cfg, 3, Path("c.onnx"))
    assert len(played) == 1 and math.isnan(again["verify_elo"]) and again["verify_elo_low"] == 287.0
    for figures in (fresh, again):
        assert loop.rollback_target([0, 0.0], 3, figures) == ([3, 287.0], None)
        assert loop.rollback_target([3, 300.0], 6, figures) == ([3, 300.0], None)


def test_a_run_rolls_back_to_its_best_verified_generation_and_the_learner_restarts_from_it(
        tmp_path, monkeypatch):
    """--rollback: generation 1 verifies at +50, generation 2 clearly below it. The run's best goes back to
    g0001 (the actors' next games are g0001's), the learner goes on from g0001's weights, g0002 stays on disk
    as it was exported, and a rerun goes on from there."""
    from messiah.evaluator import Evaluator
    from messiah.models.from_onnx import net_from_onnx
    from messiah.train.rl import loop

    scripted = {1: (50.0, 10.0, 90.0), 2: (-100.0, -150.0, -40.0), 3: (60.0, 20.0, 100.0)}

    def verify(cfg, generation, candidate):
        elo, low, high = scripted[generation]
        return {"verify_games": 2, "verify_wins": 1, "verify_losses": 1, "verify_draws": 0, "verify_elo": elo,
                "verify_elo_low": low, "verify_elo_high": high, "verify_s": 0.0}

    monkeypatch.setattr(loop, "verify", verify)
    monkeypatch.setenv("MESSIAH_RL_INPROCESS", "1")
    with pytest.raises(ValueError, match="--verify-every"):
        tiny(tmp_path, gate=False, rollback=True)
    cfg = tiny(tmp_path, gate=False, verify_every=1, rollback=True, generations=2)
    loop.run(cfg)
    out = tmp_path / "rl"
    g1, g2 = (json.loads((out / "gens" / f"g000{g}.json").read_text()) for g in (1, 2))
    assert "rolled_back_to" not in g1 and g1["best_generation"] == 1 and g1["verified_generation"] == 1
    assert g2["rolled_back_to"] == 1 and g2["best_generation"] == 1 and g2["verified_generation"] == 1
    models = out / "models"
    assert (models / "best.onnx").read_bytes() == (models / "g0001.onnx").read_bytes()
    assert (models / "g0002.onnx").read_bytes() != (models / "g0001.onnx").read_bytes()
    state = torch.load(out / "learner.pt", weights_only=True)
    for name, weight in net_from_onnx(models / "g0001.onnx").state_dict().items():
        torch.testing.assert_close(state["net"][name], weight)
        torch.testing.assert_close(state["target"][name], weight)
    assert state["step"] == 2 * cfg.steps  # the step count goes on
    header, *rows = (out / "log.csv").read_text().splitlines()
    assert "rolled_back_to" in header.split(",") and len(rows) == 2

    loop.run(tiny(tmp_path, gate=False, verify_every=1, rollback=True, generations=3))
    # generation 3's games were played by g0001, and g0003 (no gate: promoted) is the next best
    assert Evaluator(models / "best-int8.onnx").metadata["messiah.generation"] == "1"
    assert (models / "best.onnx").read_bytes() == (models / "g0003.onnx").read_bytes()
    g3 = json.loads((out / "gens" / "g0003.json").read_text())
    assert g3["verified_generation"] == 3 and "rolled_back_to" not in g3
    games, _ = read_selfplay_games(out / "selfplay" / "g0003.selfplay")
    assert len(games) > 0


def test_self_play_searches_without_the_root_s_guard_unless_asked():
    """The actors' searcher has the root's guard off (--guard-nodes 0: every run was made so, and the engine's
    20,000 nodes cost more than a self-play search) and on at the nodes asked; the engine's own default stays on."""
    from messiah.engine.engine import Engine
    from messiah.evaluator import Evaluator
    from messiah.train.rl.config import RLConfig
    from messiah.train.rl.selfplay import make_game_searcher

    evaluator = Evaluator(threads=1)
    off = make_game_searcher(RLConfig(teacher=[], strong=[], openings=""), evaluator)
    on = make_game_searcher(RLConfig(teacher=[], strong=[], openings="", guard_nodes=500), evaluator)
    assert off.guard_nodes == 0 and on.guard_nodes == 500
    assert Engine.from_options({}, evaluator).searcher.guard_nodes == 20_000
