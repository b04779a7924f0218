"""SkyRL's tracker, wrapped by Quarry, appends each logged step as a `{"step", "data"}` line (the line format the job
panel reads); numpy-like scalars become numbers, NaN becomes null, and a second wrap does not log twice. skyrl-train
itself needs Python 3.12, so the wrapper is checked on a class with Tracking.log's signature."""

from __future__ import annotations

import json

from quarry_trainer.skyrl.metrics import wrap_tracking


class Scalar:
    def __init__(self, v):
        self.v = v

    def __float__(self):
        return float(self.v)


def test_each_log_call_is_appended_as_a_step_line(tmp_path):
    calls = []

    class Tracking:
        def log(self, data, step, commit=False):
            calls.append((step, commit))

    path = tmp_path / "run" / "metrics.jsonl"
    wrap_tracking(Tracking, path)
    wrap_tracking(Tracking, path)
    t = Tracking()
    t.log({"reward/mean": Scalar(0.5), "policy": {"loss": 1.25, "lr": 1e-6}, "bad": float("nan")}, 3)
    t.log({"reward/mean": 0.75}, step=4, commit=True)
    assert calls == [(3, False), (4, True)]
    lines = [json.loads(x) for x in path.read_text().splitlines()]
    assert lines == [
        {"step": 3, "data": {"reward/mean": 0.5, "policy": {"loss": 1.25, "lr": 1e-6}, "bad": None}},
        {"step": 4, "data": {"reward/mean": 0.75}},
    ]
