#!/usr/bin/env python3
"""Tables of the torch trainer's GPU runs (examples/trainers/torch_ppo/gpu-run.sh), from the files they
returned, kept in bench/results/torch_ppo/{h200,h100}/ (this revision) h200-kl/ (the KL hold by controller + early stop) and rev1/ (the first revision,
its own report beside it). Standard library only; prints markdown:
`python3 bench/results/torch_ppo_report.py > bench/results/torch_ppo.md`.
Intervals: 95 % percentile bootstrap over source questions (the unit the shadow set is drawn by;
every episode of a source question is resampled together), paired (the same resample for SFT and
PPO), 10 000 resamples, seed 0. Negative control: PPO and SFT swapped at random per source question
(10 000 permutations, seed 1); the table gives the permutations' 95th percentile of |PPO − SFT| and the
two-sided share of permutations at least as far from 0 as the observed difference.
"""
import json
import os
import random
import statistics as st

D = os.path.join(os.path.dirname(os.path.abspath(__file__)), "torch_ppo")
PEAK = 989.4e12  # NVIDIA's dense bf16 datasheet figure for H100 SXM (80GB HBM3) and H200


def jl(path):
    with open(os.path.join(D, path)) as f:
        return [json.loads(x) for x in f if x.strip()]


def js(path):
    with open(os.path.join(D, path)) as f:
        return json.load(f)


def card(sub):
    with open(os.path.join(D, sub, "card.txt")) as f:
        return f.readline().split(",")[0].strip()


def sft_row(sub, name, label):
    m = [x for x in jl(f"{sub}/metrics_{name}.jsonl") if x["phase"] == "sft"]
    s = m[5:]  # steps 6..30: step 1 compiles, steps 2..5 warm up
    f = st.median(x["mfu_flops_per_s"] for x in s)
    ceil = js(f"{sub}/bench_sft.json")["matmul_bf16_flops_per_s"]
    rows = round(s[0]["tokens"] / (1 - s[0]["pad_share"]) / 2048)
    return (f"| {card(sub)} | {label} | {rows} x 2048 | {st.median(x['throughput'] for x in s):,.0f} | {st.mean(x['pad_share'] for x in s):.1%} | "
            f"{f / 1e12:.0f} | **{f / PEAK:.1%}** ({f / ceil:.1%}) | {max(x['gpu_mem_gb'] for x in m):.1f} GiB | {m[0]['loss']:.5f} |")


def cluster_sums(pairs, fn):
    """Per source question: (sum over its SFT episodes, sum over its PPO episodes, episodes) of fn."""
    out = {}
    for x, y in pairs:
        c = out.setdefault(x["source_id"], [0.0, 0.0, 0])
        c[0] += fn(x)
        c[1] += fn(y)
        c[2] += 1
    return list(out.values())


def means(cs):
    n = sum(c[2] for c in cs)
    return sum(c[0] for c in cs) / n, sum(c[1] for c in cs) / n


def boot(cs, n=10000, seed=0):
    """95 % intervals of the SFT mean, the PPO mean and their difference, resampling source questions."""
    rng = random.Random(seed)
    a, b, d = [], [], []
    for _ in range(n):
        m0, m1 = means([cs[rng.randrange(len(cs))] for _ in cs])
        a.append(m0)
        b.append(m1)
        d.append(m1 - m0)
    q = lambda v: (sorted(v)[int(0.025 * n)], sorted(v)[int(0.975 * n) - 1])  # noqa: E731
    return q(a), q(b), q(d)


def perm(cs, n=10000, seed=1):
    """Negative control: SFT and PPO swapped at random per source question; the 95th percentile of
    |PPO - SFT| over the swaps and the two-sided share of swaps at least as far from 0 as observed."""
    rng = random.Random(seed)
    m0, m1 = means(cs)
    obs = abs(m1 - m0)
    tot = sum(c[2] for c in cs)
    out = []
    for _ in range(n):
        d = sum((c[1] - c[0]) if rng.random() < 0.5 else (c[0] - c[1]) for c in cs) / tot
        out.append(abs(d))
    out.sort()
    return out[int(0.95 * n) - 1], sum(1 for x in out if x >= obs - 1e-12) / n


