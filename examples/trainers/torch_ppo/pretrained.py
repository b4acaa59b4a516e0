"""Starting from a pretrained Qwen3-shaped checkpoint instead of from scratch (`train.py --init-from DIR`).

DIR is a Hugging Face model directory: config.json (a Qwen3 config: hidden_size, num_hidden_layers,
num_attention_heads, num_key_value_heads, head_dim, intermediate_size, rope_theta, rms_norm_eps,
vocab_size, tie_word_embeddings), model.safetensors (one file; sharded checkpoints are refused)
and tokenizer.json (read with the `tokenizers` package). Hugging Face's parameter names map onto
model.py's by dropping the `model.`, `self_attn.` and `mlp.` parts; a tied output head copies the
embedding. Only Qwen3-shaped models fit: model.py always applies Qwen3's per-head q/k RMSNorm,
which a Llama checkpoint does not have. The episode markers of episodes.py become added special
tokens of the model's tokenizer; the rows they need beyond the checkpoint's vocabulary are added
to the embedding and the output head, initialised at the mean embedding.
"""
import json
import os
import re

import torch

from ckpt import load_safetensors
from vocab import SPECIALS


class HFVocab:
    """The model's own tokenizer behind the interface train.py uses (encode, decode, pad, eos, end, to_json)."""

    def __init__(self, tok):
        self.tok = tok
        tok.add_special_tokens(SPECIALS)
        for s in SPECIALS:
            setattr(self, s.strip("<>|").replace("|", ""), tok.token_to_id(s))
        self.pad, self.eos = tok.token_to_id("<pad>"), tok.token_to_id("<eos>")

    def __len__(self):
        return self.tok.get_vocab_size(with_added_tokens=True)

    def encode(self, text):
        return self.tok.encode(text, add_special_tokens=False).ids

    def decode(self, ids):
        return self.tok.decode([i for i in ids if i != self.pad], skip_special_tokens=False)

    def to_json(self):
        return json.dumps({"kind": "hf-tokenizers", "tokenizer": self.tok.to_str()})

    @classmethod
    def from_json(cls, text):
        from tokenizers import Tokenizer
        return cls(Tokenizer.from_str(json.loads(text)["tokenizer"]))


def model_config(hf):
    return {"vocab": hf["vocab_size"], "hidden": hf["hidden_size"], "layers": hf["num_hidden_layers"], "heads": hf["num_attention_heads"],
            "kv_heads": hf.get("num_key_value_heads", hf["num_attention_heads"]), "ffn": hf["intermediate_size"],
            "head_dim": hf.get("head_dim") or hf["hidden_size"] // hf["num_attention_heads"], "rope_theta": float(hf.get("rope_theta") or (hf.get("rope_parameters") or {}).get("rope_theta", 10000.0)),
            "rms_eps": hf.get("rms_norm_eps", 1e-6)}


def map_names(sd, tied):
    out = {}
    for k, v in sd.items():
        n = re.sub(r"^model\.", "", k)
        n = re.sub(r"\.(self_attn|mlp)\.", ".", n)
        out[n] = v
    if "lm_head.weight" not in out and tied:
        out["lm_head.weight"] = out["embed_tokens.weight"]
    return out


def load(d):
    """(model config, state dict in model.py's names, HFVocab) of a Hugging Face Qwen3 directory."""
    for f in ("config.json", "model.safetensors", "tokenizer.json"):
        if not os.path.exists(os.path.join(d, f)):
            raise SystemExit(f"torch_ppo: --init-from {d}: {f} missing (expected config.json, one model.safetensors, tokenizer.json)")
    hf = json.load(open(os.path.join(d, "config.json"), encoding="utf-8"))
    if hf.get("model_type") not in ("qwen3", None):
        raise SystemExit(f"torch_ppo: --init-from {d}: model_type {hf.get('model_type')!r}: only Qwen3-shaped checkpoints fit model.py")
    from tokenizers import Tokenizer
    vocab = HFVocab(Tokenizer.from_file(os.path.join(d, "tokenizer.json")))
    cfg = model_config(hf)
    sd = {k: v.float() for k, v in map_names(load_safetensors(os.path.join(d, "model.safetensors")), hf.get("tie_word_embeddings", False)).items()}
    if len(vocab) > cfg["vocab"]:  # rows for the added markers
        extra = len(vocab) - cfg["vocab"]
        for k in ("embed_tokens.weight", "lm_head.weight"):
            w = sd[k]
            sd[k] = torch.cat([w, w.mean(0, keepdim=True).expand(extra, -1)])
        cfg["vocab"] = len(vocab)
    return cfg, sd, vocab
