#!/usr/bin/env python3
"""Tables of the fifth KL try of the torch trainer (exact KL loss term + held-out projection + pull-back
steps, examples/trainers/torch_ppo/ppo.py) from the runs kept in bench/results/torch_ppo/: h100-klloss/
and h100-klloss2/ (that ppo.py, two runs), h100-kl-base/ (the controller before it, on the same card in
the same session), h200-kl/ (the same controller, the earlier H200 run). Standard library only; prints
the markdown section of bench/results/torch_ppo.md: `python3 bench/results/torch_ppo_klloss.py`.
Held-out intervals and negative control: torch_ppo_report.eval_table (its docstring says how).
"""
import os
import statistics as st
import sys

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
from torch_ppo_report import card, eval_table, jl, js  # noqa: E402

TARGET = 0.03
BOUND = 1.5 * TARGET
NEW = ("h100-klloss", "h100-klloss2")
OLD = ("h200-kl", "h100-kl-base")


def ppo(sub):
    return [x for x in jl(f"{sub}/metrics_main.jsonl") if x["phase"] == "ppo"]


def rng(r, k, f="{:.4f}"):
    return f"{f.format(min(x[k] for x in r))} .. {f.format(max(x[k] for x in r))}"


def first_last(r, k):
    return f"{st.mean(x[k] for x in r[:10]):.4f} / {st.mean(x[k] for x in r[-10:]):.4f}"


def projection_error(r):
    """Mean abs (and signed) error of kl_projected (after iteration i's update) against iteration i+1's exact rollout KL."""
    e = [r[i + 1]["kl_exact"] - r[i]["kl_projected"] for i in range(len(r) - 1)]
    return f"{st.mean(abs(x) for x in e):.4f} ({st.mean(e):+.4f})"


