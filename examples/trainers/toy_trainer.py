#!/usr/bin/env python3
"""A reference external trainer for rc1-build's `command` engine (pure Python 3 standard library).

What it trains, for real but tiny: a logistic "ask for clarification?" policy over the scenarios'
user turns (hashed bag of words, 256 features + bias), by policy gradient (REINFORCE with a moving
baseline) and a KL penalty to the reference policy (the initial weights, p(ask) = 0.5). The reward
of a decision is 1 when it matches the scenario's `needs_clarification`, else 0. It is a worked
example of the contract, not a dialogue model: a real trainer (TRL PPO + QLoRA on Qwen3-4B) plugs in
the same way, see the contract in lib/train/engines/command.ts.

The contract, as this script honours it:
  settings train.steps, train.checkpoint.every, train.ppo.batch; train.seed seeds its one RNG (the
           same seed gives the same run, another seed another run); train.ppo.target_kl: the KL
           coefficient (from train.ppo.kl_coef) adapts toward it (train.ppo.adaptive_kl,
           kl_horizon), and an update that would take the batch's KL to the reference above
           1.5 x target_kl is halved until it does not (an early stop per update). It prints the
           settings it ignores (it has no base model, LoRA or QLoRA: it is a logistic model).
  inputs   RC1_CONFIG_JSON (every setting as JSON: {"contract", "train": {...}, "ppo": {...},
           "overclar", "config_hash", "profile", "start_step"}),
           RC1_SCENARIOS (training scenarios, JSONL), RC1_CHECKPOINT_DIR, RC1_METRICS,
           RC1_RESUME_FROM (a complete step dir, or empty), RC1_PARENT_PID; the same paths also
           arrive as --config / --checkpoint-dir / --metrics / --resume-from (argparse below).
  outputs  one JSON line per step appended to RC1_METRICS: step, loss, reward, kl (+ optional
           fields); step_XXXXX/ under RC1_CHECKPOINT_DIR every train.checkpoint.every steps and at
           the last step, each closed by a COMPLETE file written last (atomically, by rename).
  resume   weights, baseline and the RNG state come back from RC1_RESUME_FROM; steps continue.
  signals  SIGTERM / SIGINT: finish the current step, checkpoint it, exit 143. The trainer also
           exits when its parent (rc1-build) is gone, so a killed build leaves no orphan writing.
"""
import argparse
import hashlib
import json
import math
import os
import random
import re
import signal
import sys
import time

DIM = 256
WORD = re.compile(r"[a-z0-9']+")


def features(text):
    """Hashed bag of words (presence), L2-normalised, plus a bias feature at index DIM."""
    idx = sorted({int(hashlib.md5(w.encode()).hexdigest()[:8], 16) % DIM for w in WORD.findall(text.lower())})
    scale = 1.0 / math.sqrt(len(idx)) if idx else 0.0
    return [(i, scale) for i in idx] + [(DIM, 1.0)]


def load_scenarios(path):
    out = []
    with open(path, encoding="utf-8") as f:
        for n, line in enumerate(f, 1):
            if not line.strip():
                continue
            rec = json.loads(line)
            text = "\n".join(m["content"] for m in rec["messages"])
            out.append((features(text), 1 if rec["needs_clarification"] else 0))
    if not out:
        sys.exit(f"toy_trainer: {path}: no scenarios")
    return out


def sigmoid(z):
    return 1.0 / (1.0 + math.exp(-z)) if z >= 0 else math.exp(z) / (1.0 + math.exp(z))


def write_json_atomic(path, obj):
    tmp = path + ".tmp"
    with open(tmp, "w", encoding="utf-8") as f:
        json.dump(obj, f, sort_keys=True)
        f.flush()
        os.fsync(f.fileno())
    os.replace(tmp, path)


