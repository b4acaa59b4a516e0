"""Checkpoints of the torch trainer: step_XXXXX/ with
  model.safetensors      the policy (and value head) weights, safetensors format
  reference.safetensors  the frozen SFT policy that PPO's KL is measured against (after SFT)
  optimizer.pt           AdamW state;  scheduler.pt: the LR scheduler's state
  rng.pt                 torch CPU, CUDA (every device), numpy and Python `random` states, the data-order RNG
  trainer_state.json     step, phase, KL coefficient, the config hash, the model config
  vocab.json             the tokenizer (the pool's pieces)
  eval_sft.json, eval_final.json  per-scenario held-out results (at the last SFT step and the last step)
  COMPLETE               written last, by rename: the contract's marker of a complete checkpoint
Every file is fsynced before its rename, and the step dir (and its parent) before and after
COMPLETE, so a crash or power loss never leaves COMPLETE naming files that are not on disk.
eval_*.json is left out when a stop signal came at that step (the eval would delay the checkpoint).
The safetensors files are written by this module (8-byte little-endian header length, JSON header
of dtype/shape/offsets, raw little-endian tensor bytes), so CPU runs need no `safetensors` package;
the GPU script checks that the `safetensors` library reads them back identically.
"""
import json
import os
import random
import struct

import numpy as np
import torch

DTYPES = {torch.float32: "F32", torch.bfloat16: "BF16", torch.float16: "F16", torch.int64: "I64"}
BACK = {v: k for k, v in DTYPES.items()}


def save_safetensors(tensors, path):
    header, blobs, off = {}, [], 0
    for name in sorted(tensors):
        t = tensors[name].detach().contiguous().cpu()
        raw = t.view(torch.int16).numpy().tobytes() if t.dtype == torch.bfloat16 else t.numpy().tobytes()
        header[name] = {"dtype": DTYPES[t.dtype], "shape": list(t.shape), "data_offsets": [off, off + len(raw)]}
        blobs.append(raw)
        off += len(raw)
    h = json.dumps(header, separators=(",", ":")).encode()
    h += b" " * (-len(h) % 8)
    tmp = path + ".tmp"
    with open(tmp, "wb") as f:
        f.write(struct.pack("<Q", len(h)) + h)
        for b in blobs:
            f.write(b)
        f.flush()
        os.fsync(f.fileno())
    os.replace(tmp, path)


def load_safetensors(path):
    with open(path, "rb") as f:
        n = struct.unpack("<Q", f.read(8))[0]
        header = json.loads(f.read(n))
        data = f.read()
    out = {}
    for name, h in header.items():
        if name == "__metadata__":
            continue
        a, b = h["data_offsets"]
        dt = BACK[h["dtype"]]
        if dt == torch.bfloat16:
            t = torch.from_numpy(np.frombuffer(data[a:b], dtype=np.int16).copy()).view(torch.bfloat16)
        else:
            t = torch.from_numpy(np.frombuffer(data[a:b], dtype={torch.float32: np.float32, torch.float16: np.float16, torch.int64: np.int64}[dt]).copy())
        out[name] = t.reshape(h["shape"])
    return out


def _fsync(path):
    fd = os.open(path, os.O_RDONLY)
    try:
        os.fsync(fd)
    finally:
        os.close(fd)


def _atomic(path, write):
    tmp = path + ".tmp"
    write(tmp)
    _fsync(tmp)
    os.replace(tmp, path)


def _write_text(path, text):
    with open(path, "w", encoding="utf-8") as f:
        f.write(text)


def save(ckpt_dir, step, model, ref, opt, sched, data_rng, state, vocab_json, extra=None):
    d = os.path.join(ckpt_dir, f"step_{step:05d}")
    os.makedirs(d, exist_ok=True)
    save_safetensors(model.state_dict(), os.path.join(d, "model.safetensors"))
    if ref is not None:
        save_safetensors(ref.state_dict(), os.path.join(d, "reference.safetensors"))
    _atomic(os.path.join(d, "optimizer.pt"), lambda p: torch.save(opt.state_dict(), p))
    _atomic(os.path.join(d, "scheduler.pt"), lambda p: torch.save(sched.state_dict(), p))
    rng = {"torch": torch.get_rng_state(), "numpy": np.random.get_state(), "random": random.getstate(), "data": data_rng.getstate(),
           "cuda": torch.cuda.get_rng_state_all() if torch.cuda.is_available() else []}
    _atomic(os.path.join(d, "rng.pt"), lambda p: torch.save(rng, p))
    files = {"trainer_state.json": json.dumps(dict(state, step=step), sort_keys=True), "vocab.json": vocab_json, **(extra or {})}
    for name, text in sorted(files.items()):
        _atomic(os.path.join(d, name), lambda p, text=text: _write_text(p, text))
    _fsync(d)  # every file's entry is durable before COMPLETE can be
    _fsync(ckpt_dir)
    _atomic(os.path.join(d, "COMPLETE"), lambda p: _write_text(p, json.dumps({"step": step})))
    _fsync(d)
    return d


def load_state(d):
    with open(os.path.join(d, "trainer_state.json"), encoding="utf-8") as f:
        return json.load(f)


def restore(d, model, ref, opt, sched, data_rng):
    """Loads weights, optimizer, scheduler and every RNG state from a complete step dir."""
    if not os.path.exists(os.path.join(d, "COMPLETE")):
        raise SystemExit(f"torch_ppo: {d}: no COMPLETE file: not a complete checkpoint")
    dev = next(model.parameters()).device
    model.load_state_dict({k: v.to(dev) for k, v in load_safetensors(os.path.join(d, "model.safetensors")).items()})
    rp = os.path.join(d, "reference.safetensors")
    if ref is not None and os.path.exists(rp):
        ref.load_state_dict({k: v.to(dev) for k, v in load_safetensors(rp).items()})
    opt.load_state_dict(torch.load(os.path.join(d, "optimizer.pt"), map_location=dev))
    sched.load_state_dict(torch.load(os.path.join(d, "scheduler.pt")))
    rng = torch.load(os.path.join(d, "rng.pt"), weights_only=False) if "weights_only" in torch.load.__code__.co_varnames else torch.load(os.path.join(d, "rng.pt"))
    torch.set_rng_state(rng["torch"])
    if rng["cuda"] and torch.cuda.is_available():
        torch.cuda.set_rng_state_all(rng["cuda"])
    np.random.set_state(rng["numpy"])
    random.setstate(rng["random"])
    data_rng.setstate(rng["data"])
    return os.path.exists(rp)
