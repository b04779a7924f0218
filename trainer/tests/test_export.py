"""`quarry checkpoints list` and `export-onnx` on a checkpoint transformers itself wrote: found as loadable, exported
by quarry_trainer.export, and decoded by onnxruntime-node to the same greedy tokens as transformers."""

from __future__ import annotations

import json
import subprocess


def test_a_transformers_checkpoint_is_found_exported_and_decodes_the_same(repo_root, quarry_cli, tmp_path):
    from transformers import AutoModelForCausalLM, AutoTokenizer

    src = repo_root / "media" / "models" / "tiny-sql"
    ckpt = tmp_path / "job" / "checkpoint-3"
    model = AutoModelForCausalLM.from_pretrained(str(src), local_files_only=True)
    AutoTokenizer.from_pretrained(str(src), local_files_only=True).save_pretrained(ckpt)
    model.save_pretrained(ckpt)

    listed = subprocess.run(
        [*quarry_cli, "checkpoints", "list", str(tmp_path / "job"), "--json"],
        capture_output=True,
        text=True,
        check=True,
    )
    found = json.loads(listed.stdout)["checkpoints"]
    assert [(c["engine"], c["step"], c["loadable"]) for c in found] == [("trl", 3, True)]

    out = tmp_path / "onnx"
    run = subprocess.run(
        [*quarry_cli, "checkpoints", "export-onnx", "--checkpoint", str(ckpt), "--out", str(out), "--json"],
        capture_output=True,
        text=True,
        cwd=repo_root,
    )
    assert run.returncode == 0, run.stderr
    report = json.loads(run.stdout)
    assert report["parity"]["equal"] is True
    assert len(report["parity"]["cases"]) == 3
    assert (out / "model.onnx").exists() and (out / "tokenizer.json").exists()
