"""The ONNX Runtime evaluator: a board in, a win rate for every legal move out, in one forward pass.

Runs on cshogi, numpy and onnxruntime only. GPU execution providers (TensorRT, then CUDA) are used when
the runtime offers them and the machine has the driver for them; on a machine without an NVIDIA driver the
CPU provider is used without a word. When a GPU was there or asked for but onnxruntime could not load its
libraries (CUDA, cuBLAS, cuDNN), :attr:`Evaluator.device_note` says in one line what is missing and that
the CPU is used; the engine reports it at ``isready``, with the provider in use.
"""

from __future__ import annotations

import contextlib
import ctypes.util
import hashlib
import io
import json
import os
import re
import tempfile
import time
from collections.abc import Callable, Sequence
from dataclasses import dataclass
from importlib import resources
from pathlib import Path

import cshogi
import numpy as np
import onnxruntime as ort

from messiah.errors import MessiahError, UserError
from messiah.features import FEATURE_VERSION, SHAPE, PositionArrays, board_arrays, board_planes, planes
from messiah.moves import batch_move_indices, legal_move_indices, pad_indices

_QUIET = 3  # onnxruntime log severity: errors only


class ModelError(MessiahError, RuntimeError):
    """A model file that is missing, unreadable, or not a messiah model this version can run."""


def default_model_path(int8: bool = False) -> Path:
    """The model the engine ships with (package data): the float model, or with ``int8`` its int8 copy for the
    CPU (``messiah quantize``; twice the positions a second there, the same moves)."""
    return Path(str(resources.files("messiah") / "data" / ("default-int8.onnx" if int8 else "default.onnx")))


def model_path(path: str | os.PathLike | None, providers: list) -> Path:
    """The file an evaluator opens: ``path``, or for None the shipped model in the precision of where it will
    run (int8 when onnxruntime runs it on the CPU, float on a GPU, which runs int8 graphs slowly)."""
    if path is not None:
        return Path(path)
    return default_model_path(int8=providers[0] == "CPUExecutionProvider")


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


def softmax_weights(q: np.ndarray, temperature: float, top: np.ndarray | float | None = None) -> np.ndarray:
    """exp((q - top) / temperature): the softmax of move scores before it is normalised, ``top`` the largest
    score (or, for several positions' moves laid end to end, each move's own position's largest). Self-play's
    exploration and a Strength level's choice draw from it; PUCT's prior is the same exp, its argument made for a
    whole batch of positions in compiled code (``search.tree._centred``)."""
    return np.exp((q - (q.max() if top is None else top)) / temperature)


def _has_library(*names: str) -> bool:
    return any(ctypes.util.find_library(n) for n in names)


DEVICES = ("auto", "cuda", "tensorrt", "cpu")  # what ``device`` may say; the engine's Device option offers them


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
    if device not in DEVICES:
        raise UserError(f"unknown device {device!r}: use {', '.join(DEVICES)}")
    return [*wanted, "CPUExecutionProvider"]


# onnxruntime's words for a provider library it could not open (printed by its C++ code on stderr)
MISSING_LIBRARY = re.compile(r"(lib[\w.+-]+?\.so[.\d]*): cannot open shared object file")
GPU_INSTALL_HINT = ("pip install 'onnxruntime-gpu[cuda,cudnn]' brings them (README, \"Running on a GPU\")")


def provider_name(provider: str) -> str:
    """``CUDAExecutionProvider`` -> ``CUDA``: the name a user sees in reports."""
    return provider.removesuffix("ExecutionProvider").replace("Tensorrt", "TensorRT")


def _session_capturing_output(path: Path, options: ort.SessionOptions, providers: list) -> tuple[object, str]:
    """An InferenceSession with a GPU provider, and what onnxruntime printed meanwhile. Its C++ loader says on
    file descriptor 2 which library of a GPU provider is missing, and its Python layer prints on stdout
    that it falls back; both are kept for the note instead of reaching a GUI, for this call only."""
    with tempfile.TemporaryFile() as captured, contextlib.redirect_stdout(io.StringIO()) as printed:
        saved = os.dup(2)
        os.dup2(captured.fileno(), 2)
        try:
            if hasattr(ort, "preload_dlls"):  # CUDA and cuDNN from NVIDIA's pip packages, where installed
                ort.preload_dlls(directory="")
            session = ort.InferenceSession(str(path), options, providers=providers)
        finally:
            os.dup2(saved, 2)
            os.close(saved)
        captured.seek(0)
        return session, captured.read().decode("utf-8", "replace") + printed.getvalue()


