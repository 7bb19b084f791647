"""A reinforcement run's folder (``--out``): where each of its files lives, in one place.

    config.json, state.json, environment.jsonl      the run's configuration, where it stands, what it ran on
    learner.pt                                      the learner's checkpoint (with the target network)
    selfplay/gNNNN.selfplay (.tree, .stats.jsonl)   generation N's games, their TreeStrap rows, their figures
    models/gNNNN.onnx, models/best.onnx             generation N's candidate (g0000: the start), the best model
    gates/gNNNN/, verify/gNNNN/                     generation N's gate and verification matches
    gens/gNNNN.json, log.csv, log.png               generation N's figures, and the log made from them
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass
from pathlib import Path


def _run_file(name: str) -> property:
    """A file of the whole run, ``name`` under the folder."""
    return property(lambda self: self.root / name)


def _generation_file(folder: str, suffix: str) -> Callable[[RunLayout, int], Path]:
    """A generation's file (or folder): ``folder/gNNNN`` and ``suffix``."""
    return lambda self, generation: self.root / folder / f"{RunLayout.name(generation)}{suffix}"


@dataclass(frozen=True)
class RunLayout:
    """The paths of a run in the folder ``root``; generation N's files are named ``gNNNN``."""

    root: Path

    config = _run_file("config.json")
    state = _run_file("state.json")
    environment = _run_file("environment.jsonl")
    learner = _run_file("learner.pt")
    log = _run_file("log.csv")
    best = _run_file("models/best.onnx")
    model = _generation_file("models", ".onnx")
    selfplay = _generation_file("selfplay", ".selfplay")
    stats = _generation_file("selfplay", ".stats.jsonl")
    gate = _generation_file("gates", "")
    verify = _generation_file("verify", "")
    figures = _generation_file("gens", ".json")

    @staticmethod
    def name(generation: int) -> str:
        return f"g{generation:04d}"

    def all_figures(self) -> list[Path]:
        """Every generation's figures written so far, in order."""
        return sorted((self.root / "gens").glob("g*.json"))
