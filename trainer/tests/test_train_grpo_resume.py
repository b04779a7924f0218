"""A TRL GRPO run started by `quarry train --engine trl` and stopped by SIGTERM (sent to the quarry CLI, as a job
runner or the editor's Cancel would) saves a checkpoint, and `--resume` continues it to the same end as a run never
stopped: the same final weights. The signal goes CLI → launch.sh → the trainer, whose StopOnSignal saves first."""

from __future__ import annotations

import signal
import subprocess
import time

STEPS = 6
TINY = [
    "rl.group_size=2",
    "rl.train_batch_size=1",
    "rl.mini_batch_size=1",
    "rl.micro_batch_size_per_gpu=2",
    f"rl.total_steps={STEPS}",
    "rl.max_turns=2",
    "rl.max_turn_tokens=12",
    "rl.max_prompt_length=3000",
    "rl.max_response_length=512",
    "rl.save_freq=1",
    "rl.lr=1e-3",
    "rl.temperature=1.0",
    "trl.use_cpu=true",
    "trl.seed=5",
]


def train_cmd(quarry_cli, repo_root, data, out, *extra):
    sets = [arg for s in TINY for arg in ("--set", s)]
    return [
        *quarry_cli,
        "train",
        "--recipe",
        "skyrl-sql",
        "--model",
        str(repo_root / "media/models/tiny-sql"),
        "--data",
        str(data),
        "--out",
        str(out),
        "--python",
        str(repo_root / ".venv/bin/python"),
        *sets,
        *extra,
    ]


def weights(path):
    from safetensors.torch import load_file

    return load_file(str(path / "model.safetensors"))


def test_a_sigterm_stopped_grpo_run_resumes_to_the_same_end(quarry_cli, concert_rl_data, repo_root, tmp_path):
    data = concert_rl_data
    whole = subprocess.run(train_cmd(quarry_cli, repo_root, data, tmp_path / "whole"), capture_output=True, text=True)
    assert whole.returncode == 0, whole.stderr[-3000:]

    out = tmp_path / "stopped"
    proc = subprocess.Popen(
        train_cmd(quarry_cli, repo_root, data, out), stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True
    )
    metrics = out / "metrics.jsonl"
    deadline = time.time() + 900
    while time.time() < deadline and proc.poll() is None:
        if metrics.exists() and len([x for x in metrics.read_text().splitlines() if '"reward"' in x]) >= 2:
            proc.send_signal(signal.SIGTERM)
            break
        time.sleep(0.05)
    _, stderr = proc.communicate(timeout=900)
    assert proc.returncode == 0, stderr[-3000:]
    checkpoints = sorted(int(p.name.split("-")[1]) for p in out.glob("checkpoint-*"))
    assert checkpoints and checkpoints[-1] < STEPS, f"stopped early with a checkpoint: {checkpoints}"
    assert not (out / "final").exists()

    resumed = subprocess.run(
        train_cmd(quarry_cli, repo_root, data, out, "--resume"), capture_output=True, text=True, timeout=900
    )
    assert resumed.returncode == 0, resumed.stderr[-3000:]
    a, b = weights(tmp_path / "whole" / "final"), weights(out / "final")
    assert a.keys() == b.keys()
    worst = max(float((a[k] - b[k]).abs().max()) for k in a)
    assert worst < 1e-5, f"the resumed run ends {worst} away from the uninterrupted one"
