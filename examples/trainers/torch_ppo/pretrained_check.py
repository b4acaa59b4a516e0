#!/usr/bin/env python3
"""Checks the --init-from path against transformers (GPU machine; needs transformers and tokenizers):
writes a small random Qwen3ForCausalLM (head_dim unlike hidden / heads, tied embeddings) with
save_pretrained beside the Qwen3 tokenizer.json, loads it through pretrained.py into model.py, and
compares the two models' logits on the same token ids in float32 (relative L2 error; the bar is
1e-4). Usage: pretrained_check.py OUTDIR TOKENIZER_JSON
"""
import os
import shutil
import sys

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
import torch  # noqa: E402
from transformers import Qwen3Config, Qwen3ForCausalLM  # noqa: E402

import pretrained  # noqa: E402
from model import PolicyLM  # noqa: E402


def main():
    out, tok = sys.argv[1], sys.argv[2]
    os.makedirs(out, exist_ok=True)
    torch.manual_seed(0)
    qc = Qwen3Config(vocab_size=151936, hidden_size=64, num_hidden_layers=2, num_attention_heads=4, num_key_value_heads=2, head_dim=32,
                     intermediate_size=128, max_position_embeddings=2048, tie_word_embeddings=True, rope_theta=1000000.0)
    hf = Qwen3ForCausalLM(qc).eval()
    hf.save_pretrained(out, safe_serialization=True)
    shutil.copy(tok, os.path.join(out, "tokenizer.json"))
    cfg, sd, vocab = pretrained.load(out)
    m = PolicyLM(cfg).eval()
    missing, unexpected = m.load_state_dict(sd, strict=False)
    assert not unexpected and all(k.startswith("value_head.") for k in missing), (missing, unexpected)
    ids = torch.randint(0, 151000, (3, 40))
    with torch.no_grad():
        want = hf(input_ids=ids).logits.float()
        got, _ = m(ids)
    err = float((got[..., : want.shape[-1]] - want).norm() / want.norm())
    text = "<|user|>Is 7 larger than 5?<|assistant|><think>7 compared with 5.<answer>yes<|end|>"
    rt = vocab.decode(vocab.encode(text)) == text
    print(f"pretrained: logits of model.py loaded from a Qwen3ForCausalLM checkpoint vs transformers: relative L2 error {err:.2e} "
          f"({'ok' if err < 1e-4 else 'FAIL'}); markers round-trip through the Qwen3 tokenizer: {rt}; vocabulary {len(vocab)}")
    sys.exit(0 if err < 1e-4 and rt else 1)


if __name__ == "__main__":
    main()
