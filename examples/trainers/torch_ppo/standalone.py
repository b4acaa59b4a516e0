#!/usr/bin/env python3
"""Runs train.py standalone under the `command` contract, the way rc1-build's engine would: writes
the effective config JSON (the dev profile's train section, resolved as lib/train/config.ts does)
and the inputs JSON, sets RC1_* and appends --config/--checkpoint-dir/--metrics[/--resume-from].
For machines without Node (the GPU machine). Modes:
  run     one run of `--steps` steps into <out>/run/
  resume  the resume check: a straight run into <out>/straight/, and a run into <out>/cut/ that gets
          SIGTERM once its metrics reach step --cut, must exit 143 with a complete checkpoint at its
          last step, and is resumed from it; prints the metrics of every step after the cut side by
          side and whether the final weights are byte-identical.
  --deadline-s S (run): SIGTERM the trainer S seconds after its start if it is still running (it
          checkpoints its last finished step and exits 143; standalone then exits 0 and says so).
Usage: standalone.py MODE OUT --steps N --pool P --weights W [--cut K] [--deadline-s S] -- <train.py arguments>
"""
import argparse
import filecmp
import json
import os
import signal
import subprocess
import sys
import time

HERE = os.path.dirname(os.path.abspath(__file__))
TRAIN = {  # configs/train.yaml + configs/ppo_scale.yaml + the dev profile + configs/evaluation.yaml overclar, resolved,
    # except lr: the prod profile's 1e-5 (the dev profile's 3e-4 suits the built-in MLP; it wrecks a language model's PPO)
    "engine": "command", "strategy": "ppo", "seed": 20250820, "lr": 1.0e-5,
    "lr_schedule": {"kind": "constant", "warmup_steps": 0, "min_ratio": 1}, "adam": {"beta1": 0.9, "beta2": 0.999, "eps": 1.0e-8},
    "max_grad_norm": 0.5,
    "ppo": {"clip": 0.2, "kl_coef": 0.02, "target_kl": 0.03, "batch": 32, "rollout_len": 128, "adaptive_kl": True, "kl_horizon": 10000, "kl_stop": 1.5,
            "epochs": 4, "gamma": 1.0, "lam": 0.95, "vf_coef": 0.5, "ent_coef": 0.01},
    "sampling": {"enabled": True, "by_difficulty": {"easy": 0.2, "medium": 0.4, "hard": 0.4}, "low_perf_cap": 0.3, "success_ema": 0.05,
                 "seed_ratio_schedule": [{"step": 0, "ratio": 0.5}]},
    "reward": {"use_overclar_penalty": True, "alpha": 0.07, "cap": 3, "beta": 0.05},
    "env": {"max_turns": 10, "holdout": 0.2}, "checkpoint": {"every": 20, "keep_last": 3},
}


def launch(out, a, extra, resume=None):
    ck, metrics = os.path.join(out, "checkpoints"), os.path.join(out, "metrics.jsonl")
    os.makedirs(ck, exist_ok=True)
    train = dict(TRAIN, steps=a.steps, checkpoint={"every": a.every, "keep_last": 3})
    if a.epochs:
        train["ppo"] = dict(train["ppo"], epochs=a.epochs)
    start = int(resume.rsplit("_", 1)[1]) if resume else 0
    cfg = {"contract": 1, "train": train, "ppo": {"base_model": None, "seeds": [train["seed"]], "target_kl": train["ppo"]["target_kl"], "finetune": {"method": "full"}},
           "overclar": {"alpha": train["reward"]["alpha"], "cap": train["reward"]["cap"]}, "config_hash": "standalone", "profile": "dev", "start_step": start}
    json.dump(cfg, open(os.path.join(out, "config_effective.json"), "w"), indent=2)
    json.dump({"scenarios": [a.pool], "weights": [a.weights]}, open(os.path.join(out, "inputs.json"), "w"))
    open(metrics, "a").close()
    env = dict(os.environ, RC1_CONTRACT="1", RC1_CONFIG_JSON=os.path.join(out, "config_effective.json"), RC1_CONFIG="",
               RC1_CHECKPOINT_DIR=ck, RC1_METRICS=metrics, RC1_RESUME_FROM=resume or "", RC1_START_STEP=str(start),
               RC1_TOTAL_STEPS=str(a.steps), RC1_INPUTS_JSON=os.path.join(out, "inputs.json"), RC1_SCENARIOS=a.pool,
               RC1_PARENT_PID=str(os.getpid()), PYTHONUNBUFFERED="1")
    argv = [sys.executable, os.path.join(HERE, "train.py"), *extra, "--checkpoint-dir", ck, "--metrics", metrics] + (["--resume-from", resume] if resume else [])
    log = open(os.path.join(out, "train.log"), "a")
    return subprocess.Popen(argv, env=env, stdout=log, stderr=subprocess.STDOUT, start_new_session=True), metrics, ck


