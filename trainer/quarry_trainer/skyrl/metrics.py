"""SkyRL's metrics as lines Quarry's job panel reads: every `Tracking.log(data, step)` call of skyrl-train
(skyrl_train/utils/tracking.py; its console backend pretty-prints a dict through loguru, its tensorboard backend
writes event files) is also appended to QUARRY_METRICS_PATH as `{"step": N, "data": {...}}` — the line format of
verl's file logger, which src/core/training/metricsReader.ts already reads. Appending (not truncating) keeps the
history across a resumed run; the reader keeps the latest line of a step.

`quarry_trainer.skyrl.main` installs it in the Ray task that runs the experiment, when the launch sets the variable.
"""

from __future__ import annotations

import json
import math
import os
from pathlib import Path
from typing import Any

PATH_VAR = "QUARRY_METRICS_PATH"


def _plain(value: Any) -> Any:
    if isinstance(value, dict):
        return {str(k): _plain(v) for k, v in value.items()}
    if isinstance(value, (list, tuple)):
        return [_plain(v) for v in value]
    if isinstance(value, bool) or value is None or isinstance(value, str):
        return value
    try:
        number = float(value)  # numpy and torch scalars
    except (TypeError, ValueError):
        return str(value)
    return number if math.isfinite(number) else None


def metrics_line(data: dict[str, Any], step: int) -> str:
    return json.dumps({"step": int(step), "data": _plain(data)}) + "\n"


def wrap_tracking(tracking_class: Any, path: str | Path) -> None:
    """Makes `tracking_class.log` also append each call's data to `path` (once per class). The class is the engine's
    (skyrl-train's Tracking, or any with a `log(data, step)`): its methods are replaced here, so it is typed Any."""
    if getattr(tracking_class, "_quarry_metrics", None):
        return
    original = tracking_class.log
    target = Path(path)
    target.parent.mkdir(parents=True, exist_ok=True)

    def log(self: Any, data: dict[str, Any], step: int, *args: Any, **kwargs: Any) -> Any:
        result = original(self, data, step, *args, **kwargs)
        with target.open("a", encoding="utf-8") as f:
            f.write(metrics_line(data, step))
        return result

    tracking_class.log = log
    tracking_class._quarry_metrics = str(target)


def install_from_env() -> str | None:
    """In skyrl-train's process: wraps its Tracking when QUARRY_METRICS_PATH is set; returns the path or None."""
    path = os.environ.get(PATH_VAR)
    if not path:
        return None
    from skyrl_train.utils.tracking import Tracking

    wrap_tracking(Tracking, path)
    return path