def eval_table(ev, mode_is_greedy):
    a = [x for x in ev["sft"] if (x["mode"] == "greedy") == mode_is_greedy]
    b = {(x["id"], x["mode"]): x for x in ev["final"]}
    pairs = [(x, b[(x["id"], x["mode"])]) for x in a]
    metrics = [
        ("success", lambda x: x["success"], None),
        ("reward", lambda x: x["reward"], None),
        ("success, needs clarification", lambda x: x["success"], lambda x: x["needs_clarification"]),
        ("asks (share of episodes), needs clarification", lambda x: float(x["asks"] > 0), lambda x: x["needs_clarification"]),
        ("over-clarification (asks, no clarification needed)", lambda x: float(x["asks"] > 0), lambda x: not x["needs_clarification"]),
        ("success, no clarification needed", lambda x: x["success"], lambda x: not x["needs_clarification"]),
        ("no answer (share of episodes)", lambda x: float(x["no_answer"]), None),
        ("tool calls per episode", lambda x: float(x["tool_calls"]), None),
    ] + [(f"success, {t}", lambda x: x["success"], (lambda t: lambda x: x["task"] == t)(t)) for t in ("gsm8k", "hotpotqa", "strategyqa")]
    print("| metric | n episodes | after SFT [95 % CI] | after PPO [95 % CI] | PPO − SFT [95 % CI, paired] | negative control: 95th pct of abs(PPO − SFT), two-sided p |")
    print("|---|---|---|---|---|---|")
    for name, fn, keep in metrics:
        sub = [p for p in pairs if keep is None or keep(p[0])]
        cs = cluster_sums(sub, fn)
        m0, m1 = means(cs)
        (l0, h0), (l1, h1), (ld, hd) = boot(cs)
        q95, p = perm(cs)
        print(f"| {name} | {len(sub)} | {m0:.4f} [{l0:.4f}, {h0:.4f}] | {m1:.4f} [{l1:.4f}, {h1:.4f}] | {m1 - m0:+.4f} [{ld:+.4f}, {hd:+.4f}] | {q95:.4f}, p = {p:.3f} |")


