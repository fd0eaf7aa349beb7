"""YAML for the project's data files and front matter (libyaml's C loader when built in), validated into models."""

from __future__ import annotations

from pathlib import Path
from typing import Any, TypeVar

import yaml
from pydantic import BaseModel, ValidationError

from aoti_debug.common.errors import DataError

M = TypeVar("M", bound=BaseModel)

# The pure-Python loader takes most of the server's start-up on the 19 guides; the C one is ~10x faster.
_LOADER = getattr(yaml, "CSafeLoader", yaml.SafeLoader)
YAMLError = yaml.YAMLError


def load_yaml(text: str) -> Any:
    """Safe-load one YAML document (no custom tags, like yaml.safe_load)."""
    return yaml.load(text, Loader=_LOADER)  # noqa: S506 - a safe loader either way


def validated(model: type[M], data: Any, where: object) -> M:
    """data as model; a DataError naming where (a file, a guide) when it does not fit: our data is broken."""
    try:
        return model.model_validate(data)
    except ValidationError as exc:
        raise DataError(f"{where}: {exc}") from exc


def load_model(path: Path, model: type[M]) -> M:
    """A YAML data file read and validated into model; a DataError naming the file when it cannot be."""
    try:
        data = load_yaml(path.read_text(encoding="utf-8"))
    except (OSError, YAMLError) as exc:
        raise DataError(f"{path}: {exc}") from exc
    return validated(model, data, path)
