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



def _one_convolution(weights: np.ndarray, bias: np.ndarray):
    """An ONNX model of one 3x3 convolution (padded to keep the board's size) of the input ``features``."""
    from onnx import TensorProto, helper, numpy_helper

    node = helper.make_node("Conv", ["features", "w", "b"], ["out"], pads=[1, 1, 1, 1], kernel_shape=[3, 3])
    graph = helper.make_graph([node], "one", [helper.make_tensor_value_info("features", TensorProto.FLOAT,
                                                                           [None, weights.shape[1], 9, 9])],
                              [helper.make_tensor_value_info("out", TensorProto.FLOAT, None)],
                              [numpy_helper.from_array(weights, "w"), numpy_helper.from_array(bias, "b")])
    return helper.make_model(graph, opset_imports=[helper.make_opsetid("", 17)], ir_version=8)


def test_the_input_convolution_keeps_its_mean_output_once_its_weights_are_rounded(tmp_path):
    """Bias correction: with the weights rounded as onnxruntime's int8 copy stores them and the corrected bias,
    each output channel's mean over the calibration positions is the float convolution's (onnxruntime runs both),
    where the rounding alone moved it; and the rounding is onnxruntime's (its quantized model's weights)."""
    import onnx
    import onnxruntime as ort
    from onnx import numpy_helper
    from onnxruntime.quantization import CalibrationDataReader, QuantFormat, QuantType, quantize_static

    from messiah.models.quantize import correct_input_bias, int8_rounded

    rng = np.random.default_rng(5)
    weights = rng.normal(0, 0.3, (8, 4, 3, 3)).astype(np.float32)
    weights[:, 0, 1, 1] = 3.0  # one large weight a channel: the others round coarsely
    bias = rng.normal(0, 0.1, 8).astype(np.float32)
    x = ((rng.random((64, 4, 9, 9)) < 0.3) - 0.2 * (rng.random((64, 4, 9, 9)) < 0.5)).astype(np.float32)
    batches = [{"features": x[:32]}, {"features": x[32:]}]

    def mean_output(model) -> np.ndarray:
        session = ort.InferenceSession(model.SerializeToString(), providers=["CPUExecutionProvider"])
        return session.run(None, {"features": x})[0].mean(axis=(0, 2, 3))

    model = _one_convolution(weights, bias)
    correct_input_bias(model, batches)
    corrected = numpy_helper.to_array(next(t for t in model.graph.initializer if t.name == "b"))
    rounded = int8_rounded(weights.astype(np.float64)).astype(np.float32)
    float_mean = mean_output(_one_convolution(weights, bias))
    assert np.abs(mean_output(_one_convolution(rounded, bias)) - float_mean).max() > 0.01  # what it corrects
    assert np.allclose(mean_output(_one_convolution(rounded, corrected)), float_mean, atol=1e-5)

    class Reader(CalibrationDataReader):
        def __init__(self) -> None:
            self.left = iter(batches)

        def get_next(self) -> dict[str, np.ndarray] | None:
            return next(self.left, None)

    onnx.save(_one_convolution(weights, bias), str(tmp_path / "float.onnx"))
    quantize_static(str(tmp_path / "float.onnx"), str(tmp_path / "int8.onnx"), Reader(), quant_format=QuantFormat.QDQ,
                    per_channel=True, activation_type=QuantType.QUInt8, weight_type=QuantType.QInt8)
    stored = {t.name: numpy_helper.to_array(t) for t in onnx.load(str(tmp_path / "int8.onnx")).graph.initializer}
    quantized = next(v for v in stored.values() if v.dtype == np.int8 and v.shape == weights.shape)
    scale = next(v for k, v in stored.items() if k.startswith("w") and "scale" in k)
    assert np.allclose(quantized * scale.reshape(-1, 1, 1, 1), rounded, atol=1e-6)
