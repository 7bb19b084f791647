"""messiah quantize: the int8 copy of an all-moves model plays the float model's moves and values."""

from __future__ import annotations

import subprocess
import sys

import cshogi
import numpy as np
import pytest
from conftest import GAMES, TEACHER, read_hcpe, shared

from messiah.errors import DataError, UserError
from messiah.evaluator import Evaluator, default_model_path
from messiah.features import hcp_arrays
from messiah.moves import legal_move_indices

pytest.importorskip("onnx")


@pytest.fixture(scope="module")
def int8_model(tmp_path_factory):
    """The int8 copy calibrated on 256 positions of the teacher fixture (compared on other positions, GAMES'),
    written into a folder that does not exist yet (made as `messiah export` makes its own)."""
    from messiah.models.quantize import quantize_onnx

    dst = tmp_path_factory.mktemp("q") / "new" / "folder" / "int8.onnx"
    assert quantize_onnx(default_model_path(), dst, [TEACHER], 256) == dst and dst.is_file()
    return dst


def test_the_int8_model_scores_moves_as_the_float_model(int8_model):
    """On the 797 positions of the fixture's games (whole games from the start position, none used to
    calibrate): the same best move almost everywhere, and win rates within about a hundredth (quantizing the
    head's 1x1 convolution too cost a point of agreement: it stays float)."""
    assert_scores_like_the_float_model(int8_model, read_hcpe(GAMES))


def test_the_int8_model_scores_floodgate_moves_as_the_float_model(tmp_path):
    """The same on 1,000 held-out positions of strong programs' games, the copy calibrated on floodgate's
    training games: needs the shared data's floodgate files."""
    from messiah.models.quantize import quantize_onnx

    train, test = shared("floodgate/train.hcpe"), shared("floodgate/test.hcpe")
    model = quantize_onnx(default_model_path(), tmp_path / "int8.onnx", [train], 256)
    assert_scores_like_the_float_model(model, read_hcpe(test)[::6][:1000])


def assert_scores_like_the_float_model(int8_model, records: np.ndarray) -> None:
    fp32, int8 = Evaluator(default_model_path(), threads=1), Evaluator(int8_model, threads=1)
    assert int8.name == f"{fp32.name}-int8" and int8.metadata["messiah.precision"] == "int8"
    board = cshogi.Board()
    legal = []
    for hcp in records["hcp"]:
        board.set_hcp(hcp)
        legal.append(legal_move_indices(board))
    arrays = hcp_arrays(records["hcp"])
    a, b = fp32.score_arrays(arrays, legal), int8.score_arrays(arrays, legal)
    same_best = np.mean([x.best()[0] == y.best()[0] for x, y in zip(a, b, strict=True)])
    drift = np.concatenate([np.abs(x.q - y.q) for x, y in zip(a, b, strict=True)])
    assert same_best > 0.9, same_best
    # The drift depends on the CPU's int8 kernels: m4's copy drifts 0.0105 on average over the floodgate positions
    # on an AVX2 CPU without VNNI (whose u8s8 products can saturate), less with VNNI; m3's drifted 0.0076.
    assert np.mean(drift) < 0.015 and np.quantile(drift, 0.99) < 0.05, (np.mean(drift), np.quantile(drift, 0.99))


def test_quantize_refuses_what_it_cannot_make(int8_model, tmp_path):
    from messiah.models.quantize import quantize_onnx

    with pytest.raises(UserError, match="already quantized"):
        quantize_onnx(int8_model, tmp_path / "twice.onnx", [TEACHER], 32)
    with pytest.raises(UserError, match="at least one hcpe file"):
        quantize_onnx(default_model_path(), tmp_path / "none.onnx", [], 32)
    text = tmp_path / "notes.onnx"
    text.write_text("not a model")
    with pytest.raises(UserError, match="notes.onnx is not an ONNX model"):
        quantize_onnx(text, tmp_path / "from-text.onnx", [TEACHER], 32)
    empty = tmp_path / "empty.hcpe"
    empty.write_bytes(b"")
    with pytest.raises(DataError, match="no hcpe records"):
        quantize_onnx(default_model_path(), tmp_path / "empty.onnx", [empty], 32)
    cut = tmp_path / "cut.hcpe"
    cut.write_bytes(TEACHER.read_bytes()[:38 * 10 + 5])  # a truncated file: ten records and a piece
    with pytest.raises(DataError, match="not a whole number of 38-byte records"):
        quantize_onnx(default_model_path(), tmp_path / "cut.onnx", [cut], 32)
    assert sorted(p.name for p in tmp_path.glob("*.onnx*")) == ["notes.onnx"]  # nothing half-written is left behind


def test_the_command_prints_only_the_written_path(tmp_path):
    out = tmp_path / "q.onnx"
    done = subprocess.run([sys.executable, "-m", "messiah.cli", "quantize", str(default_model_path()), str(out),
                           "--data", str(TEACHER), "--positions", "64"], capture_output=True, text=True)
    assert done.returncode == 0, done.stderr
    assert done.stdout == f"{out}\n" and Evaluator(out).name.endswith("-int8")
    done = subprocess.run([sys.executable, "-m", "messiah.cli", "quantize", str(out), str(tmp_path / "again.onnx"),
                           "--data", str(TEACHER)], capture_output=True, text=True)
    assert done.returncode == 2 and "already quantized" in done.stderr and done.stdout == ""
    done = subprocess.run([sys.executable, "-m", "messiah.cli", "quantize", str(default_model_path()),
                           str(out / "under-a-file.onnx"), "--data", str(TEACHER)], capture_output=True, text=True)
    assert done.returncode == 2 and done.stdout == "" and "Traceback" not in done.stderr, done.stderr
    assert done.stderr.startswith("messiah quantize: ") and str(out) in done.stderr, done.stderr


def test_a_calibration_count_that_is_not_a_whole_number_of_batches(tmp_path):
    """40 positions are a batch of 32 and 8 left over; onnxruntime's percentile calibration stacks the batches'
    activations, and a shorter last batch made it fail: the last batch is filled up from the first positions."""
    from messiah.models.quantize import CALIBRATION_BATCH, calibration_feeds, equal_batches, quantize_onnx

    assert [len(b) for b in equal_batches(40)] == [CALIBRATION_BATCH, CALIBRATION_BATCH]
    assert sorted(set(np.concatenate(equal_batches(40)).tolist())) == list(range(40))
    assert [len(b) for b in equal_batches(5)] == [5]
    assert {len(f["features"]) for f in calibration_feeds([TEACHER], 40)} == {CALIBRATION_BATCH}
    model = quantize_onnx(default_model_path(), tmp_path / "int8.onnx", [TEACHER], 40)
    assert Evaluator(model, threads=1).metadata["messiah.precision"] == "int8"