def save_checkpoint(ckpt_dir, step, w, baseline, kl_coef, rng, config_hash, seed):
    d = os.path.join(ckpt_dir, f"step_{step:05d}")
    os.makedirs(d, exist_ok=True)
    write_json_atomic(os.path.join(d, "weights.json"), {"dim": DIM, "w": w})
    write_json_atomic(os.path.join(d, "optimizer.json"), {"baseline": baseline, "kl_coef": kl_coef})
    state = rng.getstate()
    write_json_atomic(os.path.join(d, "rng.json"), {"version": state[0], "state": list(state[1]), "gauss": state[2]})
    write_json_atomic(os.path.join(d, "trainer_state.json"), {"step": step, "config_hash": config_hash, "seed": seed})
    write_json_atomic(os.path.join(d, "COMPLETE"), {"step": step})  # last: marks the checkpoint complete


def load_checkpoint(d):
    with open(os.path.join(d, "weights.json"), encoding="utf-8") as f:
        w = json.load(f)["w"]
    with open(os.path.join(d, "optimizer.json"), encoding="utf-8") as f:
        opt = json.load(f)
    with open(os.path.join(d, "rng.json"), encoding="utf-8") as f:
        r = json.load(f)
    with open(os.path.join(d, "trainer_state.json"), encoding="utf-8") as f:
        state = json.load(f)
    rng = random.Random()
    rng.setstate((r["version"], tuple(r["state"]), r["gauss"]))
    return w, opt["baseline"], opt["kl_coef"], rng, state["step"], state["seed"]


def batch_kl(w, xs):
    """Mean KL(pi_w || reference) over feature vectors, the reference being p(ask) = 0.5."""
    total = 0.0
    for x in xs:
        p = min(max(sigmoid(sum(w[i] * v for i, v in x)), 1e-12), 1 - 1e-12)
        total += p * math.log(2 * p) + (1 - p) * math.log(2 * (1 - p))
    return total / max(len(xs), 1)


IGNORED = ["ppo.base_model", "ppo.finetune (method, lora, qlora)", "train.lr (see --lr)", "train.lr_schedule", "train.adam",
           "train.ppo.clip", "train.ppo.epochs", "train.ppo.gamma", "train.ppo.lam", "train.ppo.vf_coef", "train.ppo.ent_coef",
           "train.ppo.rollout_len", "train.reward", "train.sampling", "overclar"]


