"""Callbacks every Quarry training run uses with a transformers/TRL Trainer.

- `MetricsJsonl` appends one JSON object per logged step to OUT/metrics.jsonl: `step`, `epoch`, `seconds` since the
  run began, and every value the trainer logged at that step under a stable name (`loss`, `lr`, `reward`,
  `reward_std`, per-term rewards, `entropy`, `kl`, `clip_ratio`, …; TRL's names are kept but `learning_rate` → `lr`;
  the run's closing summary has `train_loss`). The editor's Jobs view and `quarry checkpoints list` read it.
- `StopOnSignal` turns SIGTERM (a job runner, Slurm's preemption, the editor's Stop) into "save a checkpoint, then
  stop" at the end of the current step, so a killed run resumes from where it was told to stop.
"""

from __future__ import annotations

import json
import signal
import time
from pathlib import Path
from typing import Any

from transformers import TrainerCallback

RENAMES = {"learning_rate": "lr"}


class MetricsJsonl(TrainerCallback):
    def __init__(self, out_dir: str | Path):
        self.path = Path(out_dir) / "metrics.jsonl"
        self.path.parent.mkdir(parents=True, exist_ok=True)
        self.started = time.time()

    def on_log(self, args: Any, state: Any, control: Any, logs: dict[str, Any] | None = None, **kwargs: Any) -> None:
        if not logs or not state.is_world_process_zero:
            return
        row: dict[str, Any] = {
            "step": int(state.global_step),
            "epoch": state.epoch,
            "seconds": round(time.time() - self.started, 3),
        }
        for key, value in logs.items():
            if isinstance(value, (int, float)) and not isinstance(value, bool):
                row[RENAMES.get(key, key)] = value
        with self.path.open("a", encoding="utf-8") as f:
            f.write(json.dumps(row) + "\n")


class StopOnSignal(TrainerCallback):
    """On SIGTERM (and SIGINT), save a checkpoint at the end of the current step and stop training."""

    def __init__(self, signals: tuple[int, ...] = (signal.SIGTERM, signal.SIGINT)):
        self.requested: int | None = None
        for s in signals:
            signal.signal(s, self._request)

    def _request(self, signum: int, _frame: Any) -> None:
        self.requested = signum

    def on_step_end(self, args: Any, state: Any, control: Any, **kwargs: Any) -> Any:
        if self.requested is not None:
            control.should_save = True
            control.should_training_stop = True
        return control
