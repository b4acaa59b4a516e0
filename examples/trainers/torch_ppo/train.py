#!/usr/bin/env python3
"""A PyTorch trainer for rc1-build's `command` engine: SFT then token-level PPO of a small causal LM
trained from scratch on the balanced pool (README.md beside this file says what it is and is not).

Steps 1..--sft-steps are SFT (next-token loss on the pool's reference trajectories, packed into
rows of --seq tokens); the remaining steps up to train.steps are PPO iterations (ppo.py) with
RC1's reward (episodes.py), KL to the frozen SFT policy held toward train.ppo.target_kl. Contract:
RC1_CONFIG_JSON, RC1_SCENARIOS, RC1_INPUTS_JSON (weights; optional shadow), RC1_CHECKPOINT_DIR,
RC1_METRICS, RC1_RESUME_FROM, RC1_PARENT_PID; one metrics line per step; step_XXXXX/ checkpoints
closed by COMPLETE (ckpt.py); SIGTERM/SIGINT: checkpoint the finished step and exit 143.
Every random draw is a function of (train.seed, step) or of a checkpointed RNG, so a resumed run
repeats an uninterrupted one (bit for bit on CPU; on CUDA with --deterministic, see README.md).
"""
import argparse
import contextlib
import copy
import json
import math
import os
import random
import signal
import sys
import time

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
import numpy as np  # noqa: E402
import torch  # noqa: E402

import ckpt  # noqa: E402
import model as model_mod  # noqa: E402
import episodes as E  # noqa: E402
import ppo  # noqa: E402
from model import PolicyLM, count_params, create_block_mask, doc_block_mask, doc_mask, doc_positions, train_flops  # noqa: E402
from sampler import Sampler  # noqa: E402
from vocab import Vocab  # noqa: E402

# Settings of RC1_CONFIG_JSON this trainer does not honour (the contract asks that they be named).
IGNORED = ["ppo.base_model (the start is --init-from DIR, else from scratch)", "ppo.finetune (full fine-tuning of a small model: no LoRA / QLoRA)",
           "train.lr_schedule (SFT: warmup + cosine from --sft-lr; PPO: constant train.lr)", "train.ppo.rollout_len (episodes per iteration: --gen-batch)",
           "train.sampling.seed_ratio_schedule, low_perf_cap, success_ema (draws by difficulty weights only)", "train.env", "train.model (see --size)",
           "train.tfjs", "train.eval (held-out eval after SFT and at the end, from --eval-file or the `shadow` input)",
           "train.checkpoint.keep_last (rc1-build rotates)",
           "train.ppo.kl_stop (the KL hold aims at target_kl itself: a minibatch whose projected KL is over it takes a pull-back step, ppo.py)"]

SIZES = {  # hidden, layers, heads, kv_heads, ffn
    "tiny": (64, 2, 4, 2, 176), "small": (256, 4, 4, 2, 704), "base": (512, 8, 8, 4, 1408), "350m": (1024, 24, 16, 8, 3072),
    "350w": (1536, 12, 12, 4, 4096)}  # 350w: a ~350 M model of 12 wider layers (head_dim 128): larger matmuls than 350m's 24 x 1024


def parse_args():
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--config", default=os.environ.get("RC1_CONFIG"))
    ap.add_argument("--checkpoint-dir", default=os.environ.get("RC1_CHECKPOINT_DIR"))
    ap.add_argument("--metrics", default=os.environ.get("RC1_METRICS"))
    ap.add_argument("--resume-from", default=os.environ.get("RC1_RESUME_FROM") or None)
    ap.add_argument("--size", choices=sorted(SIZES), default="small")
    ap.add_argument("--init-from", default=None, help="a Hugging Face Qwen3 directory to start from instead of from scratch (pretrained.py); --size and --vocab-size are then unused")
    ap.add_argument("--vocab-size", type=int, default=8000, help="word pieces taken from the pool (plus 266 specials and bytes)")
    ap.add_argument("--sft-steps", type=int, default=100)
    ap.add_argument("--sft-lr", type=float, default=1e-3)
    ap.add_argument("--sft-rows", type=int, default=16, help="packed rows per SFT step")
    ap.add_argument("--seq", type=int, default=512, help="tokens per packed SFT row")
    ap.add_argument("--gen-batch", type=int, default=64, help="episodes per PPO iteration")
    ap.add_argument("--max-new", type=int, default=96, help="tokens per generated segment (a segment ends at a tool call, a question, the answer or here)")
    ap.add_argument("--max-segments", type=int, default=8, help="generated segments per episode (configs/scoring.yaml rollouts.max_steps is 8); an episode without an answer by then has none")
    ap.add_argument("--temperature", type=float, default=1.0)
    ap.add_argument("--eval-file", default=None, help="held-out scenarios (JSONL) evaluated greedily after SFT and at the end")
    ap.add_argument("--eval-max", type=int, default=0, help="evaluate only the first N held-out scenarios (0: all)")
    ap.add_argument("--eval-samples", type=int, default=0, help="sampled episodes per held-out scenario (temperature 1, seeded by (seed, round)) besides the greedy one")
    ap.add_argument("--graphs", action="store_true", help="CUDA graphs for the decode step")
    ap.add_argument("--compile", action="store_true", help="torch.compile the SFT forward/backward")
    ap.add_argument("--deterministic", action="store_true", help="deterministic CUDA kernels where PyTorch has them")
    ap.add_argument("--dense-mask", action="store_true", help="the dense document mask even when compiled on CUDA (instead of FlexAttention)")
    return ap.parse_args()