def main():
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--config", default=os.environ.get("RC1_CONFIG"))
    ap.add_argument("--checkpoint-dir", default=os.environ.get("RC1_CHECKPOINT_DIR"))
    ap.add_argument("--metrics", default=os.environ.get("RC1_METRICS"))
    ap.add_argument("--resume-from", default=os.environ.get("RC1_RESUME_FROM") or None)
    ap.add_argument("--lr", type=float, default=0.5, help="SGD step size (the toy's own; train.lr suits a 4B model)")
    ap.add_argument("--step-delay", type=float, default=float(os.environ.get("TOY_STEP_DELAY", "0")),
                    help="seconds to sleep per step (default $TOY_STEP_DELAY or 0; tests use it to interrupt a run)")
    args = ap.parse_args()

    with open(os.environ["RC1_CONFIG_JSON"], encoding="utf-8") as f:
        effective = json.load(f)
    train = effective["train"]
    total, every, batch = train["steps"], train["checkpoint"]["every"], train["ppo"]["batch"]
    seed, target_kl = train["seed"], train["ppo"]["target_kl"]
    adaptive, horizon = train["ppo"]["adaptive_kl"], train["ppo"]["kl_horizon"]
    data = load_scenarios(os.environ["RC1_SCENARIOS"])
    parent = int(os.environ.get("RC1_PARENT_PID", "0"))

    stop = {"signal": None}

    def on_signal(signum, _frame):
        stop["signal"] = signum

    signal.signal(signal.SIGTERM, on_signal)
    signal.signal(signal.SIGINT, on_signal)

    if args.resume_from:
        w, baseline, kl_coef, rng, step, was = load_checkpoint(args.resume_from)
        if was != seed:
            sys.exit(f"toy_trainer: {args.resume_from} was trained with seed {was}, this run's seed (train.seed) is {seed}")
        print(f"toy_trainer: resumed from {args.resume_from} at step {step}, seed {seed}", flush=True)
    else:
        w, baseline, kl_coef, rng, step = [0.0] * (DIM + 1), 0.5, train["ppo"]["kl_coef"], random.Random(seed), 0
        print(f"toy_trainer: fresh start, seed {seed} (of ppo.seeds {(effective.get('ppo') or {}).get('seeds')}), "
              f"target_kl {target_kl}, {len(data)} scenarios", flush=True)
    print(f"toy_trainer: ignores {', '.join(IGNORED)}", flush=True)

    with open(args.metrics, "a", encoding="utf-8") as metrics:
        while step < total:
            t0 = time.perf_counter()
            step += 1
            grad = [0.0] * (DIM + 1)
            reward = kl = ent = surrogate = 0.0
            xs = []
            for _ in range(batch):
                x, label = data[rng.randrange(len(data))]
                xs.append(x)
                p = sigmoid(sum(w[i] * v for i, v in x))
                ask = 1 if rng.random() < p else 0
                r = 1.0 if ask == label else 0.0
                adv = r - baseline
                # d/dz log pi(a|x) = a - p;  KL(pi || 0.5) = p log 2p + (1-p) log 2(1-p);  dKL/dz = p(1-p) logit(p)
                pc = min(max(p, 1e-12), 1 - 1e-12)
                logit = math.log(pc / (1 - pc))
                g = adv * (ask - p) - kl_coef * p * (1 - p) * logit
                for i, v in x:
                    grad[i] += g * v / batch
                reward += r / batch
                kl += (pc * math.log(2 * pc) + (1 - pc) * math.log(2 * (1 - pc))) / batch
                ent += -(pc * math.log(pc) + (1 - pc) * math.log(1 - pc)) / batch
                surrogate += -adv * math.log(pc if ask else 1 - pc) / batch
            # Early stop per update: halve the step while it would take the batch's KL above 1.5 x target_kl.
            scale, stopped = args.lr, 0
            while True:
                cand = [w[i] + scale * grad[i] for i in range(DIM + 1)]
                if batch_kl(cand, xs) <= 1.5 * target_kl or stopped >= 20:
                    break
                scale, stopped = scale / 2, stopped + 1
            w = cand
            coef_step = kl_coef
            if adaptive:  # the proportional controller of Ziegler et al. (2019), toward target_kl
                kl_coef *= 1 + max(-0.2, min(0.2, kl / target_kl - 1)) * batch / horizon
            baseline = 0.9 * baseline + 0.1 * reward
            if args.step_delay:
                time.sleep(args.step_delay)
            dt = max(time.perf_counter() - t0, 1e-9)
            line = {"step": step, "loss": surrogate + coef_step * kl, "reward": reward, "kl": kl, "entropy": ent,
                    "lr": scale, "kl_coef": coef_step, "success": reward, "throughput": batch / dt,
                    "backend": "python-stdlib"}
            metrics.write(json.dumps(line, sort_keys=True) + "\n")
            metrics.flush()
            if step % every == 0 or step == total or stop["signal"] is not None:
                save_checkpoint(args.checkpoint_dir, step, w, baseline, kl_coef, rng, effective["config_hash"], seed)
            if stop["signal"] is not None:
                print(f"toy_trainer: signal {stop['signal']}: stopped after step {step}", flush=True)
                sys.exit(143)
            if parent and os.getppid() != parent:
                print("toy_trainer: rc1-build is gone; stopping", flush=True)
                sys.exit(1)
    print(f"toy_trainer: done at step {step}, reward {reward:.3f}", flush=True)


if __name__ == "__main__":
    main()