def kl_section(before, after):
    """The KL hold: the contract run with the pull-back (before) and with the controller + early stop (after)."""
    ppo_of = lambda sub: [x for x in jl(f"{sub}/metrics_main.jsonl") if x["phase"] == "ppo"]  # noqa: E731
    b, a = ppo_of(before), ppo_of(after)
    t = 0.03
    print(f"## KL to the SFT policy: pull-back (`{before}/`) vs adaptive coefficient + early stop (`{after}/`), {card(after)}\n")
    print("The same contract run (base 8 × 512, SFT 150 steps, PPO steps 151..230 of 256 episodes, train.lr 1e-5, epochs 4 × 8 "
          f"minibatches, kl_coef starting at the config's 0.02, target_kl {t}, kl_stop 1.5, so the bound is {1.5 * t:.3f}), the same seed and "
          "data. Before: the coefficient adapted at rate episodes / kl_horizon (256 / 10 000 per iteration), and a minibatch whose policy "
          "was over 1.5 × target_kl got a pull-back step instead of the PPO loss. After: the rate is policy tokens / kl_horizon (at most 1: "
          "every generated token is a transition of token-level PPO), the pull-back is gone, and the epoch loop stops early when the "
          "projected KL passes the bound and the update raised it (ppo.py). `kl` is in both runs the per-token mean of "
          "log π − log π_SFT over the rollout's policy tokens, before the iteration's update.\n")
    print("| run | KL, iterations 151..160 | 161..170 | 171..230 | whole PPO phase | iterations over 1.5 × target | kl_coef range | "
          "iterations stopped early | minibatch updates done / possible | reward, first 10 / last 10 (mean) | success (sampled), first 10 / last 10 |")
    print("|---|---|---|---|---|---|---|---|---|---|---|")
    rng = lambda rows, k: f"{min(x[k] for x in rows):.4f} .. {max(x[k] for x in rows):.4f}"  # noqa: E731
    for name, r in ((f"before (`{before}`, pull-back)", b), (f"after (`{after}`, controller + early stop)", a)):
        stops = sum(1 for x in r if x.get("early_stop"))
        done = sum(x["updates"] for x in r)
        most = sum(x.get("updates_max", 32) for x in r)
        pulls = f"; pull-back steps {sum(x['pullbacks'] for x in r)}" if "pullbacks" in r[0] else ""
        print(f"| {name} | {rng(r[:10], 'kl')} | {rng(r[10:20], 'kl')} | {rng(r[20:], 'kl')} | {rng(r, 'kl')} | "
              f"{sum(1 for x in r if x['kl'] > 1.5 * t)} of {len(r)} | {rng(r, 'kl_coef')} | {stops} of {len(r)} | {done} / {most}{pulls} | "
              f"{st.mean(x['reward'] for x in r[:10]):.4f} / {st.mean(x['reward'] for x in r[-10:]):.4f} | "
              f"{st.mean(x['success'] for x in r[:10]):.4f} / {st.mean(x['success'] for x in r[-10:]):.4f} |")
    print(f"\nPer iteration, after (`{after}/metrics_main.jsonl`): KL at rollout, the kl_coef its reward used, minibatch updates done of "
          f"{a[0]['updates_max']}, the projected KL at the stop\n")
    print("| iterations | KL (min .. max) | kl_coef (min .. max) | updates done (min .. max) | projected KL at the stop (median) | over the bound |")
    print("|---|---|---|---|---|---|")
    for i in range(0, len(a), 10):
        r = a[i: i + 10]
        print(f"| {r[0]['step']}..{r[-1]['step']} | {rng(r, 'kl')} | {rng(r, 'kl_coef')} | {min(x['updates'] for x in r)} .. "
              f"{max(x['updates'] for x in r)} | {st.median(x['kl_projected'] for x in r):.4f} | {sum(1 for x in r if x['kl'] > 1.5 * t)} |")
    late = [x["updates"] for x in a[20:]]
    print(f"\nThe early stop fired in every iteration. From iteration {a[20]['step']} on it came after {min(late)}..{max(late)} updates "
          f"({sum(1 for u in late if u == 8)} of {len(late)} times after exactly 8, at the first minibatch of the second epoch): the first "
          "checks on tokens the update has already trained on, where the importance-weighted estimate is far above what the next "
          "rollout measures (iteration 151: projected "
          f"{a[0]['kl_projected']:.3f}, the next rollout {a[1]['kl']:.4f}), so in effect each iteration ran about one epoch. During the overshoot "
          "(KL over the bound at rollout) it let one to three updates through per iteration, and the KL still rose: what brought it back was the "
          "coefficient, which had first fallen (the KL was under target for the first iterations) and needed about 14 iterations of +20 % "
          "to reach ~0.09. The SFT phases of the two runs are not bit-identical (compiled, without --deterministic: SFT loss at step "
          f"150 {[x for x in jl(f'{before}/metrics_main.jsonl') if x['phase'] == 'sft'][-1]['loss']:.4f} vs "
          f"{[x for x in jl(f'{after}/metrics_main.jsonl') if x['phase'] == 'sft'][-1]['loss']:.4f}), so PPO started from slightly "
          "different SFT policies.\n")
    ev = js(f"{after}/evals.json")
    sh = [x for x in ev["sft"] if x["mode"] == "greedy"]
    print(f"### Held-out shadow set, after SFT (step 150) vs after PPO (step {ev['final_step']}), `{after}/`: {len(sh)} scenarios, "
          f"{len({x['source_id'] for x in sh})} source questions\n")
    print("Intervals, negative control and reading as in the section above (22 comparisons, uncorrected).\n")
    print("#### Greedy decoding, one episode per scenario\n")
    eval_table(ev, True)
    print(f"\n#### Sampled (temperature 1), {len([x for x in ev['sft'] if x['mode'] != 'greedy']) // len(sh)} episodes per scenario\n")
    eval_table(ev, False)
    print()


