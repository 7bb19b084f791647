"""A reinforcement run's folder (``--out``): where each of its files lives, in one place.

    config.json, state.json, environment.jsonl      the run's configuration, where it stands, what it ran on
    learner.pt                                      the learner's checkpoint (with the target network)
    selfplay/gNNNN.selfplay (.tree, .stats.jsonl)   generation N's games, their TreeStrap rows, their figures
    models/gNNNN.onnx, models/best.onnx             generation N's candidate (g0000: the start), the best model
    gates/gNNNN/, verify/gNNNN/                     generation N's gate and verification matches
    gens/gNNNN.json, log.csv, log.png               generation N's figures, and the log made from them
"""

from __future__ import annotations

from dataclasses import dataclass
from pathlib import Path


@dataclass(frozen=True)
class RunLayout:
    """The paths of a run in the folder ``root``; generation N's files are named ``gNNNN``."""

    root: Path

    @staticmethod
    def name(generation: int) -> str:
        return f"g{generation:04d}"

    @property
    def config(self) -> Path:
        return self.root / "config.json"

    @property
    def state(self) -> Path:
        return self.root / "state.json"

    @property
    def environment(self) -> Path:
        return self.root / "environment.jsonl"

    @property
    def learner(self) -> Path:
        return self.root / "learner.pt"

    @property
    def log(self) -> Path:
        return self.root / "log.csv"

    @property
    def best(self) -> Path:
        return self.root / "models" / "best.onnx"

    def model(self, generation: int) -> Path:
        return self.root / "models" / f"{self.name(generation)}.onnx"

    def selfplay(self, generation: int) -> Path:
        return self.root / "selfplay" / f"{self.name(generation)}.selfplay"

    def stats(self, generation: int) -> Path:
        return self.root / "selfplay" / f"{self.name(generation)}.stats.jsonl"

    def gate(self, generation: int) -> Path:
        return self.root / "gates" / self.name(generation)

    def verify(self, generation: int) -> Path:
        return self.root / "verify" / self.name(generation)

    def figures(self, generation: int) -> Path:
        return self.root / "gens" / f"{self.name(generation)}.json"

    def all_figures(self) -> list[Path]:
        """Every generation's figures written so far, in order."""
        return sorted((self.root / "gens").glob("g*.json"))