def load_jsonl(path):
    with open(path, encoding="utf-8") as f:
        out = [json.loads(line) for line in f if line.strip()]
    for i, sc in enumerate(out):
        for k in ("task", "messages", "gold_answer", "needs_clarification", "reference"):
            if k not in sc:
                sys.exit(f"torch_ppo: {path}:{i + 1}: {k}: missing (expected a scenario of the balanced pool)")
        sc["_ref"] = E.reference_stats(sc)
    if not out:
        sys.exit(f"torch_ppo: {path}: no scenarios")
    return out


def encode_doc(vocab, sc, seq):
    """(ids, trained) of one SFT document: the prompt and the reference trajectory, tool outputs
    marked untrained (the environment writes them, never the model), cut to seq tokens."""
    ids = vocab.encode(E.render_prompt(sc))
    trained = [True] * len(ids)
    for text, env in E.render_reference_parts(sc):
        t = vocab.encode(text)
        ids += t
        trained += [not env] * len(t)
    return ids[: seq - 1] + [vocab.eos], trained[: seq - 1] + [True]


class Packer:
    """The packed SFT rows, a pure function of (docs, seq, seed): epoch e takes the documents in a
    permutation seeded by (seed, e) and puts each, whole, into the first row of that epoch with room
    for it (first fit); rows are padded to seq. Rows of the run are the rows of epoch 0, then
    epoch 1, ...; step s (1-based) takes rows (s-1)*n .. s*n-1. A document never spans two rows, and
    row_tensors() gives the document index of every token so attention stays inside it."""

    def __init__(self, docs, seq, seed, pad):
        self.docs, self.seq, self.seed, self.pad = docs, seq, seed, pad
        self.epochs = {}  # e -> list of rows (lists of doc indices), the two newest epochs used
        self.count = {}  # e -> number of rows of epoch e

    def epoch(self, e):
        if e not in self.epochs:
            order = list(range(len(self.docs)))
            random.Random(f"{self.seed}:sft:{e}").shuffle(order)
            rows, room = [], []
            for i in order:
                n = len(self.docs[i][0])
                for r in range(max(0, len(rows) - 64), len(rows)):  # first fit among the 64 newest rows
                    if room[r] >= n:
                        rows[r].append(i)
                        room[r] -= n
                        break
                else:
                    rows.append([i])
                    room.append(self.seq - n)
            self.epochs = {k: v for k, v in self.epochs.items() if k >= e - 1}
            self.epochs[e] = rows
            self.count[e] = len(rows)
        return self.epochs[e]

    def rows_of_step(self, step, n):
        """Doc-index lists of the n rows of SFT step `step`."""
        first, out, e, base = (step - 1) * n, [], 0, 0
        while len(out) < n:
            cnt = self.count[e] if e in self.count else len(self.epoch(e))
            lo = first + len(out) - base
            if lo < cnt:
                rows = self.epoch(e)
                out += rows[lo: lo + n - len(out)]
            base += cnt
            e += 1
        return out

    def tensors(self, step, n):
        """ids, labels (-100: no loss), doc index per token (padding: its own index), doc lengths."""
        seq = self.seq
        ids = torch.full((n, seq), self.pad, dtype=torch.long)
        labels = torch.full((n, seq), -100, dtype=torch.long)
        doc = torch.zeros((n, seq), dtype=torch.long)
        lens = []
        for r, row in enumerate(self.rows_of_step(step, n)):
            at = 0
            for j, i in enumerate(row):
                d_ids, trained = self.docs[i]
                k = len(d_ids)
                ids[r, at: at + k] = torch.tensor(d_ids)
                # position t predicts token t+1 of the same document, when that token is trained
                labels[r, at: at + k - 1] = torch.tensor([x if tr else -100 for x, tr in zip(d_ids[1:], trained[1:])])
                doc[r, at: at + k] = j
                at += k
                lens.append(k)
            doc[r, at:] = len(row)
        return ids, labels, doc, lens


