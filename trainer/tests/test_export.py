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


class _RunsCode:
    """A pickle that runs a command when loaded: what a malicious pytorch_model.bin holds."""

    def __init__(self, marker: str) -> None:
        self.marker = marker

    def __reduce__(self):
        import os

        return (os.system, (f"touch {self.marker}",))


def test_a_pickle_that_would_run_code_is_refused_as_unsafe_not_blamed_on_python(repo_root, quarry_cli, tmp_path):
    """A checkpoint whose weights are a pickle that runs code: nothing runs, and the message says the file was refused
    as unsafe (not that the project's Python needs reinstalling)."""
    import pickle
    import shutil

    from quarry_trainer.export import main
    from quarry_trainer.parity import UNSAFE_EXIT

    src = repo_root / "media" / "models" / "tiny-sql"
    ckpt = tmp_path / "job" / "checkpoint-1"
    ckpt.mkdir(parents=True)
    for f in ("config.json", "generation_config.json", "tokenizer.json", "tokenizer_config.json"):
        shutil.copy(src / f, ckpt / f)
    marker = tmp_path / "ran"
    (ckpt / "pytorch_model.bin").write_bytes(pickle.dumps(_RunsCode(str(marker))))

    assert main(["--checkpoint", str(ckpt), "--out", str(tmp_path / "direct")]) == UNSAFE_EXIT
    run = subprocess.run(
        [*quarry_cli, "checkpoints", "export-onnx", "--checkpoint", str(ckpt), "--out", str(tmp_path / "onnx")],
        capture_output=True,
        text=True,
        cwd=repo_root,
    )
    assert run.returncode == 2, run.stderr
    assert "refused pytorch_model.bin" in run.stderr and "as unsafe" in run.stderr, run.stderr
    assert "a pickle that would run code when loaded" in run.stderr
    assert "setup:python" not in run.stderr and "Python environment" not in run.stderr, run.stderr
    assert not marker.exists(), "the pickle's code ran"
