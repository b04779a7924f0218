#!/bin/bash
# The train:demo SFT and GRPO stages on a GPU machine (the device check of bench/results/train-demo-gpu.json). It expects
# beside the repository a folder .devcarry/ (ignored) holding what such a machine lacks: node.xz (the pinned Node 24,
# xz-compressed), bsq/ (better-sqlite3 lib/, package.json, prebuilds/linux-x64.node), dist/ (cli.js, sqlWorker.js,
# judgeWorker.js from npm run build) and td/data (train:demo's data folder: sft.jsonl, rl/, db/), and .whl/ with the
# wheels of trl 1.16.0, datasets 5.2.0, dill 0.4.1, multiprocess 0.70.19 and transformers 5.10.4 for Python 3.12.
# Output (logs, metrics.jsonl of each run) goes to $OUT. The settings are the demo's less the CPU switches; the step
# times come from metrics.jsonl. transformers 5.10.4 pins tokenizers <= 0.23.0; the machine's 0.23.2 is let through.
set -u
cd "$(dirname "$0")/../.."
C=.devcarry
mkdir -p node_modules/.bin node_modules/better-sqlite3 dist
xz -d < $C/node.xz > node_modules/.bin/node && chmod +x node_modules/.bin/node
cp -r $C/bsq/. node_modules/better-sqlite3/
cp -r $C/dist/. dist/
python3 -m pip install -q --no-index --no-deps --no-compile --no-cache-dir --upgrade --target /tmp/site .whl/*.whl || exit 1
sed -i "s/tokenizers>=0.22.0,<=0.23.0/tokenizers>=0.22.0,<0.24/" /tmp/site/transformers/dependency_versions_table.py
export PATH=$PWD/node_modules/.bin:$PATH
export PYTHONPATH=/tmp/site:$PWD/trainer HF_HUB_OFFLINE=1 PYTHONUNBUFFERED=1
node_modules/.bin/node --version
python3 -c "import torch,transformers,trl,datasets,pyarrow,accelerate,peft;print('torch',torch.__version__,'cuda',torch.cuda.is_available(),'tf',transformers.__version__,'trl',trl.__version__,'ds',datasets.__version__,'pa',pyarrow.__version__,'acc',accelerate.__version__,'peft',peft.__version__)"
nvidia-smi --query-gpu=name,memory.total,driver_version --format=csv
mkdir -p /work && ln -sfn "$PWD/$C/td" /work/td
t0=$(date +%s)
[ -d /tmp/sft/final ] || timeout 120 python3 -m quarry_trainer.train.sft --model media/models/tiny-sql --data /work/td/data/sft.jsonl \
  --out /tmp/sft --max-steps 120 --batch-size 4 --lr 2e-3 --warmup-ratio 0.05 --save-steps 1000 --seed 1 \
  --no-gradient-checkpointing > $OUT/sft.log 2>&1
echo "sft exit $? wall $(( $(date +%s) - t0 )) s"; cp /tmp/sft/metrics.jsonl $OUT/sft.metrics.jsonl; tail -3 $OUT/sft.log
run() { # $1 name, $2 steps, $3 timeout, rest: extra --set
  local name=$1 steps=$2 limit=$3; shift 3
  local sets=(rl.group_size=8 rl.train_batch_size=2 rl.mini_batch_size=2 rl.temperature=1.0 rl.micro_batch_size_per_gpu=8
    rl.total_steps=$steps rl.lr=2e-4 rl.max_turns=3 rl.max_turn_tokens=96 rl.max_prompt_length=2800
    rl.max_response_length=1024 rl.save_freq=1000 rl.grad_clip=1.0 trl.seed=1 trl.gradient_checkpointing=false
    trl.warmup_ratio=0.0 trl.quarry.shared_prefix=true "$@")
  local args=(); for s in "${sets[@]}"; do args+=(--set "$s"); done
  local t0=$(date +%s)
  timeout $limit node_modules/.bin/node dist/cli.js train --recipe skyrl-sql --engine trl --model /tmp/sft/final \
    --data $C/td/data/rl --out /tmp/$name --python "$(command -v python3)" "${args[@]}" > $OUT/$name.log 2>&1
  echo "$name exit $? wall $(( $(date +%s) - t0 )) s"
  cp /tmp/$name/metrics.jsonl $OUT/$name.metrics.jsonl 2>/dev/null
  tail -5 $OUT/$name.log
}
run gpu-bf16 12 170
run gpu-fp32 10 130 trl.bf16=false
ls $OUT
