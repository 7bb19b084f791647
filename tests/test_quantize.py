"""messiah quantize: the int8 copy of an all-moves model plays the float model's moves and values."""

from __future__ import annotations

import subprocess
import sys

import cshogi
import numpy as np
import pytest

from messiah.evaluator import Evaluator, default_model_path
from messiah.features import hcp_arrays
from messiah.moves import legal_move_indices
from messiah.paths import SHARED_DATA

pytest.importorskip("onnx")

FLOODGATE_TRAIN = SHARED_DATA / "floodgate" / "train.hcpe"
FLOODGATE_TEST = SHARED_DATA / "floodgate" / "test.hcpe"


@pytest.fixture(scope="module")
def int8_model(tmp_path_factory):
    from messiah.models.quantize import quantize_onnx

    if not FLOODGATE_TRAIN.exists():
        pytest.skip(f"no shared data at {SHARED_DATA}")
    return quantize_onnx(default_model_path(), tmp_path_factory.mktemp("q") / "int8.onnx", [FLOODGATE_TRAIN], 256)


def test_the_int8_model_scores_moves_as_the_float_model(int8_model):
    """On 1,000 held-out floodgate positions: the same best move almost everywhere, and win rates within a
    few thousandths (quantizing the head's 1x1 convolution too cost a point of agreement: it stays float)."""
    fp32, int8 = Evaluator(default_model_path(), threads=1), Evaluator(int8_model, threads=1)
    assert int8.name == f"{fp32.name}-int8" and int8.metadata["messiah.precision"] == "int8"
    records = np.fromfile(FLOODGATE_TEST, cshogi.HuffmanCodedPosAndEval)[::6][:1000]
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
    assert np.mean(drift) < 0.01 and np.quantile(drift, 0.99) < 0.05, (np.mean(drift), np.quantile(drift, 0.99))


def test_quantize_refuses_what_it_cannot_make(int8_model, tmp_path):
    from messiah.models.quantize import quantize_onnx

    with pytest.raises(ValueError, match="already quantized"):
        quantize_onnx(int8_model, tmp_path / "twice.onnx", [FLOODGATE_TRAIN], 32)
    with pytest.raises(ValueError, match="at least one hcpe file"):
        quantize_onnx(default_model_path(), tmp_path / "none.onnx", [], 32)
    empty = tmp_path / "empty.hcpe"
    empty.write_bytes(b"")
    with pytest.raises(ValueError, match="no hcpe records"):
        quantize_onnx(default_model_path(), tmp_path / "empty.onnx", [empty], 32)
    cut = tmp_path / "cut.hcpe"
    cut.write_bytes(FLOODGATE_TRAIN.read_bytes()[:38 * 10 + 5])  # a truncated file: ten records and a piece
    with pytest.raises(ValueError, match="not a whole number of 38-byte records"):
        quantize_onnx(default_model_path(), tmp_path / "cut.onnx", [cut], 32)
    assert not list(tmp_path.glob("*.onnx*"))  # nothing half-written is left behind


def test_the_command_prints_only_the_written_path(tmp_path):
    if not FLOODGATE_TRAIN.exists():
        pytest.skip(f"no shared data at {SHARED_DATA}")
    out = tmp_path / "q.onnx"
    done = subprocess.run([sys.executable, "-m", "messiah.cli", "quantize", str(default_model_path()), str(out),
                           "--data", str(FLOODGATE_TRAIN), "--positions", "64"], capture_output=True, text=True)
    assert done.returncode == 0, done.stderr
    assert done.stdout == f"{out}\n" and Evaluator(out).name.endswith("-int8")
    done = subprocess.run([sys.executable, "-m", "messiah.cli", "quantize", str(out), str(tmp_path / "again.onnx"),
                           "--data", str(FLOODGATE_TRAIN)], capture_output=True, text=True)
    assert done.returncode == 2 and "already quantized" in done.stderr and done.stdout == ""
