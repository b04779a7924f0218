"""SFT with TRL's SFTTrainer through quarry_trainer.train.sft on the tiny model, on the CPU: the loss masks by hand,
metrics.jsonl and run.json, and a run stopped by SIGTERM that saves, resumes, and ends where an uninterrupted one
ends."""

from __future__ import annotations

import json
import signal
import subprocess
import sys
import time

import pytest

from quarry_trainer.train.masks import tokenize_with_masks

QUESTIONS = [
    ("How many singers are there?", "SELECT count(*) FROM singer"),
    ("List the names of all singers.", "SELECT name FROM singer"),
    ("What is the average age of singers?", "SELECT avg(age) FROM singer"),
    ("Which singers are older than 30?", "SELECT name FROM singer WHERE age > 30"),
    ("How many concerts are there?", "SELECT count(*) FROM concert"),
    ("List all stadium names.", "SELECT name FROM stadium"),
]


def conversation(q: str, sql: str) -> dict:
    return {
        "schema": "quarry.sft/1",
        "messages": [
            {"role": "user", "content": f"Question: {q}", "loss": False},
            {"role": "assistant", "content": f"<think>look</think>\n<sql>{sql}</sql>", "loss": True},
            {"role": "user", "content": "<observation>\n  x\n0 1\n</observation>", "loss": False},
            {"role": "assistant", "content": f"<solution>{sql}</solution>", "loss": True},
        ],
    }


@pytest.fixture
def sft_file(tmp_path):
    path = tmp_path / "sft.jsonl"
    path.write_text("".join(json.dumps(conversation(q, s)) + "\n" for q, s in QUESTIONS))
    return path


def test_masks_train_the_assistant_turns_and_their_end_markers_only(repo_root):
    from transformers import AutoTokenizer

    tok = AutoTokenizer.from_pretrained(str(repo_root / "media/models/tiny-sql"), local_files_only=True)
    r = tokenize_with_masks(tok, conversation("How many singers?", "SELECT 1")["messages"])
    trained = tok.decode([i for i, m in zip(r["input_ids"], r["assistant_masks"], strict=True) if m])
    masked = tok.decode([i for i, m in zip(r["input_ids"], r["assistant_masks"], strict=True) if not m])
    assert trained == "<think>look</think>\n<sql>SELECT 1</sql><|im_end|>\n<solution>SELECT 1</solution><|im_end|>\n"
    assert "Question: How many singers?" in masked and "<observation>" in masked
    assert masked.count("<|im_start|>assistant\n") == 2, "the role header is prompt, not loss"


def run_sft(repo_root, data, out, *extra: str, popen: bool = False, cpu: bool = True):
    cmd = [
        sys.executable,
        "-m",
        "quarry_trainer.train.sft",
        "--model",
        str(repo_root / "media/models/tiny-sql"),
        "--data",
        str(data),
        "--out",
        str(out),
        "--batch-size",
        "2",
        "--lr",
        "5e-4",
        *(["--cpu"] if cpu else []),
        "--seed",
        "7",
        *extra,
    ]
    if popen:
        return subprocess.Popen(cmd, stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True)
    run = subprocess.run(cmd, capture_output=True, text=True)
    assert run.returncode == 0, run.stderr[-3000:]
    return json.loads(run.stdout.strip().splitlines()[-1]) | {"stderr": run.stderr}


def test_without_cpu_on_a_machine_with_no_gpu_sft_trains_on_the_cpu(repo_root, sft_file, tmp_path):
    from quarry_trainer.train.precision import has_accelerator

    if has_accelerator():
        pytest.skip("this machine has a GPU: the CPU fallback is not taken")
    done = run_sft(repo_root, sft_file, tmp_path / "out", "--max-steps", "2", cpu=False)
    assert done["steps"] == 2 and not done["stoppedEarly"]
    assert "no GPU found" in done["stderr"]


def test_precision_fp32_trains_in_float32_on_a_cpu_with_native_bfloat16_too(tmp_path):
    """npm run train:demo passes --precision fp32: on a CPU with AMX, TRL's bf16 default would otherwise stay on there
    and give another SFT model than on a CPU without (precision.py)."""
    from trl import SFTConfig

    from quarry_trainer.train.precision import cpu_precision
    from quarry_trainer.train.sft import parser, sft_fields

    amx = "processor\t: 0\nflags\t\t: fpu avx2 avx512f avx512_bf16 amx_bf16\n"
    base = ["--model", "m", "--data", "d", "--out", str(tmp_path), "--cpu"]
    pinned = cpu_precision(sft_fields(parser().parse_args([*base, "--precision", "fp32"]), tmp_path), amx)
    assert pinned["bf16"] is False
    assert SFTConfig(**pinned).bf16 is False
    # Without it, TRL's default (bf16 on) is kept on such a CPU.
    auto = cpu_precision(sft_fields(parser().parse_args(base), tmp_path), amx)
    assert "bf16" not in auto


def weights(path):
    from safetensors.torch import load_file

    return load_file(str(path / "model.safetensors"))


def test_sft_writes_metrics_and_run_record_and_a_sigterm_stop_resumes_to_the_same_end(repo_root, sft_file, tmp_path):
    # Enough steps that a SIGTERM sent after the fourth logged step lands well before the end on a fast machine.
    steps = "24"
    whole = run_sft(repo_root, sft_file, tmp_path / "whole", "--max-steps", steps, "--save-steps", "3")
    assert whole["steps"] == 24 and not whole["stoppedEarly"]
    rows = [json.loads(line) for line in (tmp_path / "whole" / "metrics.jsonl").read_text().splitlines()]
    per_step = [r for r in rows if "loss" in r]
    assert [r["step"] for r in per_step] == list(range(1, 25))
    assert all("lr" in r for r in per_step) and max(r["lr"] for r in per_step) > 0
    run = json.loads((tmp_path / "whole" / "run.json").read_text())
    assert run["kind"] == "sft" and run["seed"] == 7 and run["versions"]["trl"]
    assert run["data"][0]["sha256"] and (tmp_path / "whole" / "final" / "model.safetensors").exists()

    # The same run, stopped by SIGTERM once it has logged a few steps: it saves first, then resumes.
    out = tmp_path / "stopped"
    proc = run_sft(repo_root, sft_file, out, "--max-steps", steps, "--save-steps", "3", popen=True)
    metrics = out / "metrics.jsonl"
    deadline = time.time() + 300
    while time.time() < deadline and proc.poll() is None:
        if metrics.exists() and len([x for x in metrics.read_text().splitlines() if '"loss"' in x]) >= 4:
            proc.send_signal(signal.SIGTERM)
            break
        time.sleep(0.05)
    stdout, stderr = proc.communicate(timeout=300)
    assert proc.returncode == 0, stderr[-3000:]
    first = json.loads(stdout.strip().splitlines()[-1])
    assert first["stoppedEarly"] and 4 <= first["steps"] < 24
    assert (out / f"checkpoint-{first['steps']}").exists(), "SIGTERM saved a checkpoint before stopping"
    resumed = run_sft(repo_root, sft_file, out, "--max-steps", steps, "--save-steps", "3", "--resume")
    assert resumed["resumedFrom"].endswith(f"checkpoint-{first['steps']}") and resumed["steps"] == 24
    a, b = weights(tmp_path / "whole" / "final"), weights(out / "final")
    assert a.keys() == b.keys()
    worst = max(float((a[k] - b[k]).abs().max()) for k in a)
    assert worst < 1e-5, f"the resumed run ends {worst} away from the uninterrupted one"
