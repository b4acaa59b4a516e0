#!/usr/bin/env python3
"""Tables of the torch trainer's GPU run (examples/trainers/torch_ppo/gpu-run.sh), from the files it
returned, kept in bench/results/torch_ppo/. Standard library only; prints markdown (the content of
bench/results/torch_ppo.md: `python3 bench/results/torch_ppo_report.py > bench/results/torch_ppo.md`).
Intervals: 95 % percentile bootstrap over held-out scenarios (the independent unit), paired
(the same resampled scenarios for SFT and PPO), 10 000 resamples, seed 0.
"""
import json
import os
import random
import statistics as st

D = os.path.join(os.path.dirname(os.path.abspath(__file__)), "torch_ppo")
PEAK = 989.4e12  # NVIDIA's dense bf16 datasheet figure for H100 SXM and H200


def jl(name):
    with open(os.path.join(D, name)) as f:
        return [json.loads(x) for x in f if x.strip()]


def boot(pairs, stat, n=10000):
    rng = random.Random(0)
    vals = sorted(stat([pairs[rng.randrange(len(pairs))] for _ in pairs]) for _ in range(n))
    return vals[int(0.025 * n)], vals[int(0.975 * n) - 1]


def main():
    bench = json.load(open(os.path.join(D, "bench.json")))
    card = bench["card"]
    ceil = bench["matmul_bf16_flops_per_s"]
    print(f"# Torch trainer (examples/trainers/torch_ppo): GPU run on one {card}\n")
    print(f"torch {bench['torch']}; pool vocabulary {bench['vocab']} tokens; pool prompts p50/p90/max {bench['prompt_tokens_p50_p90_max']} tokens. "
          f"Measured bf16 matmul ceiling (8192^3) {ceil / 1e12:.0f} TFLOP/s; MFU below is against the datasheet's {PEAK / 1e12:.1f} TFLOP/s "
          "and, in brackets, against the measured ceiling. Every baseline was measured in the same call on the same card.\n")

    print("## SFT throughput, ~350 M configuration (24 x 1024, ffn 3072, GQA 16/8; 310 M in blocks + 15 M embedding/head)\n")
    print("| implementation | rows x seq | tokens/s | model TFLOP/s | MFU | peak GPU memory |\n|---|---|---|---|---|---|")
    for r in bench["rows"]:
        if r["what"] == "sft" and "error" not in r:
            print(f"| {r['impl']} | 8 x 2048 | {r['tokens_per_s']:,.0f} | {r['flops_per_s'] / 1e12:.0f} | {r['flops_per_s'] / PEAK:.1%} ({r['flops_per_s'] / ceil:.1%}) | n/a |")
    for v, label in (("eager", "trainer, eager, fused AdamW"), ("compiled", "trainer, torch.compile, fused AdamW, packed rows")):
        s = [x for x in jl(f"metrics_350m_{v}.jsonl") if x["phase"] == "sft"][3:]
        f = st.median(x["mfu_flops_per_s"] for x in s)
        print(f"| {label} (median of steps 4..{len(s) + 3}) | 16 x 2048 | {st.median(x['throughput'] for x in s):,.0f} | {f / 1e12:.0f} | "
              f"{f / PEAK:.1%} ({f / ceil:.1%}) | {max(x['gpu_mem_gb'] for x in s):.1f} GiB |")
    print("\nFLOPs per token: 6 x (block + output-head matmul parameters) + 6 x layers x hidden x seq (causal attention).\n")

    print("## Decoding (rollout generation), every row decoding 128 new tokens (no early stop)\n")
    print("| size | implementation | batch | tokens/s |\n|---|---|---|---|")
    for r in bench["rows"]:
        if r["what"] == "decode" and "error" not in r:
            print(f"| {r['size']} | {r['impl']} | {r['batch']} | {r['tokens_per_s']:,.0f} |")
    print("\n(transformers baseline: Qwen3ForCausalLM of the same shape, `generate`, 32 new tokens, dynamic cache.)\n")

    print("## PPO iterations: share of each iteration spent generating\n")
    print("| run | iterations | episodes/iter | median s/iter | median generation share | median generated tokens/s inside PPO (useful tokens only) | mean episode tokens |\n|---|---|---|---|---|---|---|")
    for name, label in (("metrics_350m_ppo.jsonl", "~350 M, graphs, epochs 4"), ("metrics_350m_compiled.jsonl", "~350 M, graphs + compile, epochs 1"),
                        ("metrics_main.jsonl", "base (8 x 512), graphs, epochs 4 (the contract run)")):
        p = [x for x in jl(name) if x["phase"] == "ppo"]
        print(f"| {label} | {len(p)} | 256 | {st.median(x['step_s'] for x in p):.2f} | {st.median(x['gen_share'] for x in p):.0%} | "
              f"{st.median(x['gen_tokens_per_s'] for x in p):,.0f} | {st.mean(x['episode_len'] for x in p):.0f} |")

    m = jl("metrics_main.jsonl")
    sft = [x for x in m if x["phase"] == "sft"]
    ppo = [x for x in m if x["phase"] == "ppo"]
    print(f"\n## The contract run (base: 8 x 512, vocab {bench['vocab']}; SFT steps 1..{len(sft)}, PPO steps {ppo[0]['step']}..{ppo[-1]['step']})\n")
    print("| SFT loss step 1 | step 10 | step 50 | step 100 | last SFT step | SFT tokens/s (median) |\n|---|---|---|---|---|---|")
    print(f"| {sft[0]['loss']:.3f} | {sft[9]['loss']:.3f} | {sft[49]['loss']:.3f} | {sft[99]['loss']:.3f} | {sft[-1]['loss']:.3f} | {st.median(x['throughput'] for x in sft[5:]):,.0f} |\n")
    first, last = ppo[:10], ppo[-10:]
    print("| PPO | reward | success (sampled) | KL to SFT policy (per token) | KL coef | asks/episode |\n|---|---|---|---|---|---|")
    print(f"| first 10 iterations (mean) | {st.mean(x['reward'] for x in first):.4f} | {st.mean(x['success'] for x in first):.4f} | {st.mean(x['kl'] for x in first):.4f} | {first[-1]['kl_coef']:.4f} | {st.mean(x['asks'] for x in first):.3f} |")
    print(f"| last 10 iterations (mean) | {st.mean(x['reward'] for x in last):.4f} | {st.mean(x['success'] for x in last):.4f} | {st.mean(x['kl'] for x in last):.4f} | {last[-1]['kl_coef']:.4f} | {st.mean(x['asks'] for x in last):.3f} |")
    print(f"| range over all {len(ppo)} iterations | {min(x['reward'] for x in ppo):.4f} .. {max(x['reward'] for x in ppo):.4f} | | "
          f"{min(x['kl'] for x in ppo):.4f} .. {max(x['kl'] for x in ppo):.4f} (target 0.03, pull-back above 0.045) | | |\n")

    ev = json.load(open(os.path.join(D, "evals.json")))
    a, b = {x["id"]: x for x in ev["sft"]}, {x["id"]: x for x in ev["final"]}
    pairs = [(a[k], b[k]) for k in sorted(a)]
    print(f"## Held-out shadow set ({len(pairs)} scenarios, greedy decoding): after SFT vs after PPO\n")
    print("| metric | after SFT [95 % CI] | after PPO [95 % CI] | PPO − SFT [95 % CI, paired] |\n|---|---|---|---|")
    for key in ("success", "reward"):
        mean = lambda ps, i: sum(p[i][key] for p in ps) / len(ps)  # noqa: E731
        lo0, hi0 = boot(pairs, lambda ps: mean(ps, 0))
        lo1, hi1 = boot(pairs, lambda ps: mean(ps, 1))
        lod, hid = boot(pairs, lambda ps: mean(ps, 1) - mean(ps, 0))
        print(f"| {key} | {mean(pairs, 0):.4f} [{lo0:.4f}, {hi0:.4f}] | {mean(pairs, 1):.4f} [{lo1:.4f}, {hi1:.4f}] | {mean(pairs, 1) - mean(pairs, 0):+.4f} [{lod:+.4f}, {hid:+.4f}] |")
    for task in sorted({p[0]["task"] for p in pairs}):
        ps = [p for p in pairs if p[0]["task"] == task]
        print(f"| success, {task} (n = {len(ps)}) | {sum(p[0]['success'] for p in ps) / len(ps):.4f} | {sum(p[1]['success'] for p in ps) / len(ps):.4f} | |")
    print(f"\nThe safetensors library reads the trainer's model.safetensors identically: {ev['safetensors_library_identical']}.\n")

    r = json.load(open(os.path.join(D, "resume_report.json")))
    print(f"## Resume (small size, --deterministic, CUDA graphs): SIGTERM after step {r['cut_after']}, exit {r['exit_on_sigterm']}, resumed from {r['resumed_from']}\n")
    print("| step | loss straight / resumed | reward straight / resumed | KL straight / resumed | every metric identical |\n|---|---|---|---|---|")
    for x in r["steps_after_resume"]:
        print(f"| {x['step']} | {x['loss_straight']:.6f} / {x['loss_resumed']:.6f} | {x['reward_straight']:.6f} / {x['reward_resumed']:.6f} | "
              f"{x['kl_straight']:.6g} / {x['kl_resumed']:.6g} | {x['identical']} |")
    print(f"\nFinal weights byte-identical to the uninterrupted run: {r['final_weights_identical']}.\n")

    pre = [x for x in open(os.path.join(D, "pretrained.log")) if x.startswith("pretrained:")]
    pm = jl("metrics_pretrained.jsonl")
    print("## Starting from a pretrained Qwen3 checkpoint (--init-from)\n")
    print(pre[0].strip() if pre else "pretrained.log has no result line")
    print(f"\nThen {len(pm)} steps with the Qwen3 tokenizer: " + ", ".join(f"step {x['step']} {x['phase']} loss {x['loss']:.3f}" for x in pm) + ".\n")
    print("## Which code produced which file\n")
    print("- `bench.json`, `metrics_350m_{compiled,eager}.jsonl`, `throughput.log`: the first revision (one CUDA graph per sampler, "
          "recaptured when the batch shape changes; the decode benchmark's shapes are fixed, so it is unaffected).")
    print("- `metrics_350m_ppo.jsonl`: the sampler with a cache of up to 4 graphs and batch buckets; PPO before the KL pull-back "
          "(an iteration stopped after its first update over 1.5 x target_kl).")
    print("- `metrics_main.jsonl`, `evals.json`, `resume_report.json`, `train_main.log`: the PPO of this revision (KL pull-back, "
          "coefficient adapted per episode). `metrics_main_rev1_devlr.jsonl` and `metrics_main_rev2_earlystop.jsonl`: the two earlier "
          "contract runs (lr 3e-4; per-token KL coefficient rate with early stop), kept as found.")
    print("- `metrics_pretrained.jsonl`, `pretrained.log`: this revision.")


if __name__ == "__main__":
    main()
