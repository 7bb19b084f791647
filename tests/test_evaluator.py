"""The ONNX evaluator against the PyTorch network it was exported from, and its error handling."""


import cshogi
import numpy as np
import onnx
import pytest
from conftest import TEACHER

torch = pytest.importorskip("torch")

from messiah.evaluator import Evaluator, ModelError, ScalarEvaluator, choose_providers  # noqa: E402
from messiah.features import board_planes  # noqa: E402
from messiah.models.export import export_onnx  # noqa: E402
from messiah.models.net import AllMovesNet, NetConfig, ScalarNet  # noqa: E402
from messiah.moves import legal_move_indices, pad_indices  # noqa: E402

TINY = NetConfig(channels=8, blocks=1, head_channels=4, embed_dim=16)


def positions(n: int = 24) -> list[cshogi.Board]:
    records = np.fromfile(TEACHER, cshogi.HuffmanCodedPosAndEval)
    boards = []
    for rec in records[:: len(records) // n][:n]:
        board = cshogi.Board()
        board.set_hcp(rec["hcp"])
        boards.append(board)
    return boards


@pytest.fixture(scope="module")
def trained_like(tmp_path_factory):
    """A tiny all-moves net with non-trivial weights (random embedding and bias) and its ONNX export."""
    torch.manual_seed(3)
    net = AllMovesNet(TINY)
    with torch.no_grad():
        net.bias.normal_()
    net.eval()
    path = export_onnx(net, tmp_path_factory.mktemp("m") / "net.onnx")
    return net, path


def torch_q(net: AllMovesNet, board: cshogi.Board) -> tuple[np.ndarray, np.ndarray]:
    moves, idx = legal_move_indices(board)
    with torch.no_grad():
        h = net(torch.from_numpy(board_planes(board))[None])
        q = torch.sigmoid(net.move_logits(h, torch.from_numpy(idx)[None]))[0].numpy()
    return moves, q


def test_onnx_matches_torch_on_real_positions(trained_like):
    net, path = trained_like
    evaluator = Evaluator(path, threads=1, device="cpu")
    for board in positions():
        scores = evaluator.score(board)
        moves, q = torch_q(net, board)
        np.testing.assert_array_equal(scores.moves, moves)
        np.testing.assert_allclose(scores.q, q, rtol=1e-4, atol=1e-5)
        if len(q) > 1:
            assert scores.q.std() > 0  # moves really get different scores


def test_batch_equals_single(trained_like):
    _, path = trained_like
    evaluator = Evaluator(path, threads=1, device="cpu")
    boards = positions()
    batch = evaluator.score_batch(boards)
    assert evaluator.calls == 1 and evaluator.positions == len(boards)
    for board, scores in zip(boards, batch, strict=True):
        single = evaluator.score(board)
        np.testing.assert_array_equal(single.moves, scores.moves)
        np.testing.assert_allclose(single.q, scores.q, rtol=1e-5, atol=1e-6)


def test_mated_position_has_no_moves_and_costs_no_call(trained_like):
    _, path = trained_like
    evaluator = Evaluator(path, device="cpu")
    board = cshogi.Board("4k4/4G4/4G4/9/9/9/9/9/4K4 w - 1")  # white king mated by two golds
    assert board.is_game_over()
    scores = evaluator.score(board)
    assert len(scores.moves) == 0 and evaluator.calls == 0
    assert scores.value() == 0.0
    with pytest.raises(ValueError):
        scores.best()


def test_scalar_twin_matches_torch(tmp_path):
    torch.manual_seed(5)
    net = ScalarNet(TINY).eval()
    path = export_onnx(net, tmp_path / "twin.onnx")
    feats = np.stack([board_planes(b) for b in positions(8)])
    with torch.no_grad():
        expected = torch.sigmoid(net(torch.from_numpy(feats))).numpy()
    np.testing.assert_allclose(ScalarEvaluator(path, device="cpu").values(feats), expected, rtol=1e-4, atol=1e-6)


def test_shipped_default_model_loads_and_scores():
    evaluator = Evaluator(device="cpu")
    scores = evaluator.score(cshogi.Board())
    assert len(scores.moves) == 30
    assert np.all((scores.q > 0) & (scores.q < 1))


def test_missing_model_is_a_clear_error(tmp_path):
    with pytest.raises(ModelError, match="not found"):
        Evaluator(tmp_path / "nope.onnx")


def test_garbage_file_is_a_clear_error(tmp_path):
    bad = tmp_path / "bad.onnx"
    bad.write_bytes(b"this is not an onnx model")
    with pytest.raises(ModelError, match="not a readable ONNX model"):
        Evaluator(bad)


def test_wrong_kind_is_refused(tmp_path):
    path = export_onnx(ScalarNet(TINY), tmp_path / "twin.onnx")
    with pytest.raises(ModelError, match="not a messiah all_moves model"):
        Evaluator(path)


def test_feature_version_mismatch_is_refused(trained_like, tmp_path):
    _, path = trained_like
    model = onnx.load(str(path))
    for prop in model.metadata_props:
        if prop.key == "messiah.feature_version":
            prop.value = "999"
    changed = tmp_path / "old.onnx"
    onnx.save(model, str(changed))
    with pytest.raises(ModelError, match="feature version 999"):
        Evaluator(changed)


def test_providers():
    assert choose_providers("cpu") == ["CPUExecutionProvider"]
    assert choose_providers("auto")[-1] == "CPUExecutionProvider"
    with pytest.raises(ValueError, match="unknown device"):
        choose_providers("tpu")


NO_GPU = not __import__("ctypes.util").util.find_library("cuda")
needs_no_gpu = pytest.mark.skipif(not NO_GPU, reason="an NVIDIA driver is here: the CPU fallback is not forced")


@needs_no_gpu
def test_a_machine_without_a_gpu_uses_the_cpu_without_a_word(capfd):
    evaluator = Evaluator(threads=1)
    assert evaluator.provider == "CPU" and evaluator.device_note is None
    assert capfd.readouterr() == ("", "")


@needs_no_gpu
def test_asking_for_cuda_without_a_driver_says_so_in_one_line():
    evaluator = Evaluator(threads=1, device="cuda")
    assert evaluator.provider == "CPU"
    note = evaluator.device_note
    assert note is not None and "\n" not in note and "using the CPU" in note
    assert "no NVIDIA driver" in note or "no GPU provider" in note


@needs_no_gpu
def test_a_gpu_provider_that_cannot_load_names_what_is_missing(monkeypatch, capfd):
    """Force the GPU providers to be tried (as on a machine with a driver but without CUDA's libraries): the
    model still runs, on the CPU, and one line says which libraries onnxruntime could not open; nothing of
    onnxruntime's own complaint reaches stdout or stderr."""
    import onnxruntime as ort

    import messiah.evaluator as E

    if "CUDAExecutionProvider" not in ort.get_available_providers():
        pytest.skip("the CPU build of onnxruntime has no GPU provider to fail")
    monkeypatch.setattr(E, "_has_library", lambda *names: True)
    evaluator = Evaluator(threads=1)
    assert evaluator.provider == "CPU"
    assert evaluator.score(cshogi.Board()).best()[0] in set(cshogi.Board().legal_moves)
    note = evaluator.device_note
    assert note is not None and "\n" not in note and note.endswith("using the CPU")
    assert "CUDA not used" in note and "missing lib" in note and ".so" in note
    assert capfd.readouterr() == ("", "")


def test_passes_at_a_fixed_batch_size_score_as_the_inputs_alone():
    """On a GPU every pass runs at the search's BatchSize (Evaluator.set_batch): fewer rows are padded with empty
    positions, more are split. The scores of the real rows must not change. The padding is tried on the CPU by
    setting the batch size directly (set_batch itself leaves a CPU evaluator alone)."""
    evaluator = Evaluator(threads=1, device="cpu")
    evaluator.set_batch(8)
    assert evaluator.gpu_batch == 0
    boards = [cshogi.Board()]
    for move in ("7g7f", "3c3d", "8h2b+", "3a2b", "B*4e"):
        boards.append(cshogi.Board(boards[-1].sfen()))
        boards[-1].push_usi(move)
    feats = np.stack([board_planes(b) for b in boards])
    indices = pad_indices([legal_move_indices(b)[1] for b in boards])[0]
    width = indices.shape[1]
    alone = evaluator.run(feats, indices)
    for batch in (4, 6, 16):
        evaluator.gpu_batch = batch
        assert np.allclose(evaluator.run(feats, indices), alone, atol=1e-6), batch
        assert evaluator.run(feats[:1], indices[:1]).shape == (1, width)
