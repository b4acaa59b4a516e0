#!/usr/bin/env python3
"""Held-out evaluation of a trainer checkpoint, outside a training run: the episodes train.py's
`evaluate` plays (one greedy episode per scenario and --eval-samples sampled ones, tools executed),
written as a JSON list of per-episode records (the format of eval_sft.json / eval_final.json).
Used by gpu-run.sh to evaluate the last complete checkpoint of a run that a deadline stopped.
Usage: eval_ckpt.py STEP_DIR HELD.jsonl WEIGHTS.json OUT.json [--eval-samples K] [--gen-batch N]
       [--max-new T] [--max-segments S] [--graphs] [--seed SEED]
"""
import argparse
import json
import os
import sys

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
import torch  # noqa: E402

import ckpt  # noqa: E402
import train  # noqa: E402
from model import PolicyLM  # noqa: E402
from sampler import Sampler  # noqa: E402
from vocab import Vocab  # noqa: E402
from standalone import TRAIN  # noqa: E402


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("step_dir")
    ap.add_argument("held")
    ap.add_argument("weights")
    ap.add_argument("out")
    ap.add_argument("--eval-samples", type=int, default=0)
    ap.add_argument("--gen-batch", type=int, default=256)
    ap.add_argument("--max-new", type=int, default=96)
    ap.add_argument("--max-segments", type=int, default=8)
    ap.add_argument("--graphs", action="store_true")
    ap.add_argument("--seed", type=int, default=TRAIN["seed"])
    a = ap.parse_args()
    if not os.path.exists(os.path.join(a.step_dir, "COMPLETE")):
        sys.exit(f"eval_ckpt: {a.step_dir}: no COMPLETE marker (not a complete checkpoint)")
    st = ckpt.load_state(a.step_dir)
    vocab = Vocab.from_json(open(os.path.join(a.step_dir, "vocab.json"), encoding="utf-8").read())
    dev = torch.device("cuda" if torch.cuda.is_available() else "cpu")
    dtype = torch.bfloat16 if dev.type == "cuda" else torch.float32
    model = PolicyLM(st["model"])
    model.load_state_dict(ckpt.load_safetensors(os.path.join(a.step_dir, "model.safetensors")))
    model = model.to(dev).to(dtype).requires_grad_(False).eval()
    held = train.load_jsonl(a.held)
    args = argparse.Namespace(gen_batch=a.gen_batch, max_new=a.max_new, max_segments=a.max_segments, eval_samples=a.eval_samples, temperature=1.0,
                              weights=json.load(open(a.weights, encoding="utf-8"))["weights"], reward=TRAIN["reward"])
    sampler = Sampler(model, dtype, {vocab.end, vocab.eos, vocab.call}, vocab.pad, a.graphs)
    res = train.evaluate(model, sampler, vocab, held, args, dev, a.seed)
    json.dump(res, open(a.out, "w"), sort_keys=True)
    g = [r for r in res if r["mode"] == "greedy"]
    print(f"eval_ckpt: {a.step_dir} (step {st['step']}, {st['phase']}): greedy success {sum(r['success'] for r in g) / len(g):.4f} on {len(g)} scenarios, {len(res)} episodes")


if __name__ == "__main__":
    main()
