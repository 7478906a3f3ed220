"""What a config file and a job spec share: the error a bad one raises and the canonical JSON that every
hash of the study reads (the config's, a job's spec). The bottom of the study layer: the job kinds
(``study.experiments``) and the config package both import it.
"""

from __future__ import annotations

import json
from typing import Any

__all__ = ["ConfigError", "canonical_json"]


class ConfigError(ValueError):
    """A configuration that fails validation; the message says where and why."""


def canonical_json(obj: Any) -> str:
    """Canonical JSON (sorted keys, no whitespace): the input of every hash in the study."""
    return json.dumps(obj, sort_keys=True, separators=(",", ":"), ensure_ascii=True, allow_nan=False)