def gpu_note(device: str, wanted: list, used: list[str], log: str = "") -> str | None:
    """One line saying why a GPU that was asked for or present is not used (None when it is, or when this
    machine has no NVIDIA driver and none was asked for: the quiet CPU case)."""
    gpu_wanted = [provider_name(p if isinstance(p, str) else p[0]) for p in wanted[:-1]]
    if device in ("cuda", "tensorrt") and not gpu_wanted:
        if not any(p in ort.get_available_providers() for p in ("CUDAExecutionProvider", "TensorrtExecutionProvider")):
            return (f"device {device}: this onnxruntime build has no GPU provider (install onnxruntime-gpu); "
                    "using the CPU")
        return f"device {device}: no NVIDIA driver found (libcuda); using the CPU"
    if not gpu_wanted or any(provider_name(p) in gpu_wanted for p in used):
        return None
    missing = sorted(set(MISSING_LIBRARY.findall(log)))
    what = f"missing {', '.join(missing)}" if missing else "its libraries did not load"
    return (f"{' and '.join(gpu_wanted)} not used: {what} (onnxruntime-gpu {ort.__version__} needs CUDA and "
            f"cuDNN; {GPU_INSTALL_HINT}); using the CPU")


def open_session(path: str | os.PathLike | None, kind: str, threads: int = 0,
                 device: str = "auto") -> tuple[ort.InferenceSession, dict, str | None, Path]:
    """Open a messiah ONNX model of ``kind`` ("all_moves" or "scalar"); returns the session, its metadata,
    :func:`gpu_note`'s line (None when all is as expected) and the file opened (:func:`model_path`). Raises
    ModelError with the reason when the file cannot be used."""
    providers = choose_providers(device)
    path = model_path(path, providers)
    if not path.is_file():
        raise ModelError(f"model file not found: {path}")
    options = ort.SessionOptions()
    options.log_severity_level = _QUIET
    options.intra_op_num_threads = threads
    options.inter_op_num_threads = 1
    log = ""
    try:
        if len(providers) > 1:  # a GPU provider will be tried: keep its loader's complaints for the note
            session, log = _session_capturing_output(path, options, providers)
        else:
            session = ort.InferenceSession(str(path), options, providers=providers)
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
    return session, meta, gpu_note(device, providers, session.get_providers(), log), path


# A forward pass: features (B, *SHAPE) float32 and move indices (B, M) int64 -> Q (B, M)
Forward = Callable[[np.ndarray, np.ndarray], np.ndarray]


@dataclass(frozen=True, eq=False)
class Model:
    """An opened all-moves model and what it says of itself. ``name`` is the model's version (its ``messiah.name``
    metadata, else the file's name) and ``sha256`` the file's hash, so that every figure can say which model made
    it; ``providers`` are where its passes run; ``device_note`` says why a GPU that was asked for or present is
    not used (None otherwise)."""

    session: ort.InferenceSession
    path: Path
    metadata: dict
    device_note: str | None
    config: dict
    name: str
    sha256: str
    providers: list[str]

    @classmethod
    def open(cls, path: str | os.PathLike | None = None, threads: int = 0, device: str = "auto") -> Model:
        """:func:`open_session` of an all-moves model; ModelError saying why it cannot be used."""
        session, meta, note, path = open_session(path, "all_moves", threads, device)
        # the model's version (CHANGELOG.md names each shipped one); a model without one goes by its file
        return cls(session, path, meta, note, json.loads(meta.get("messiah.config", "{}")),
                   meta.get("messiah.name") or path.stem, hashlib.sha256(path.read_bytes()).hexdigest(),
                   session.get_providers())