def ppo_batch(pool, step, n, seed, cfg):
    """Scenarios of PPO step `step`: by difficulty weights when train.sampling.enabled, else uniform."""
    rng = random.Random(f"{seed}:ppo:{step}")
    s = cfg.get("sampling", {})
    if not s.get("enabled"):
        return [pool[rng.randrange(len(pool))] for _ in range(n)]
    w = s["by_difficulty"]
    weights = [w.get(sc.get("difficulty") or "medium", 0.0) for sc in pool]
    return rng.choices(pool, weights=weights, k=n)


def evaluate(gen_model, sampler, vocab, held, args, dev, seed):
    """Held-out episodes: one greedy episode per scenario, and --eval-samples sampled ones (temperature
    1; round k's generator seeded by (seed, k), the same for every policy evaluated). One record per episode."""
    out = []
    modes = [("greedy", 0.0, None)] + [(f"sample{k}", 1.0, k) for k in range(args.eval_samples)]
    for mode, temp, k in modes:
        gen = torch.Generator(device=dev).manual_seed(seed * 7_919 + 104_729 * k) if k is not None else None
        a = argparse.Namespace(**{**vars(args), "temperature": temp})
        for s in range(0, len(held), args.gen_batch):
            chunk = held[s: s + args.gen_batch]
            ro = ppo.rollout(gen_model, sampler, vocab, chunk, a, gen, dev)
            prompt_len = [len(vocab.encode(E.render_prompt(sc))) for sc in chunk]
            out += [{"id": sc["id"], "source_id": sc.get("source_id", sc["id"]), "task": sc["task"], "difficulty": sc.get("difficulty"),
                     "needs_clarification": sc["needs_clarification"], "mode": mode, "success": o, "reward": r, "asks": c, "tool_calls": t,
                     "tool_errors": ek, "no_answer": na, "episode": vocab.decode(seq[pl:])}
                    for sc, o, r, c, t, ek, na, seq, pl in zip(chunk, ro["success"], ro["rewards"], ro["asks"], ro["tools"], ro["error_kinds"],
                                                                ro["no_answer"], ro["seqs"], prompt_len)]
    return out


