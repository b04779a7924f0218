"""verl's own checkpoint path end to end on the CPU: the tiny model saved by verl's FSDPCheckpointManager (one gloo
process, and two, whose shards are real DTensor halves), listed by `quarry checkpoints list` as a verl checkpoint to
merge, merged by verl's merger (`python -m verl.model_merger merge --backend fsdp`), and loaded by transformers with
the same weights. verl's FSDP merger writes bfloat16 (verl/model_merger/fsdp_model_merger.py casts every shard with
.bfloat16()), so "the same" is the original weights in bfloat16, bit for bit."""

from __future__ import annotations

import json
import socket
import subprocess
import sys
from pathlib import Path

import pytest

HERE = Path(__file__).parent


def free_port() -> str:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return str(s.getsockname()[1])


def save_with_verl(model_dir: Path, actor: Path, world: int) -> None:
    port = free_port()
    procs = [
        subprocess.Popen(
            [sys.executable, str(HERE / "_verl_fsdp_save.py"), str(model_dir), str(actor), port, str(r), str(world)],
            stdout=subprocess.PIPE,
            stderr=subprocess.STDOUT,
            text=True,
        )
        for r in range(world)
    ]
    for p in procs:
        out, _ = p.communicate(timeout=600)
        assert p.returncode == 0, out[-3000:]


@pytest.mark.parametrize("world", [1, 2])
def test_verl_saves_fsdp_shards_its_merger_rebuilds_the_model_transformers_loads(
    repo_root, quarry_cli, tmp_path, world
):
    import torch
    from transformers import AutoModelForCausalLM

    pytest.importorskip("verl")
    src = repo_root / "media" / "models" / "tiny-sql"
    actor = tmp_path / "ckpts" / "global_step_1" / "actor"
    save_with_verl(src, actor, world)
    assert sorted(p.name for p in actor.glob("model_world_size_*.pt")) == [
        f"model_world_size_{world}_rank_{r}.pt" for r in range(world)
    ]
    assert (actor / "huggingface" / "config.json").exists()

    listed = subprocess.run(
        [*quarry_cli, "checkpoints", "list", str(tmp_path / "ckpts"), "--json"], capture_output=True, text=True
    )
    assert listed.returncode == 0, listed.stderr
    [found] = json.loads(listed.stdout)["checkpoints"]
    assert (found["engine"], found["step"], found["layout"], found["loadable"]) == ("verl", 1, "verl-fsdp", False)
    assert "python -m verl.model_merger merge --backend fsdp" in found["note"]

    merged = tmp_path / "merged"
    run = subprocess.run(
        [sys.executable, "-m", "verl.model_merger", "merge", "--backend", "fsdp"]
        + ["--local_dir", str(actor), "--target_dir", str(merged)],
        capture_output=True,
        text=True,
    )
    assert run.returncode == 0, run.stderr[-3000:]

    original = AutoModelForCausalLM.from_pretrained(str(src), local_files_only=True).state_dict()
    loaded = AutoModelForCausalLM.from_pretrained(str(merged), local_files_only=True).state_dict()
    assert sorted(loaded) == sorted(original)
    differing = [k for k in original if not torch.equal(loaded[k].to(torch.bfloat16), original[k].to(torch.bfloat16))]
    assert differing == []
    assert loaded["model.embed_tokens.weight"].dtype == torch.bfloat16
