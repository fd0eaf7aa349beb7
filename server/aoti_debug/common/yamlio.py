"""YAML for the project's data files and front matter, through libyaml's C loader when it is built in."""

from __future__ import annotations

from typing import Any

import yaml

# The pure-Python loader takes most of the server's start-up on the 19 guides; the C one is ~10x faster.
_LOADER = getattr(yaml, "CSafeLoader", yaml.SafeLoader)
YAMLError = yaml.YAMLError


def load_yaml(text: str) -> Any:
    """Safe-load one YAML document (no custom tags, like yaml.safe_load)."""
    return yaml.load(text, Loader=_LOADER)  # noqa: S506 - a safe loader either way
