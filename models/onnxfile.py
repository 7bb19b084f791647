"""Writing a messiah ONNX file: the model with its metadata, atomically (a kill leaves the old file or none)."""

from __future__ import annotations

import os
from pathlib import Path

from messiah.files import atomic_path


def save_model(model, path: str | os.PathLike, metadata: dict[str, str]) -> Path:
    """Save the onnx ``ModelProto`` to ``path`` with exactly ``metadata`` as its metadata_props; returns the path."""
    import onnx

    path = Path(path)
    del model.metadata_props[:]
    for key, value in metadata.items():
        entry = model.metadata_props.add()
        entry.key, entry.value = key, value
    with atomic_path(path) as tmp:
        onnx.save(model, str(tmp))
    return path
