#!/usr/bin/env python3
"""Checks of the torch trainer's parts, on CPU (CI) and on CUDA when present; prints one line per
check and exits 1 on the first failure:
  decode     the static-KV sampler's greedy tokens equal greedy decoding by full recomputation
             (left-padded prompts of different lengths, grouped-query attention), float32
  graphs     (CUDA) the CUDA-graph decode gives the same greedy tokens as the eager decode
  safetensors  the writer/reader round-trips float32 and bfloat16 tensors bit for bit
  success    the port of lib/rollouts/success.ts on cases whose answers that file defines
  vocab      every pool-vocabulary encoding decodes back to its text (byte fallback included)
"""
import os
import sys
import tempfile

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
import torch  # noqa: E402

import ckpt  # noqa: E402
import episodes as E  # noqa: E402
from model import PolicyLM  # noqa: E402
from sampler import Sampler  # noqa: E402
from vocab import Vocab  # noqa: E402


def check(name, ok, detail=""):
    print(f"{'ok  ' if ok else 'FAIL'} {name}{': ' + detail if detail and not ok else ''}", flush=True)
    if not ok:
        sys.exit(1)


def main():
    torch.manual_seed(0)
    c = {"vocab": 300, "hidden": 64, "layers": 2, "heads": 4, "kv_heads": 2, "ffn": 128, "rope_theta": 10000.0}
    m = PolicyLM(c).eval()
    for p in m.parameters():
        p.data.normal_(0, 0.3)
    prompts = [[5, 6, 7, 8, 9, 10, 11], [20, 21, 22], [30, 31, 32, 33, 34]]
    devs = ["cpu"] + (["cuda"] if torch.cuda.is_available() else [])
    for dev in devs:
        md = m.to(dev)
        got = Sampler(md, torch.float32, set(), 0, False).generate(prompts, 8, 0.0, None)
        want = []
        for pr in prompts:
            seq = list(pr)
            for _ in range(8):
                with torch.no_grad():
                    lg, _ = md(torch.tensor([seq], device=dev))
                seq.append(int(lg[0, -1].argmax()))
            want.append(seq[len(pr):])
        check(f"decode ({dev}, float32): static-KV greedy = full recomputation", got == want, f"{got} vs {want}")
        if dev == "cuda":
            eager = Sampler(md, torch.float32, set(), 0, False).generate(prompts * 30, 8, 0.0, None)
            graphed = Sampler(md, torch.float32, set(), 0, True)
            g1 = graphed.generate(prompts * 30, 8, 0.0, None)
            g2 = graphed.generate(prompts * 30, 8, 0.0, None)  # replayed graph, cache reset between calls
            check("graphs (cuda): CUDA-graph decode = eager decode, twice", g1 == eager and g2 == eager)
    with tempfile.TemporaryDirectory() as d:
        t = {"a": torch.randn(3, 5), "b": torch.randn(4, 2).to(torch.bfloat16), "c": torch.arange(6).reshape(2, 3)}
        ckpt.save_safetensors(t, os.path.join(d, "x.safetensors"))
        back = ckpt.load_safetensors(os.path.join(d, "x.safetensors"))
        check("safetensors: round trip bit for bit", sorted(back) == sorted(t) and all(torch.equal(back[k], t[k]) and back[k].dtype == t[k].dtype for k in t))
    cases = [("gsm8k", "The answer is 1,200.", "1200", True), ("gsm8k", "#### 46.0", "46", True), ("gsm8k", "forty six", "46", False),
             ("hotpotqa", "The Eiffel Tower!", "eiffel tower", True), ("hotpotqa", "Paris, France", "Paris", False),
             ("strategyqa", "Yes, because cream is dairy.", "yes", True), ("strategyqa", "true", "yes", True), ("strategyqa", "maybe", "no", False)]
    bad = [x for x in cases if E.judge_success(x[0], x[1], x[2])[0] != x[3]]
    check("success: task metrics (gsm8k numeric, hotpotqa EM, strategyqa yes/no)", not bad, str(bad))
    check("success: hotpotqa F1 partial credit", abs(E.hotpot_f1("Paris, France", "Paris") - 2 / 3) < 1e-12)
    texts = ["<|user|>How much is 12 x 7?<|assistant|><calc>12*7=84<answer>84<|end|>", "Crème brûlée — 3½ cups, naïve café"]
    v = Vocab.build(texts, 50)
    check("vocab: encode/decode round trip (byte fallback)", all(v.decode(v.encode(x)) == x for x in texts))


if __name__ == "__main__":
    main()
