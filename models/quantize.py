"""An int8 copy of an all-moves ONNX model, for the CPU.

onnxruntime's static quantization (QDQ, weights int8 per output channel, activations uint8 with ranges
calibrated on real positions) turns the 3x3 convolutions, nearly all of the network's arithmetic, into
VNNI/AVX2 integer kernels: on this project's CPU a position costs 81 us instead of 179 at batch 8 on one thread.
The head's 1x1 convolution, whose output the fully-connected layer reads, stays in float: quantized, it
cost a point of floodgate agreement (36.1% against 37.1%); kept in float, the int8 model agrees with the
float one to within a tenth of a point (37.2%). The move embedding and the final dot product are gathers
and a small product, left in float.

The convolution that reads the feature planes gets its bias corrected before it is quantized (bias correction,
Nagel et al. 2019): rounding its weights to int8 moves each output channel's mean, and the feature planes, signed and
far from zero on average, turn that into a shift every position shares. m9's int8 copy, quantized without it, rated
every move 1.7 points of win rate below the float model (a mean logit shift of 0.15; the rounding of that one
convolution's weights alone made 2.0); with the correction its copies differ by 0.7 points on average, as m8's did.
Each output channel's bias loses the mean its weights' rounding adds on the calibration positions.

The copy keeps the source's metadata (so the evaluator accepts it) with ``messiah.precision`` set to int8
and ``-int8`` added to its name. On a GPU the float model is the one to use: onnxruntime's CUDA provider
runs a QDQ graph's quantized nodes slowly or not at all.
"""

from __future__ import annotations

import contextlib
import logging
import os
import sys
from collections.abc import Callable, Iterator, Sequence
from dataclasses import dataclass
from pathlib import Path

import cshogi
import numpy as np

from messiah.config import setting
from messiah.errors import DataError, UserError
from messiah.features import hcp_arrays, planes
from messiah.models.onnxfile import save_model
from messiah.moves import legal_move_indices, pad_indices
from messiah.paths import SHARED_DATA

CALIBRATION_POSITIONS = 1024  # positions whose activations set the int8 ranges
CALIBRATION_BATCH = 32


def default_calibration_files() -> list[str]:
    """Positions of real games and of the teacher's, where the shared data is: the floodgate training games
    and the teacher files."""
    files = [SHARED_DATA / "floodgate" / "train.hcpe", *sorted((SHARED_DATA / "teacher").glob("teacher_s*.hcpe"))]
    return [str(p) for p in files if p.exists()]


@dataclass
class QuantizeConfig:
    """``messiah quantize``: an int8 copy of an all-moves model, about twice as fast on a CPU."""

    model: str = setting(positional=True)
    """the all-moves ONNX model (float)"""
    out: str = setting(positional=True)
    """the int8 ONNX file to write"""
    data: list[str] = setting(factory=default_calibration_files, paths=True,
                              shown="$MESSIAH_DATA/floodgate/train.hcpe $MESSIAH_DATA/teacher/teacher_s*.hcpe")
    """hcpe files of positions to calibrate the activations' ranges on (drawn evenly from each file)"""
    positions: int = CALIBRATION_POSITIONS
    """calibration positions"""