def main():
    h200, h100 = "h200", "h100"
    b200, b100 = js(f"{h200}/bench_sft.json"), js(f"{h100}/bench_sft.json")
    print("# Torch trainer (examples/trainers/torch_ppo): GPU runs on one NVIDIA H200 and one NVIDIA H100\n")
    print(f"torch {b200['torch']} on both; pool vocabulary {b200['vocab']} tokens (tool outputs included). MFU = model FLOPs / time / the "
          f"datasheet's dense bf16 peak, {PEAK / 1e12:.1f} TFLOP/s for both cards (H100 SXM, 80GB HBM3, and H200); in brackets against the "
          f"bf16 matmul ceiling measured in the same call (8192^3): H200 {b200['matmul_bf16_flops_per_s'] / 1e12:.0f}, H100 "
          f"{b100['matmul_bf16_flops_per_s'] / 1e12:.0f} TFLOP/s. Each card's baseline was measured on that card, in the same call as its runs "
          "(the H100's 24-row and 350w runs in the next call on the same warm machine).\n")

    print("## SFT throughput, ~350 M configurations, packed rows with document masking\n")
    print("Model FLOPs per step: 6 × (block + output-head matmul parameters) × real tokens (padding excluded) + 6 × layers × "
          "(heads × head_dim) × Σ l² over the step's documents of lengths l (causal attention inside each document: what the document mask "
          "computes). The transformers baseline packs no documents: its random 8 × 2048 rows are counted with plain causal attention over "
          "the whole row (6 × layers × d × 2048 per token), which it computes. Median over steps 6..30 of 30 SFT steps (step 1 compiles); "
          "the step time is the GPU time between the ends of consecutive steps (data, forward, backward, clipping, fused AdamW; no host "
          "sync inside the loop: a step's metrics line is written while the next step runs).\n")
    print("350m: 24 layers × hidden 1024, ffn 3072, GQA 16/8 heads of 64 (302 M in blocks + 8.5 M output head + 8.5 M embedding). "
          "350w: 12 layers × hidden 1536, ffn 4096, GQA 12/4 heads of 128 (302 M in blocks + 12.7 M head + 12.7 M embedding).\n")
    print("| card | implementation | rows x seq | real tokens/s | padding | model TFLOP/s | MFU (of measured ceiling) | peak GPU memory | loss, step 1 |")
    print("|---|---|---|---|---|---|---|---|---|")
    for sub, b in ((h200, b200), (h100, b100)):
        r = [x for x in b["rows"] if x["what"] == "sft"][0]
        print(f"| {card(sub)} | transformers Qwen3ForCausalLM (350m shape) eager, AdamW non-fused, plain causal (baseline) | 8 x 2048 | "
              f"{r['tokens_per_s']:,.0f} | 0 | {r['flops_per_s'] / 1e12:.0f} | {r['flops_per_s'] / PEAK:.1%} "
              f"({r['flops_per_s'] / b['matmul_bf16_flops_per_s']:.1%}) | {r['peak_gb']:.1f} GiB | |")
        print(sft_row(sub, "sft350m_flex", "trainer 350m, torch.compile (model + loss), FlexAttention document mask, fused AdamW"))
        if sub == h100:
            print(sft_row(sub, "sft350m_flex_r24", "the same, 24 rows per step"))
        if sub == h200:
            print(sft_row(sub, "sft350m_dense", "trainer 350m, torch.compile, dense boolean document mask (SDPA)"))
        print(sft_row(sub, "sft350w_flex", "trainer 350w, torch.compile, FlexAttention document mask, fused AdamW"))
    print("\nThe FlexAttention and dense-mask runs start from the same weights on the same rows: their step-1 losses agree to 2e-5 "
          "(bf16 kernels), and selftest.py checks on the GPU that the two masks give the same logits (`h200/selftest.log`).\n")

    bench = js(f"{h100}/bench.json")
    print(f"## Decoding (rollout generation), {card(h100)}: every row decoding 128 new tokens (no early stop)\n")
    print("| size | implementation | batch | tokens/s |\n|---|---|---|---|")
    for r in bench["rows"]:
        if r["what"] == "decode" and "error" not in r:
            print(f"| {r['size']} | {r['impl']} | {r['batch']} | {r['tokens_per_s']:,.0f} |")
    print("\n(transformers baseline: Qwen3ForCausalLM of the same shape, `generate`, 32 new tokens, dynamic cache. The first revision's "
          "H200 figures are in `torch_ppo/rev1/torch_ppo_rev1.md`.)\n")

    m = jl(f"{h200}/metrics_main.jsonl")
    sft = [x for x in m if x["phase"] == "sft"]
    ppo = [x for x in m if x["phase"] == "ppo"]
    print(f"## The contract run ({card(h200)}; base: 8 x 512, vocab {b200['vocab']}; SFT steps 1..{len(sft)}, PPO steps "
          f"{ppo[0]['step']}..{ppo[-1]['step']}; tools executed in every episode)\n")
    print("| SFT loss step 1 | step 10 | step 50 | step 100 | last SFT step | SFT real tokens/s (median) | SFT MFU (median) |\n|---|---|---|---|---|---|---|")
    print(f"| {sft[0]['loss']:.3f} | {sft[9]['loss']:.3f} | {sft[49]['loss']:.3f} | {sft[99]['loss']:.3f} | {sft[-1]['loss']:.3f} | "
          f"{st.median(x['throughput'] for x in sft[5:]):,.0f} | {st.median(x['mfu_flops_per_s'] for x in sft[5:]) / PEAK:.1%} |\n")
    print("(The SFT loss covers every token but the tool outputs; 32 rows × 1024 per step. At this small size (25 M in blocks) the "
          "output head and elementwise work dominate: its MFU is not the goal's configuration.)\n")
    keys = [("reward", "reward"), ("success", "success (sampled)"), ("kl", "KL to SFT (per token)"), ("kl_coef", "KL coef"), ("asks", "asks"),
            ("tool_calls", "tool calls"), ("tool_errors", "tool errors"), ("no_answer", "no answer"), ("episode_len", "generated tokens"),
            ("step_s", "s / iteration"), ("gen_share", "generation share")]
    print("| PPO (256 episodes / iteration) | " + " | ".join(k[1] for k in keys) + " |\n|" + "---|" * (len(keys) + 1))
    for label, rows in ((f"first 10 iterations (mean)", ppo[:10]), (f"last 10 iterations (mean)", ppo[-10:])):
        print(f"| {label} | " + " | ".join(f"{st.mean(x[k] for x in rows):.4f}" for k, _ in keys) + " |")
    print(f"| range over all {len(ppo)} iterations | " + " | ".join(f"{min(x[k] for x in ppo):.4f} .. {max(x[k] for x in ppo):.4f}" for k, _ in keys) + " |\n")
    print(f"KL target 0.03 per token; a minibatch over 1.5 × target gets a pull-back step ({sum(x['pullbacks'] for x in ppo)} of "
          f"{sum(x['updates'] for x in ppo)} minibatch updates). Generation inside PPO: median {st.median(x['gen_tokens_per_s'] for x in ppo):,.0f} "
          "useful tokens/s (episodes stop early and are cut into segments at every tool call, each segment a new prefill).\n")

    ev = js(f"{h200}/evals.json")
    sh = [x for x in ev["sft"] if x["mode"] == "greedy"]
    nc = sum(1 for x in sh if x["needs_clarification"])
    print(f"## Held-out shadow set: after SFT (step {len(sft)}) vs after PPO (step {ev['final_step']}), {len(sh)} scenarios ({nc} need clarification), "
          f"{len({x['source_id'] for x in sh})} source questions\n")
    print("Intervals resample source questions (all episodes of a question together); the negative control swaps SFT and PPO per source "
          "question. A difference counts only where its interval excludes 0 and its size exceeds the control's 95th percentile; the 22 rows "
          "below are 22 comparisons, not corrected for multiplicity.\n")
    print("### Greedy decoding, one episode per scenario\n")
    eval_table(ev, True)
    print(f"\n### Sampled (temperature 1), {len([x for x in ev['sft'] if x['mode'] != 'greedy']) // len(sh)} episodes per scenario, the same seeds for both policies\n")
    eval_table(ev, False)
    print(f"\nThe safetensors library reads the trainer's model.safetensors identically: {ev['safetensors_library_identical']}.\n")

    print(f"## Tool calls in episodes ({card(h100)}: a short run, SFT 150 + PPO 10, greedy held-out episodes kept as text)\n")
    print("| held-out eval | tool calls | of them: no document with a shared title word | calc errors | tool not offered | episodes without an answer |\n|---|---|---|---|---|---|")
    for name in ("eval_short_sft.json", "eval_short_final.json"):
        r = js(f"{h100}/{name}")
        tot = lambda k: sum(x["tool_errors"].get(k, 0) for x in r)  # noqa: E731
        print(f"| {name} | {sum(x['tool_calls'] for x in r)} | {tot('no_document')} | {tot('calc_error')} | {tot('unavailable')} | "
              f"{sum(x['no_answer'] for x in r)} of {len(r)} |")
    print("\nThe wiki titles the from-scratch model writes are mostly invented (e.g. `<wiki>Ustathion (magazine)`), so the lookup finds "
          "no document; calc calls evaluate. The episodes are in `h100/eval_short_*.json` (`episode`).\n")

    r = js(f"{h100}/resume_report.json")
    print(f"## Resume ({card(h100)}; small size, --deterministic, CUDA graphs): SIGTERM after step {r['cut_after']}, exit "
          f"{r['exit_on_sigterm']}, resumed from {r['resumed_from']}\n")
    print("| step | loss straight / resumed | reward straight / resumed | KL straight / resumed | every metric identical |\n|---|---|---|---|---|")
    for x in r["steps_after_resume"]:
        print(f"| {x['step']} | {x['loss_straight']:.6f} / {x['loss_resumed']:.6f} | {x['reward_straight']:.6f} / {x['reward_resumed']:.6f} | "
              f"{x['kl_straight']:.6g} / {x['kl_resumed']:.6g} | {x['identical']} |")
    bc = r["before_cut"]
    print(f"\nFinal weights byte-identical to the uninterrupted run: {r['final_weights_identical']}. Steps 1..{bc['steps']} of the two "
          f"processes: {'identical' if bc['first_different_step'] is None else 'first differ at step ' + str(bc['first_different_step'])}.\n")
    bad = [(f, js(f)) for f in (f"{h200}/resume_report_before_fix.json", f"{h100}/resume_report_before_fix.json", f"{h100}/resume_report_before_fix_nographs.json")]
    print("Before the fix, the uninterrupted run and the resumed one differed; the one change between those checks and the passing one is "
          "that with --deterministic the SFT document mask no longer goes through SDPA's masked kernel: "
          + "; ".join(f"`{f}`: metrics identical {x['metrics_identical']}, weights identical {x['final_weights_identical']}" for f, x in bad)
          + ". With --deterministic the masked attention now runs as an explicit softmax (plain matmuls). Without --deterministic (every "
          "throughput and contract run above) resume exactness was not measured.\n")

    kl_section(h200, "h200-kl")

    print("## Which code produced which file\n")
    print("- `h200/*`: this revision before two later changes that do not touch those runs: the deterministic masked-attention path "
          "(only with --deterministic, which the H200 runs did not use) and the per-kind tool-error counts / episode texts in the metrics and "
          "eval records. `h200/resume_report_before_fix.json` is the resume check before the first of them.")
    print("- `h200-kl/*`: the KL hold by the adaptive coefficient (rate policy tokens / kl_horizon) and the early stop of the epochs, "
          "no pull-back (ppo.py); everything else as `h100/*`.")
    print("- `h100/*`: this revision; `resume_report_before_fix*.json` before the deterministic masked-attention path.")
    print("- `rev1/*`: the first revision (tools not executed, no document mask), with its report `rev1/torch_ppo_rev1.md`.")


if __name__ == "__main__":
    main()