def main():
    args = parse_args()
    if args.deterministic:
        os.environ.setdefault("CUBLAS_WORKSPACE_CONFIG", ":4096:8")
    with open(os.environ["RC1_CONFIG_JSON"], encoding="utf-8") as f:
        effective = json.load(f)
    cfg = effective["train"]
    total, seed = int(cfg["steps"]), int(cfg["seed"])
    if args.sft_steps >= total:
        sys.exit(f"torch_ppo: --sft-steps {args.sft_steps} leaves no PPO step: train.steps is {total}")
    inputs = json.load(open(os.environ["RC1_INPUTS_JSON"], encoding="utf-8")) if os.environ.get("RC1_INPUTS_JSON") else {}
    if not inputs.get("weights"):
        sys.exit("torch_ppo: RC1_INPUTS_JSON names no `weights` file (configs/weights.json): the reward needs the calibrated weights")
    args.weights = json.load(open(inputs["weights"][0], encoding="utf-8"))["weights"]
    args.reward = cfg["reward"]
    pool = load_jsonl(os.environ["RC1_SCENARIOS"])
    held = load_jsonl(args.eval_file or inputs["shadow"][0]) if (args.eval_file or inputs.get("shadow")) else []
    if args.eval_max:
        held = held[: args.eval_max]
    parent = int(os.environ.get("RC1_PARENT_PID", "0") or 0)

    random.seed(seed)
    np.random.seed(seed % 2**32)
    torch.manual_seed(seed)
    dev = torch.device("cuda" if torch.cuda.is_available() else "cpu")
    if args.deterministic:
        torch.use_deterministic_algorithms(True, warn_only=True)
        model_mod.DETERMINISTIC_ATTENTION = True
        torch.backends.cudnn.benchmark = False
    bf16 = dev.type == "cuda"
    autocast = (lambda: torch.autocast("cuda", dtype=torch.bfloat16)) if bf16 else contextlib.nullcontext
    backend = "torch-cuda-bf16" if bf16 else "torch-cpu-fp32"

    init = None
    if args.init_from:
        import pretrained
        mcfg, init, vocab = pretrained.load(args.init_from)
    else:
        if args.resume_from:
            vocab = Vocab.from_json(open(os.path.join(args.resume_from, "vocab.json"), encoding="utf-8").read())
        else:
            vocab = Vocab.build([E.render_prompt(sc) + E.render_reference(sc) for sc in pool], args.vocab_size)
        h, L, nh, kv, ffn = SIZES[args.size]
        mcfg = {"vocab": len(vocab), "hidden": h, "layers": L, "heads": nh, "kv_heads": kv, "ffn": ffn, "rope_theta": 10000.0}
    args.pad_id = vocab.pad
    model = PolicyLM(mcfg).to(dev)
    if init is not None and not args.resume_from:
        missing, unexpected = model.load_state_dict({k: v.to(dev) for k, v in init.items()}, strict=False)
        if unexpected or any(not k.startswith("value_head.") for k in missing):
            sys.exit(f"torch_ppo: --init-from {args.init_from}: parameters do not match model.py: missing {missing}, unexpected {unexpected}")
        print(f"torch_ppo: initialised from {args.init_from} ({sum(v.numel() for v in init.values())} parameters; value head fresh)", flush=True)
    ref = copy.deepcopy(model).requires_grad_(False)
    fused = {"fused": True} if dev.type == "cuda" else {}
    a = cfg.get("adam", {})
    opt = torch.optim.AdamW(model.parameters(), lr=1.0, betas=(a.get("beta1", 0.9), a.get("beta2", 0.999)), eps=a.get("eps", 1e-8), weight_decay=0.0, **fused)

    def lr_at(i):  # i = steps done; SFT: warmup then cosine to 10 %; PPO: train.lr
        if i < args.sft_steps:
            warm = max(1, args.sft_steps // 10)
            return args.sft_lr * min(1.0, (i + 1) / warm) * (0.1 + 0.9 * 0.5 * (1 + math.cos(math.pi * i / args.sft_steps)))
        return cfg["lr"]

    sched = torch.optim.lr_scheduler.LambdaLR(opt, lr_at)
    data_rng = random.Random(seed)
    args.ppo_gen = torch.Generator().manual_seed(seed)
    step, kl_coef = 0, cfg["ppo"]["kl_coef"]
    if args.resume_from:
        ckpt.restore(args.resume_from, model, ref, opt, sched, data_rng)
        st = ckpt.load_state(args.resume_from)
        step, kl_coef = st["step"], st["kl_coef"]
        args.ppo_gen.set_state(torch.tensor(st["ppo_gen"], dtype=torch.uint8))
        print(f"torch_ppo: resumed from {args.resume_from} at step {step} ({st['phase']})", flush=True)
    else:
        print(f"torch_ppo: fresh start, seed {seed}, {len(pool)} scenarios, vocab {len(vocab)}, {'--init-from' if args.init_from else args.size} {count_params(mcfg)} on {backend}", flush=True)
    print(f"torch_ppo: ignores {'; '.join(IGNORED)}", flush=True)
    gen_model = copy.deepcopy(model).to(torch.bfloat16 if bf16 else torch.float32).requires_grad_(False)
    sampler = Sampler(gen_model, torch.bfloat16 if bf16 else torch.float32, {vocab.end, vocab.eos, vocab.call}, vocab.pad, args.graphs)
    packer = Packer([encode_doc(vocab, sc, args.seq) for sc in pool], args.seq, seed, vocab.pad)
    # SFT lines carry, as `reward`, RC1's reward of the pool's reference trajectories (the imitation target,
    # `reward_of: reference`): there is no sampled policy reward during SFT, and KL is 0 (no reference policy yet).
    ref_reward = sum(E.reference_reward(sc, args.weights, args.reward) for sc in pool) / len(pool)
    # Attention inside each packed document only: FlexAttention's block mask when compiled on CUDA
    # (blocks across documents are skipped), else a dense boolean mask (SDPA, or the explicit softmax).
    use_flex = args.compile and dev.type == "cuda" and create_block_mask is not None and not args.dense_mask
    attn_impl = "flex_attention (block mask)" if use_flex else "dense document mask"

    def sft_loss(ids, pos, mask, labels):
        with autocast():
            logits, _ = model(ids, pos, mask)
        return torch.nn.functional.cross_entropy(logits.reshape(-1, logits.shape[-1]).float(), labels.reshape(-1), ignore_index=-100)

    loss_fn = torch.compile(sft_loss) if args.compile else sft_loss

    stop = {"sig": None}
    signal.signal(signal.SIGTERM, lambda s, _f: stop.__setitem__("sig", s))
    signal.signal(signal.SIGINT, lambda s, _f: stop.__setitem__("sig", s))
    every = cfg["checkpoint"]["every"]

    def sync_gen():
        with torch.no_grad():
            for p, q in zip(gen_model.parameters(), model.parameters()):
                p.copy_(q)

    def run_eval(tag):
        if not held:
            return {}
        sync_gen()
        res = evaluate(gen_model, sampler, vocab, held, args, dev, seed)
        g = [r for r in res if r["mode"] == "greedy"]
        print(f"torch_ppo: eval {tag}: greedy success {sum(r['success'] for r in g) / len(g):.4f}, reward {sum(r['reward'] for r in g) / len(g):.4f} on {len(g)} held-out scenarios"
              f" (+ {len(res) - len(g)} sampled episodes)", flush=True)
        return {f"eval_{tag}.json": json.dumps(res, sort_keys=True)}

    def sft_launch(step):
        """Enqueues SFT step `step` (no host sync on CUDA): returns what its metrics line needs later."""
        ids, labels, doc, lens = packer.tensors(step, args.sft_rows)
        if dev.type == "cuda":
            ids, labels, doc = (x.pin_memory().to(dev, non_blocking=True) for x in (ids, labels, doc))
        pos = doc_positions(doc)
        mask = doc_block_mask(doc) if use_flex else doc_mask(doc)
        loss = loss_fn(ids, pos, mask, labels)
        opt.zero_grad(set_to_none=True)
        loss.backward()
        if cfg.get("max_grad_norm", 0) > 0:
            torch.nn.utils.clip_grad_norm_(model.parameters(), cfg["max_grad_norm"])
        opt.step()
        rec = {"step": step, "lr": lr_at(step - 1), "tokens": sum(lens), "flops": train_flops(mcfg, lens), "docs": len(lens)}
        if dev.type == "cuda":
            rec["loss_t"] = torch.empty((), dtype=loss.dtype, pin_memory=True)
            rec["loss_t"].copy_(loss.detach(), non_blocking=True)
            rec["ev"] = torch.cuda.Event(enable_timing=True)
            rec["ev"].record()
        else:
            rec["loss_t"] = loss.detach()
        return rec

    with open(args.metrics, "a", encoding="utf-8") as metrics:
        state = {"prev_ev": None, "t_wall": None}

        def finish_sft(rec):
            """Waits for SFT step rec to finish and returns its metrics line (timing: on CUDA, the GPU time
            between the end of the previous step and the end of this one, idle gaps included)."""
            if dev.type == "cuda":
                rec["ev"].synchronize()
                dt = state["prev_ev"].elapsed_time(rec["ev"]) / 1000 if state["prev_ev"] is not None else time.perf_counter() - state["t_wall"]
                state["prev_ev"] = rec["ev"]
            else:
                now = time.perf_counter()
                dt = now - state["t_wall"]
                state["t_wall"] = now
            seqtok = args.sft_rows * args.seq
            return {"phase": "sft", "loss": float(rec["loss_t"]), "reward": ref_reward, "reward_of": "reference", "kl": 0.0, "step": rec["step"],
                    "lr": rec["lr"], "throughput": rec["tokens"] / dt, "tokens": rec["tokens"], "pad_share": 1 - rec["tokens"] / seqtok,
                    "docs": rec["docs"], "mfu_flops_per_s": rec["flops"] / dt, "attention": attn_impl, "step_s": dt}

        def emit(line):
            line.update(backend=backend, env="rc1-text-v2", gpu_mem_gb=(torch.cuda.max_memory_allocated() / 2**30) if dev.type == "cuda" else 0.0)
            metrics.write(json.dumps(line, sort_keys=True) + "\n")
            metrics.flush()

        pending = None  # an SFT step enqueued on the GPU whose metrics line is not written yet
        state["t_wall"] = time.perf_counter()
        while step < total:
            step += 1
            model.train()
            if step <= args.sft_steps:
                rec = sft_launch(step)
                sched.step()
                # the previous step's line is written while this one runs on the GPU
                if pending is not None:
                    emit(finish_sft(pending))
                pending = rec
                if dev.type != "cuda":  # nothing runs asynchronously on CPU: the line now
                    emit(finish_sft(pending))
                    pending = None
                line = None
            else:
                if pending is not None:
                    emit(finish_sft(pending))
                    pending = None
                if dev.type == "cuda":
                    torch.cuda.reset_peak_memory_stats()
                t0 = time.perf_counter()
                if step == args.sft_steps + 1:  # PPO starts: the SFT policy becomes the frozen reference; fresh Adam moments
                    ref.load_state_dict(model.state_dict())
                    opt.state.clear()
                batch = ppo_batch(pool, step, args.gen_batch, seed, cfg)
                sync_gen()
                gen = torch.Generator(device=dev).manual_seed(seed * 1_000_003 + step)
                ro = ppo.rollout(gen_model, sampler, vocab, batch, args, gen, dev)
                coef_used = kl_coef
                loss, kl, kl_coef, terms, _ = ppo.ppo_step(model, ref, opt, ro["seqs"], ro["masks"], ro["rewards"], cfg, kl_coef, args, autocast, dev)
                if dev.type == "cuda":
                    torch.cuda.synchronize()
                dt = time.perf_counter() - t0
                n, n_gen = len(batch), ro["n_gen"]
                line = {"phase": "ppo", "loss": loss, "reward": sum(ro["rewards"]) / n, "kl": kl, "kl_coef": coef_used, "kl_coef_next": kl_coef,
                        "success": sum(ro["success"]) / n, "asks": sum(ro["asks"]) / n, "tool_calls": sum(ro["tools"]) / n,
                        "tool_errors": sum(ro["tool_errors"]) / n,
                        "tool_error_kinds": {k: sum(e.get(k, 0) for e in ro["error_kinds"]) / n for k in ("unavailable", "no_document", "calc_error")}, "segments": sum(ro["segments"]) / n, "no_answer": sum(ro["no_answer"]) / n,
                        "entropy": terms["entropy"], "loss_terms": {k: terms[k] for k in ("policy", "value", "entropy", "kl_loss", "kl")},
                        **{k: terms[k] for k in ("updates", "updates_max", "pullbacks", "kl_exact", "kl_projected", "heldout_episodes", "approx_kl_old")},
                        "throughput": n_gen / dt, "gen_tokens_per_s": n_gen / max(ro["gen_s"], 1e-9), "gen_share": ro["gen_s"] / dt,
                        "episode_len": n_gen / n, "step": step, "lr": lr_at(step - 1), "step_s": dt}
                sched.step()
                state["prev_ev"], state["t_wall"] = None, time.perf_counter()
            # Read the stop flag once: a signal arriving later is handled after the next step, so
            # "checkpointed step N" is printed only when step N was saved.
            stopping = stop["sig"]
            if step % every == 0 or step == total or step == args.sft_steps or stopping is not None:
                if pending is not None:
                    emit(finish_sft(pending))
                    pending = None
                phase = "sft" if step <= args.sft_steps else "ppo"
                ck_state = {"phase": phase, "kl_coef": kl_coef, "config_hash": effective.get("config_hash"), "model": mcfg,
                            "size": args.size, "ppo_gen": args.ppo_gen.get_state().tolist()}
            if line is not None:
                emit(line)
            if step % every == 0 or step == total or step == args.sft_steps or stopping is not None:
                # No held-out eval when stopping: SIGTERM must checkpoint within grace_s.
                extra = run_eval("sft" if step == args.sft_steps else "final") if step in (args.sft_steps, total) and stopping is None else {}
                ckpt.save(args.checkpoint_dir, step, model, ref if step > args.sft_steps else None, opt, sched, data_rng, ck_state, vocab.to_json(), extra)
                state["prev_ev"], state["t_wall"] = None, time.perf_counter()
            if stopping is not None:
                print(f"torch_ppo: signal {stopping}: checkpointed step {step}, exiting", flush=True)
                sys.exit(143)
            if parent and os.getppid() != parent:
                print("torch_ppo: rc1-build is gone; stopping", flush=True)
                sys.exit(1)
    print(f"torch_ppo: done at step {step}", flush=True)


if __name__ == "__main__":
    main()