def calibration_feeds(paths: Sequence[str | os.PathLike], count: int = CALIBRATION_POSITIONS,
                      seed: int = 0) -> list[dict[str, np.ndarray]]:
    """``count`` positions drawn evenly from hcpe files, as the model's input batches."""
    if not paths:
        raise UserError("calibration needs at least one hcpe file of positions")
    rng = np.random.default_rng(seed)
    per_file = -(-count // len(paths))
    hcps = []
    for path in paths:
        size, width = os.path.getsize(path), cshogi.HuffmanCodedPosAndEval.itemsize
        if size == 0 or size % width:
            raise DataError(f"{path}: no hcpe records" if size == 0 else
                             f"{path}: not hcpe ({size:,} bytes is not a whole number of {width}-byte records)")
        records = np.memmap(path, cshogi.HuffmanCodedPosAndEval, mode="r")  # only the drawn rows are read
        rows = np.sort(rng.choice(len(records), min(per_file, len(records)), replace=False))
        hcps.append(records["hcp"][rows])
    hcp = np.concatenate(hcps)[:count]
    board = cshogi.Board()
    legal = []
    for h in hcp:
        board.set_hcp(h)
        legal.append(legal_move_indices(board)[1])
    x = planes(hcp_arrays(hcp))
    return [{"features": x[rows], "moves": pad_indices([legal[i] for i in rows])[0]}
            for rows in equal_batches(len(hcp))]


def equal_batches(count: int, size: int = CALIBRATION_BATCH) -> list[np.ndarray]:
    """Row indices of ``count`` positions in batches of one size, the last filled up from the first rows:
    onnxruntime's percentile calibration stacks every batch's activations and fails on a shorter last batch."""
    size = min(size, count)
    rows = np.arange(-(-count // size) * size) % count
    return [rows[i : i + size] for i in range(0, len(rows), size)]


def quantize_onnx(src: str | os.PathLike, dst: str | os.PathLike, calibration: Sequence[str | os.PathLike],
                  count: int = CALIBRATION_POSITIONS) -> Path:
    """Write the int8 copy of the all-moves model ``src`` to ``dst``, its activation ranges calibrated on
    ``count`` positions of the hcpe files ``calibration``; returns ``dst``."""
    return quantize_feeds(src, dst, "all_moves", lambda: calibration_feeds(calibration, count))


def quantize_feeds(src: str | os.PathLike, dst: str | os.PathLike, kind: str,
                   feeds: Callable[[], list[dict[str, np.ndarray]]]) -> Path:
    """Write the int8 copy of the messiah model ``src`` of ``kind`` ("all_moves", or "scalar" for the bench's
    twin, quantized the same way so that the two compare like with like) to ``dst``, its activation ranges
    calibrated on the input batches ``feeds()`` makes (called once the model is known to be of its kind)."""
    import onnx
    from google.protobuf.message import DecodeError
    from onnxruntime.quantization import (
        CalibrationDataReader,
        CalibrationMethod,
        QuantFormat,
        QuantType,
        quantize_static,
    )

    src, dst = Path(src), Path(dst)
    try:
        model = onnx.load(str(src))
    except DecodeError as e:
        raise UserError(f"{src} is not an ONNX model ({e})") from None
    meta = {p.key: p.value for p in model.metadata_props}
    if meta.get("messiah.kind") != kind:
        raise UserError(f"{src} is not a messiah {kind.replace('_', '-')} model (kind: {meta.get('messiah.kind')})")
    if meta.get("messiah.precision") == "int8":
        raise UserError(f"{src} is already quantized")
    convs = [n.name for n in model.graph.node if n.op_type == "Conv"]
    dst.parent.mkdir(parents=True, exist_ok=True)  # before the calibration, so that a bad folder fails at once
    batches = feeds()
    correct_input_bias(model, batches)

    class Reader(CalibrationDataReader):
        def __init__(self) -> None:
            self.feeds: Iterator[dict[str, np.ndarray]] = iter(batches)

        def get_next(self) -> dict[str, np.ndarray] | None:
            return next(self.feeds, None)

    root = logging.getLogger()
    level = root.level
    root.setLevel(logging.ERROR)  # quantize_static logs advice about pre-processing at WARNING
    raw = dst.with_suffix(dst.suffix + ".raw")  # quantize_static's output, before the metadata is set
    corrected = dst.with_suffix(dst.suffix + ".float")  # what quantize_static reads: the input bias corrected
    try:
        onnx.save(model, str(corrected))
        with contextlib.redirect_stdout(sys.stderr):  # it prints its histogram's settings
            quantize_static(str(corrected), str(raw), Reader(), quant_format=QuantFormat.QDQ, per_channel=True,
                            activation_type=QuantType.QUInt8, weight_type=QuantType.QInt8,
                            op_types_to_quantize=["Conv"], nodes_to_exclude=convs[-1:],
                            calibrate_method=CalibrationMethod.Percentile)
        quantized = onnx.load(str(raw))
    finally:
        root.setLevel(level)
        raw.unlink(missing_ok=True)
        corrected.unlink(missing_ok=True)
    meta.update({"messiah.precision": "int8", "messiah.name": f"{meta.get('messiah.name') or src.stem}-int8"})
    return save_model(quantized, dst, meta)


def int8_rounded(weights: np.ndarray) -> np.ndarray:
    """Convolution weights as onnxruntime's int8 per-channel quantization stores them: symmetric, each output
    channel scaled so that its largest magnitude is 127."""
    scale = np.abs(weights).reshape(len(weights), -1).max(axis=1) / 127
    scale = np.where(scale > 0, scale, 1).reshape(-1, *([1] * (weights.ndim - 1)))
    return np.round(weights / scale) * scale


def correct_input_bias(model, batches: Sequence[dict[str, np.ndarray]]) -> None:
    """Bias correction of the convolutions that read a model input (the feature planes), in place: each output
    channel's bias loses the mean that rounding the weights to int8 adds to it over the calibration ``batches``
    (a convolution is linear, so that mean is the convolution of the mean input by the rounding error). Only
    a plain 2-d convolution with a bias (stride, dilation and group 1) is corrected; another is left as it is."""
    import onnx
    from onnx import numpy_helper

    initializers = {t.name: t for t in model.graph.initializer}
    for node in model.graph.node:
        attributes = {a.name: onnx.helper.get_attribute_value(a) for a in node.attribute}
        plain = (attributes.get("strides", [1, 1]) == [1, 1] and attributes.get("dilations", [1, 1]) == [1, 1]
                 and attributes.get("group", 1) == 1 and attributes.get("auto_pad", b"NOTSET") in (b"", b"NOTSET"))
        if (node.op_type != "Conv" or not plain or node.input[0] not in batches[0] or len(node.input) < 3
                or not {node.input[1], node.input[2]} <= initializers.keys()):
            continue
        weights = numpy_helper.to_array(initializers[node.input[1]]).astype(np.float64)
        if weights.ndim != 4:
            continue
        mean_input = np.concatenate([b[node.input[0]] for b in batches]).mean(axis=0, dtype=np.float64)
        pads = attributes.get("pads", [0, 0, 0, 0])
        shift = _mean_output(mean_input, int8_rounded(weights) - weights, pads)
        bias = numpy_helper.to_array(initializers[node.input[2]])
        initializers[node.input[2]].CopyFrom(numpy_helper.from_array((bias - shift).astype(bias.dtype),
                                                                     node.input[2]))


def _mean_output(x: np.ndarray, weights: np.ndarray, pads: Sequence[int]) -> np.ndarray:
    """The mean over its squares of each output channel of a 2-d convolution of ``x`` (channels, rows, columns) by
    ``weights`` (out, in, rows, columns), zero-padded by ``pads`` (top, left, bottom, right), without a bias."""
    top, left, bottom, right = pads
    padded = np.pad(x, ((0, 0), (top, bottom), (left, right)))
    kh, kw = weights.shape[2:]
    rows, columns = padded.shape[1] - kh + 1, padded.shape[2] - kw + 1
    out = sum(np.einsum("oc,chw->ohw", weights[:, :, i, j], padded[:, i:i + rows, j:j + columns])
              for i in range(kh) for j in range(kw))
    return out.mean(axis=(1, 2))