def steps_in(metrics):
    with open(metrics) as f:
        return [json.loads(line) for line in f if line.endswith("\n")]


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("mode", choices=["run", "resume"])
    ap.add_argument("out")
    ap.add_argument("--steps", type=int, required=True)
    ap.add_argument("--every", type=int, default=20)
    ap.add_argument("--epochs", type=int, default=0)
    ap.add_argument("--pool", required=True)
    ap.add_argument("--weights", required=True)
    ap.add_argument("--cut", type=int, default=0)
    ap.add_argument("--deadline-s", type=float, default=0)
    a, extra = ap.parse_known_args()
    extra = [x for x in extra if x != "--"]
    a.pool, a.weights = os.path.abspath(a.pool), os.path.abspath(a.weights)
    if a.mode == "run":
        p, _, _ = launch(os.path.join(a.out, "run"), a, extra)
        if a.deadline_s > 0:
            try:
                sys.exit(p.wait(timeout=a.deadline_s))
            except subprocess.TimeoutExpired:
                os.killpg(p.pid, signal.SIGTERM)
                rc = p.wait()
                print(f"standalone: deadline {a.deadline_s:.0f} s: SIGTERM, the trainer exited {rc}")
                sys.exit(0 if rc == 143 else rc)
        sys.exit(p.wait())
    p, m_straight, ck_s = launch(os.path.join(a.out, "straight"), a, extra)
    if p.wait() != 0:
        sys.exit(f"standalone: the straight run failed: see {a.out}/straight/train.log")
    p, m_cut, ck_c = launch(os.path.join(a.out, "cut"), a, extra)
    while p.poll() is None and len(steps_in(m_cut)) < a.cut:
        time.sleep(0.05)
    os.killpg(p.pid, signal.SIGTERM)
    rc = p.wait()
    done = steps_in(m_cut)
    last = done[-1]["step"]
    d = os.path.join(ck_c, f"step_{last:05d}")
    print(f"SIGTERM after step {a.cut}: exit {rc}, last metrics step {last}, checkpoint {os.path.basename(d)} complete: {os.path.exists(os.path.join(d, 'COMPLETE'))}")
    if rc != 143 or not os.path.exists(os.path.join(d, "COMPLETE")):
        sys.exit("standalone: the interrupted run did not checkpoint and exit 143")
    p, _, _ = launch(os.path.join(a.out, "cut"), a, extra, resume=d)
    if p.wait() != 0:
        sys.exit(f"standalone: the resumed run failed: see {a.out}/cut/train.log")
    s = {x["step"]: x for x in steps_in(m_straight)}
    volatile = {"step_s", "throughput", "gen_tokens_per_s", "gen_share", "mfu_flops_per_s", "gpu_mem_gb"}
    rows, exact = [], True
    for x in steps_in(m_cut)[len(done):]:
        y = s[x["step"]]
        diff = {k: abs(x[k] - y[k]) for k in ("loss", "reward", "kl") if x[k] != y[k]}
        same = all(x[k] == y[k] for k in x if k not in volatile)
        exact &= same
        rows.append({"step": x["step"], "phase": x["phase"], "loss_straight": y["loss"], "loss_resumed": x["loss"], "reward_straight": y["reward"],
                     "reward_resumed": x["reward"], "kl_straight": y["kl"], "kl_resumed": x["kl"], "identical": same, "abs_diff": diff})
    # the two runs were separate processes from step 1: their steps up to the cut show whether the run
    # itself is reproducible (a difference there is not the resume's)
    before = [x for x in done if x["step"] in s]
    first_diff = next((x["step"] for x in before if any(x[k] != s[x["step"]][k] for k in x if k not in volatile)), None)
    final = f"step_{a.steps:05d}"
    weights_same = filecmp.cmp(os.path.join(ck_s, final, "model.safetensors"), os.path.join(ck_c, final, "model.safetensors"), shallow=False)
    report = {"cut_after": a.cut, "exit_on_sigterm": rc, "resumed_from": os.path.basename(d), "steps_after_resume": rows,
              "metrics_identical": exact, "final_weights_identical": weights_same,
              "before_cut": {"steps": len(before), "first_different_step": first_diff}}
    json.dump(report, open(os.path.join(a.out, "resume_report.json"), "w"), indent=2)
    for r in rows:
        print(f"step {r['step']:>4} {r['phase']}: loss {r['loss_straight']:.6f} / {r['loss_resumed']:.6f}  reward {r['reward_straight']:.6f} / {r['reward_resumed']:.6f}  kl {r['kl_straight']:.6g} / {r['kl_resumed']:.6g}  {'identical' if r['identical'] else 'DIFFERENT ' + json.dumps(r['abs_diff'])}")
    print(f"resume: metrics identical {exact}; final weights byte-identical {weights_same}; steps 1..{len(before)} of the two runs "
          + ("identical" if first_diff is None else f"first differ at step {first_diff}"))


if __name__ == "__main__":
    main()
