"""One rank of a verl FSDP checkpoint save, run by test_verl_merger.py as its own process (gloo on the CPU): the tiny
model wrapped in FSDP over a 1-D device mesh named "fsdp" (as verl's FSDP workers build it: sharded state is DTensor),
saved by verl's own FSDPCheckpointManager (verl/utils/checkpoint/fsdp_checkpoint_manager.py) with save_contents
["model"]: model_world_size_W_rank_R.pt per rank, fsdp_config.json and huggingface/ (config, tokenizer).

    python _verl_fsdp_save.py MODEL_DIR OUT_DIR PORT RANK WORLD_SIZE
"""

from __future__ import annotations

import os
import sys


def main() -> None:
    model_dir, out, port, rank, world = sys.argv[1], sys.argv[2], sys.argv[3], int(sys.argv[4]), int(sys.argv[5])
    os.environ.update(MASTER_ADDR="127.0.0.1", MASTER_PORT=port, RANK=str(rank), WORLD_SIZE=str(world))
    os.environ["LOCAL_RANK"] = str(rank)
    import torch
    import torch.distributed as dist
    from torch.distributed.device_mesh import init_device_mesh
    from torch.distributed.fsdp import FullyShardedDataParallel as FSDP
    from transformers import AutoModelForCausalLM, AutoTokenizer
    from verl.utils.checkpoint.fsdp_checkpoint_manager import FSDPCheckpointManager

    dist.init_process_group("gloo", rank=rank, world_size=world)
    model = AutoModelForCausalLM.from_pretrained(model_dir, local_files_only=True, dtype=torch.float32)
    tokenizer = AutoTokenizer.from_pretrained(model_dir, local_files_only=True)
    mesh = init_device_mesh("cpu", (world,), mesh_dim_names=("fsdp",))
    fsdp = FSDP(model, device_mesh=mesh, device_id=torch.device("cpu"), use_orig_params=True)
    manager = FSDPCheckpointManager(
        model=fsdp,
        optimizer=None,
        lr_scheduler=None,
        processing_class=tokenizer,
        checkpoint_config={"save_contents": ["model"], "load_contents": ["model"]},
    )
    manager.save_checkpoint(out, global_step=1)
    dist.destroy_process_group()


if __name__ == "__main__":
    main()
