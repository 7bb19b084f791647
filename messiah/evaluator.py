"""The ONNX Runtime evaluator: a board in, a win rate for every legal move out, in one forward pass.

Runs on cshogi, numpy and onnxruntime only. GPU execution providers (TensorRT, then CUDA) are used when
the runtime offers them and the machine has the driver for them; otherwise the CPU provider is used
without a word on stderr.
"""

from __future__ import annotations

import ctypes.util
import json
import os
import time
from collections.abc import Sequence
from dataclasses import dataclass
from importlib import resources
from pathlib import Path

import cshogi
import numpy as np
import onnxruntime as ort

from messiah.errors import MessiahError
from messiah.features import FEATURE_VERSION, SHAPE, PositionArrays, board_arrays, board_planes, planes
from messiah.moves import legal_move_indices, pad_indices

_QUIET = 3  # onnxruntime log severity: errors only


class ModelError(MessiahError, RuntimeError):
    """A model file that is missing, unreadable, or not a messiah model this version can run."""


def default_model_path() -> Path:
    """The model the engine ships with (package data)."""
    return Path(str(resources.files("messiah") / "data" / "default.onnx"))


@dataclass(frozen=True)
class MoveScores:
    """The legal moves of a position with their win rates for the side to move, best not first.

    moves: uint32 cshogi moves; indices: int64 move indices; q: float32 win rates in [0, 1].
    """

    moves: np.ndarray
    indices: np.ndarray
    q: np.ndarray

    def best(self) -> tuple[int, float]:
        """The move with the highest Q and that Q. Raises ValueError when there is no legal move."""
        if len(self.moves) == 0:
            raise ValueError("no legal move")
        i = int(np.argmax(self.q))
        return int(self.moves[i]), float(self.q[i])

    def value(self) -> float:
        """The position's value for the side to move: max Q (0 when it has no legal move: mated)."""
        return float(self.q.max()) if len(self.q) else 0.0


def _has_library(*names: str) -> bool:
    return any(ctypes.util.find_library(n) for n in names)


def choose_providers(device: str = "auto") -> list:
    """Execution providers for ``device``: "auto" (GPU if usable, else CPU), "cuda", "tensorrt", "cpu"."""
    available = ort.get_available_providers()
    gpu_driver = _has_library("cuda", "nvcuda")
    wanted: list = []
    if device in ("auto", "tensorrt") and "TensorrtExecutionProvider" in available and gpu_driver and (
        device == "tensorrt" or _has_library("nvinfer")
    ):
        cache = Path(os.environ.get("MESSIAH_TRT_CACHE", Path.home() / ".cache" / "messiah" / "trt"))
        wanted.append(("TensorrtExecutionProvider", {"trt_engine_cache_enable": True,
                                                     "trt_engine_cache_path": str(cache)}))
    if device in ("auto", "cuda", "tensorrt") and "CUDAExecutionProvider" in available and gpu_driver:
        wanted.append("CUDAExecutionProvider")
    if device not in ("auto", "cuda", "tensorrt", "cpu"):
        raise ValueError(f"unknown device {device!r}: use auto, cuda, tensorrt or cpu")
    return [*wanted, "CPUExecutionProvider"]


def open_session(path: str | os.PathLike | None, kind: str, threads: int = 0,
                 device: str = "auto") -> tuple[ort.InferenceSession, dict]:
    """Open a messiah ONNX model of ``kind`` ("all_moves" or "scalar"); returns the session and its
    metadata. Raises ModelError with the reason when the file cannot be used."""
    path = Path(path) if path is not None else default_model_path()
    if not path.is_file():
        raise ModelError(f"model file not found: {path}")
    options = ort.SessionOptions()
    options.log_severity_level = _QUIET
    options.intra_op_num_threads = threads
    options.inter_op_num_threads = 1
    try:
        session = ort.InferenceSession(str(path), options, providers=choose_providers(device))
    except Exception as e:  # onnxruntime raises several private exception types
        raise ModelError(f"{path} is not a readable ONNX model: {e}") from None
    meta = session.get_modelmeta().custom_metadata_map
    found = meta.get("messiah.kind")
    if found != kind:
        raise ModelError(f"{path} is not a messiah {kind} model (kind: {found})")
    version = meta.get("messiah.feature_version")
    if version != str(FEATURE_VERSION):
        raise ModelError(f"{path} was trained on feature version {version}; this messiah computes "
                         f"version {FEATURE_VERSION}: retrain or use a matching messiah")
    shape = session.get_inputs()[0].shape
    if list(shape[1:]) != list(SHAPE):
        raise ModelError(f"{path} expects features of shape {shape[1:]}, messiah makes {list(SHAPE)}")
    return session, meta


class Evaluator:
    """Scores all legal moves of boards with an all-moves model.

    ``threads`` is onnxruntime's intra-op thread count (0: its default, all cores). ``calls`` counts
    forward passes, ``positions`` the positions they covered, ``seconds`` the time spent in them.
    """

    def __init__(self, path: str | os.PathLike | None = None, threads: int = 0, device: str = "auto"):
        self.session, meta = open_session(path, "all_moves", threads, device)
        self.path = Path(path) if path is not None else default_model_path()
        self.config = json.loads(meta.get("messiah.config", "{}"))
        self.metadata = meta
        self.providers = self.session.get_providers()
        self.calls = 0
        self.positions = 0
        self.seconds = 0.0
        self._one = np.zeros((1, *SHAPE), np.float32)

    def run(self, features: np.ndarray, indices: np.ndarray) -> np.ndarray:
        """Raw call: features (B, *SHAPE) float32 and move indices (B, M) int64 -> Q (B, M)."""
        start = time.perf_counter()
        q = self.session.run(None, {"features": features, "moves": indices})[0]
        self.seconds += time.perf_counter() - start
        self.calls += 1
        self.positions += len(features)
        return q

    def score(self, board: cshogi.Board) -> MoveScores:
        """All legal moves of ``board`` with their Q. A position with no legal move gets empty arrays
        and no network call."""
        moves, indices = legal_move_indices(board)
        if len(moves) == 0:
            return MoveScores(moves, indices, np.zeros(0, np.float32))
        board_planes(board, self._one[0])
        return MoveScores(moves, indices, self.run(self._one, indices[None])[0])

    def score_batch(self, boards: Sequence[cshogi.Board]) -> list[MoveScores]:
        """:meth:`score` for many boards in one forward pass."""
        return self.score_arrays(board_arrays(boards), [legal_move_indices(b) for b in boards])

    def score_arrays(self, arrays: PositionArrays,
                     legal: Sequence[tuple[np.ndarray, np.ndarray]]) -> list[MoveScores]:
        """Score positions given as arrays with their (moves, indices) lists; one forward pass."""
        padded, _ = pad_indices([idx for _, idx in legal])
        if padded.shape[1] == 0:
            return [MoveScores(m, i, np.zeros(0, np.float32)) for m, i in legal]
        q = self.run(planes(arrays), padded)
        return [MoveScores(m, i, q[row, : len(i)]) for row, (m, i) in enumerate(legal)]


class ScalarEvaluator:
    """The scalar twin: one win rate per position. Only the benchmark uses it."""

    def __init__(self, path: str | os.PathLike, threads: int = 0, device: str = "auto"):
        self.session, _ = open_session(path, "scalar", threads, device)

    def values(self, features: np.ndarray) -> np.ndarray:
        return self.session.run(None, {"features": features})[0]