def main():
    runs = {s: ppo(s) for s in OLD + NEW}
    base = runs["h100-kl-base"]
    print(f"## KL to the SFT policy, fifth try: exact KL loss term + held-out projection + pull-back steps (`{NEW[0]}/`, `{NEW[1]}/`), "
          f"{card(NEW[1])} — the bound held: 0 of {len(runs[NEW[0]])} and 0 of {len(runs[NEW[1]])} iterations over 1.5 × target "
          f"(the previous controller on the same card: {sum(1 for x in base if x['kl'] > BOUND)} of {len(base)})\n")
    print("The same contract run as `h200-kl/` (`gpu-run.sh train`: base 8 × 512, SFT 150 steps, PPO iterations 151..230 of 256 episodes, "
          f"train.lr 1e-5, epochs 4, minibatch 32, kl_coef starting at the config's 0.02, target_kl {TARGET}, bound {BOUND:.3f}), the same seed and "
          "data (the dev profile's `balanced_pool`, `shadow_set`, `weights` rebuilt by rc1-build), on one NVIDIA H100 80GB HBM3 "
          "(`card.txt` of each run); the card was not an H200, so the controller on main before this change ran again in the same session, on "
          "the same warm machine (`h100-kl-base/`). Changes (ppo.py): (1) the KL to the SFT policy is a loss term, kl_coef × the exact "
          "KL(π‖π_SFT) per policy token summed over the whole vocabulary (8268 tokens) from the two models' logits at the same positions, and "
          "no longer a penalty in the per-token reward: its gradient reaches the policy directly, not through the value head; (2) 32 of the 256 "
          "episodes (ppo.kl_holdout 0.125) are not trained on, and before every minibatch step the next rollout's KL is projected from their "
          "exact KL now against at rollout; (3) a minibatch whose projection is over target_kl (not the bound) takes a pull-back step, the exact "
          "KL alone, instead of the PPO loss, the first minibatch of an iteration included; no early stop, every minibatch steps; (4) the "
          "Ziegler coefficient (±20 % an iteration at most) now scales the loss term and steps on the exact rollout KL, within [1e-4, 10]. "
          "target_kl, the bound and the starting coefficient are the config's. `kl` below is, as in every earlier run, the per-token mean of "
          "log π − log π_SFT over the rollout's sampled policy tokens; `kl_exact` the same tokens' exact per-position KL.\n")
    if len(runs[NEW[0]]) < 80:
        print(f"`{NEW[0]}/` ran under a 470-s deadline (`DEADLINE=470`, the earlier runs' budget) and was stopped after step "
              f"{runs[NEW[0]][-1]['step']} (SIGTERM, checkpoint, exit 143; its held-out \"after\" is that checkpoint, evaluated by eval_ckpt.py): "
              f"an iteration takes ~1.8 × as long as before (below). `{NEW[1]}/` is the same code and command with `DEADLINE=545`: all 80 "
              "iterations; its SFT phase is not bit-identical to the first (compiled, without --deterministic), so the two are two samples of "
              "the same controller.\n")
    print("| run | card | iterations over 1.5 × target (0.045) | KL range, whole PPO phase | kl_coef range | pull-back steps | minibatch updates "
          "done / possible | next-rollout KL, held-out projection: mean abs error (mean signed) | reward, first 10 / last 10 | success (sampled), "
          "first 10 / last 10 | s / iteration (median) | generation share (median) |")
    print("|---|---|---|---|---|---|---|---|---|---|---|---|")
    label = {"h200-kl": "`h200-kl/` (main before: Ziegler ±20 % on the rollout KL in the reward, in-sample early stop)",
             "h100-kl-base": "`h100-kl-base/` (the same code as `h200-kl/`, this session)",
             "h100-klloss": f"`h100-klloss/` (this change; steps 151..{runs['h100-klloss'][-1]['step']})",
             "h100-klloss2": "`h100-klloss2/` (this change, again)"}
    for s in OLD + NEW:
        r = runs[s]
        new = "pullbacks" in r[0]
        print(f"| {label[s]} | {card(s)} | {sum(1 for x in r if x['kl'] > BOUND)} of {len(r)} | {rng(r, 'kl')} | {rng(r, 'kl_coef')} | "
              f"{sum(x['pullbacks'] for x in r) if new else 'n/a (early stop)'} | {sum(x['updates'] for x in r)} / {sum(x['updates_max'] for x in r)} | "
              f"{projection_error(r) if new else 'n/a'} | {first_last(r, 'reward')} | {first_last(r, 'success')} | {st.median(x['step_s'] for x in r):.2f} | "
              f"{st.median(x['gen_share'] for x in r):.3f} |")
    for s in NEW:
        r = runs[s]
        print(f"\nPer 10 iterations, `{s}/metrics_main.jsonl` (minibatch steps per iteration: 4 epochs × 7 minibatches of the 224 trained "
              "episodes = 28, each a PPO step or a pull-back step; `kl_coef` the loss term's coefficient in that iteration; the projection "
              "after the iteration's last step):\n")
        print("| iterations | KL (min .. max) | exact KL (min .. max) | kl_coef (min .. max) | pull-back steps (min .. max) | projected next KL "
              "(median) | over the bound |")
        print("|---|---|---|---|---|---|---|")
        for i in range(0, len(r), 10):
            c = r[i: i + 10]
            print(f"| {c[0]['step']}..{c[-1]['step']} | {rng(c, 'kl')} | {rng(c, 'kl_exact')} | {rng(c, 'kl_coef')} | "
                  f"{min(x['pullbacks'] for x in c)} .. {max(x['pullbacks'] for x in c)} | {st.median(x['kl_projected'] for x in c):.4f} | "
                  f"{sum(1 for x in c if x['kl'] > BOUND)} |")
    for s in NEW + ("h100-kl-base",):
        ev = js(f"{s}/evals.json")
        print(f"\n### Held-out shadow set, after SFT (step 150) vs after PPO (step {ev['final_step']}), `{s}/`: 245 scenarios, 245 source questions\n")
        print("Intervals (95 % percentile bootstrap over source questions, paired), negative control (PPO and SFT swapped at random per "
              "source question) as in the sections above; 22 comparisons, uncorrected.\n")
        print("#### Greedy decoding, one episode per scenario\n")
        eval_table(ev, True)
        print("\n#### Sampled (temperature 1), 4 episodes per scenario\n")
        eval_table(ev, False)


if __name__ == "__main__":
    main()