class Evaluator:
    """Scores all legal moves of boards with an all-moves model.

    ``threads`` is onnxruntime's intra-op thread count (0: its default, all cores). ``model`` is an opened
    :class:`Model` to share instead (``path``, ``threads`` and ``device`` are then unused); ``forward`` the
    forward pass to run instead of the model's session: self-play's games in threads send theirs to one shared
    batch, a benchmark's stand-in looks stored scores up. ``calls`` counts forward passes, ``positions`` the
    positions they covered, ``seconds`` the time spent in them: each evaluator its own. ``name``, ``sha256``,
    ``config``, ``metadata``, ``path``, ``providers`` and ``device_note`` are the model's; ``provider`` names where
    the passes run (CUDA, TensorRT or CPU).
    """

    def __init__(self, path: str | os.PathLike | None = None, threads: int = 0, device: str = "auto", *,
                 model: Model | None = None, forward: Forward | None = None):
        self.model = model if model is not None else Model.open(path, threads, device)
        self.forward = forward if forward is not None else self._session_pass
        self.calls = 0
        self.positions = 0
        self.seconds = 0.0
        self._one = np.zeros((1, *SHAPE), np.float32)
        self.gpu_batch = 0  # on a GPU, the one batch size every pass runs at (:meth:`set_batch`); 0: as given

    session = property(lambda self: self.model.session)
    path = property(lambda self: self.model.path)
    metadata = property(lambda self: self.model.metadata)
    device_note = property(lambda self: self.model.device_note)
    config = property(lambda self: self.model.config)
    name = property(lambda self: self.model.name)
    sha256 = property(lambda self: self.model.sha256)
    providers = property(lambda self: self.model.providers)

    def set_batch(self, batch: int) -> None:
        """On a GPU, run every pass at ``batch`` positions: smaller inputs are padded, larger ones split. cuDNN
        plans a convolution again whenever its input's shape differs from the last pass's, which on an H100
        cost 14 to 90 ms a change against 0.3 ms for a whole pass at batch 8 (docs/benchmarks.md, "On a GPU"),
        so a search whose leaf batches vary in size ran at a hundredth of its speed. No effect on the CPU."""
        self.gpu_batch = batch if self.provider != "CPU" else 0

    @property
    def provider(self) -> str:
        return provider_name(self.providers[0])

    def describe(self) -> str:
        """The model and where it runs, in one line: ``m3 (sha256 6a809102) on CPU``."""
        return f"{self.name} (sha256 {self.sha256[:8]}) on {self.provider}"

    def run(self, features: np.ndarray, indices: np.ndarray) -> np.ndarray:
        """Raw call: features (B, *SHAPE) float32 and move indices (B, M) int64 -> Q (B, M), by the forward pass,
        counted."""
        start = time.perf_counter()
        q = self.forward(features, indices)
        self.seconds += time.perf_counter() - start
        self.calls += 1
        self.positions += len(features)
        return q

    def _session_pass(self, features: np.ndarray, indices: np.ndarray) -> np.ndarray:
        """The model's own forward pass: its session, at ``gpu_batch`` rows a pass where that is set."""
        if self.gpu_batch and len(features) != self.gpu_batch:
            return self._run_fixed(features, indices)
        return self.session.run(None, {"features": features, "moves": indices})[0]

    def _run_fixed(self, features: np.ndarray, indices: np.ndarray) -> np.ndarray:
        """:meth:`run`'s passes at ``gpu_batch`` rows each, the last one padded with empty positions."""
        b, n = self.gpu_batch, len(features)
        feats = np.zeros((-(-n // b) * b, *SHAPE), np.float32)
        feats[:n] = features
        moves = np.zeros((len(feats), indices.shape[1]), indices.dtype)
        moves[:n] = indices
        return np.concatenate([self.session.run(None, {"features": feats[i : i + b], "moves": moves[i : i + b]})[0]
                               for i in range(0, len(feats), b)])[:n]

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

    def score_flat(self, arrays: PositionArrays, moves: np.ndarray,
                   offsets: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
        """Score positions given as arrays with their legal moves end to end (``moves``, position k's at
        [offsets[k], offsets[k + 1])); one forward pass. Returns the moves' indices and their Q, end to end: the
        searches' batch path, with no per-position arrays to make."""
        indices, padded, mask = batch_move_indices(moves, offsets, arrays.turns)
        return indices, self.run(planes(arrays), padded)[mask]


class ScalarEvaluator:
    """The scalar twin: one win rate per position. Only the benchmark uses it."""

    def __init__(self, path: str | os.PathLike, threads: int = 0, device: str = "auto"):
        self.session, meta, *_ = open_session(path, "scalar", threads, device)
        self.precision = meta.get("messiah.precision", "float")  # "int8" for a quantized twin

    def values(self, features: np.ndarray) -> np.ndarray:
        return self.session.run(None, {"features": features})[0]
