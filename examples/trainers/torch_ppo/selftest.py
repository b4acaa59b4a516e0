#!/usr/bin/env python3
"""Checks of the torch trainer's parts, on CPU (CI) and on CUDA when present; prints one line per
check and exits 1 on the first failure:
  decode     the static-KV sampler's greedy tokens equal greedy decoding by full recomputation
             (left-padded prompts of different lengths, grouped-query attention), float32
  graphs     (CUDA) the CUDA-graph decode gives the same greedy tokens as the eager decode
  safetensors  the writer/reader round-trips float32 and bfloat16 tensors bit for bit
  success    the port of lib/rollouts/success.ts on cases whose answers that file defines
  vocab      every pool-vocabulary encoding decodes back to its text (byte fallback included)
  docmask    packed SFT rows: a token's logits do not depend on the other documents of its row
             (bit for bit when they change), and equal the document's logits alone; (CUDA, torch
             with FlexAttention) the block-mask path gives the dense mask's logits
  packing    every document is packed whole into exactly one row of an epoch; positions restart at 0
  tools      the calc port (lib/rollouts/calc.ts cases), the wiki lookup (openai-source.ts lookupDoc),
             and an episode that calls a tool gets the tool's output appended, masked out of its actions
  klcontrol  the adaptive coefficient (Ziegler et al.'s clipped proportional step, rate min(1, n / horizon));
             the exact KL over the vocabulary; the held-out split; a real PPO update of a small model
             takes pull-back steps that lower the held-out episodes' KL when it is over target_kl,
             the PPO loss in every minibatch when the target is far, and its KL loss term lowers the KL
"""
import contextlib
import os
import random
import sys
import tempfile

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
import torch  # noqa: E402

import ckpt  # noqa: E402
import episodes as E  # noqa: E402
import ppo  # noqa: E402
import train  # noqa: E402
from model import PolicyLM, create_block_mask, doc_block_mask, doc_mask, doc_positions  # noqa: E402
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
    docmask_checks(m, devs)
    packing_checks()
    tool_checks()
    kl_checks()


def docmask_checks(m, devs):
    m = m.to("cpu").float()
    a, b, c = [40, 41, 42, 43, 44], [50, 51, 52, 53, 54, 55, 56], [60, 61, 62]
    doc = torch.tensor([[0] * 5 + [1] * 7 + [2] * 3 + [3] * 2])  # 2 padding tokens: their own document
    def row(x, z):
        return torch.tensor([x + b + z + [0, 0]])
    with torch.no_grad():
        pos = doc_positions(doc)
        check("docmask: positions restart at every document", pos[0].tolist() == list(range(5)) + list(range(7)) + list(range(3)) + [0, 1])
        l1, _ = m(row(a, c), pos, doc_mask(doc))
        l2, _ = m(row([70, 71, 72, 73, 74], [80, 81, 82]), pos, doc_mask(doc))
        alone, _ = m(torch.tensor([b]))
        plain, _ = m(row(a, c))
    same = torch.equal(l1[0, 5:12], l2[0, 5:12])
    check("docmask: a token's logits are bit-identical when the other documents of its row change", same)
    check("docmask: ... and equal the document's logits alone (1e-5)", torch.allclose(l1[0, 5:12], alone[0], atol=1e-5), f"{(l1[0, 5:12] - alone[0]).abs().max()}")
    check("docmask: without the mask they differ (the check can fail)", not torch.allclose(plain[0, 5:12], alone[0], atol=1e-3))
    if "cuda" in devs and create_block_mask is not None:
        md = m.to("cuda")
        ids, dd = row(a, c).cuda(), doc.cuda()
        with torch.no_grad():
            dense, _ = md(ids, doc_positions(dd), doc_mask(dd))
            flex, _ = md(ids, doc_positions(dd), doc_block_mask(dd))
        check("docmask (cuda): FlexAttention block mask = dense document mask (1e-4)", torch.allclose(dense, flex, atol=1e-4), f"{(dense - flex).abs().max()}")


def packing_checks():
    rng = random.Random(3)
    docs = [([1] * rng.randint(3, 40), [True] * 0) for _ in range(200)]
    docs = [(d, [True] * len(d)) for d, _ in docs]
    pk = train.Packer(docs, 64, 5, 0)
    rows = pk.epoch(0)
    flat = sorted(i for r in rows for i in r)
    check("packing: every document exactly once per epoch, whole, within seq", flat == list(range(200)) and all(sum(len(docs[i][0]) for i in r) <= 64 for r in rows))
    ids, labels, doc, lens = pk.tensors(1, 4)
    check("packing: step rows are epoch rows in order", [sorted(x) for x in pk.rows_of_step(1, 4)] == [sorted(x) for x in rows[:4]] and sum(lens) == int((ids != 0).sum()))
    both = train.Packer(docs, 64, 5, 0)
    stream = both.epoch(0) + both.epoch(1)
    n = 3 if len(rows) % 3 else 4  # a step size that does not divide the epoch: one step spans the two epochs
    check("packing: the rows of consecutive steps run through epoch 0 into epoch 1",
          all(pk.rows_of_step(k, n) == stream[(k - 1) * n: k * n] for k in range(1, len(stream) // n + 1)))


def tool_checks():
    cases = [("2 + 3 * 4", "14"), ("(2 + 3) * 4", "20"), ("2^3^2", "512"), ("2**3", "8"), ("1,234 + 1", "1235"), ("7 % 3", "1"), ("-3 + 5", "2"),
             ("3 x 4", "12"), ("10 / 4", "2.5"), ("0.1 + 0.2", "0.3"), ("1/3", "0.3333333333")]
    bad = [(e, E.calc_eval(e)) for e, want in cases if E.calc_eval(e) != (True, want)]
    check("tools: calc evaluates as calc.ts", not bad, str(bad))
    errs = [E.calc_eval(e) for e in ("1/0", "(1+2", "abc", "2 +")]
    check("tools: calc errors as calc.ts", errs == [(False, "the result is not a finite number (division by zero?)"), (False, "expected ')' at position 5"),
                                                      (False, "unexpected 'a' at position 1"), (False, "unexpected end of expression")], str(errs))
    ctx = [{"title": "Catan", "text": "A board game."}, {"title": "Pirate's Cove", "text": "Another game."}]
    sc = {"tools": ["wiki"], "context": ctx}
    check("tools: wiki lookup exact, case-insensitive, most shared words",
          E.tool_output(sc, "wiki", "Catan") == "Catan: A board game." and E.tool_output(sc, "wiki", "catan") == "Catan: A board game."
          and E.tool_output(sc, "wiki", "the cove of pirates") == "Pirate's Cove: Another game." and E.tool_output(sc, "wiki", "Rome") == 'No document found for "Rome".')
    check("tools: a tool the scenario does not offer", E.tool_output(sc, "calc", "1+1") == 'error: tool "calc" is not available here (available: wiki)')
    # an episode: a scripted sampler calls calc, gets the result appended (not an action), then answers
    vocab = Vocab.build(["<|user|>What is 6 times 7?<|assistant|><calc>6*7<|call|>42<|obs_end|><answer>42<|end|>"], 100)
    script = [vocab.encode("<calc>6*7<|call|>"), vocab.encode("<answer>42<|end|>")]

    class Scripted:
        def generate(self, prompts, max_new, temperature, gen):
            return [script.pop(0)]
    sc = {"id": "x", "task": "gsm8k", "tools": ["calc"], "context": [], "needs_clarification": False, "clarification": None, "gold_answer": "42",
          "difficulty": "easy", "messages": [{"role": "user", "content": "What is 6 times 7?"}],
          "reference": {"steps": [{"type": "tool_call", "tool": "calc", "input": "6*7", "output": "42"}], "final_answer": "42"}}
    sc["_ref"] = E.reference_stats(sc)
    args = type("A", (), {"max_segments": 4, "max_new": 16, "temperature": 1.0, "weights": {d: 1 / 7 for d in E.DIMENSIONS},
                          "reward": {"use_overclar_penalty": True, "alpha": 0.07, "cap": 3, "beta": 0.05}})()
    ro = ppo.rollout(None, Scripted(), vocab, [sc], args, None, torch.device("cpu"))
    text = vocab.decode(ro["seqs"][0])
    acted = vocab.decode([x for x, a in zip(ro["seqs"][0], ro["masks"][0]) if a])
    check("tools: an episode's calc call is executed, its output appended and not an action",
          text.endswith("<calc>6*7<|call|>42<|obs_end|><answer>42<|end|>") and acted == "<calc>6*7<|call|><answer>42<|end|>"
          and ro["success"] == [1.0] and ro["tools"] == [1], f"{text!r} / {acted!r} / {ro['success']}")
    docs = train.encode_doc(vocab, sc, 512)
    untrained = vocab.decode([x for x, t in zip(*docs) if not t])
    check("tools: the SFT target renders the executed output, left out of the loss", untrained == "42<|obs_end|>", repr(untrained))


def kl_checks():
    a = ppo.adapt_kl_coef
    check("klcontrol: coefficient steps +20 % / -20 % at most, at rate min(1, n / horizon)",
          abs(a(0.1, 0.09, 0.03, 50_000, 10_000) - 0.12) < 1e-12 and abs(a(0.1, 0.0, 0.03, 50_000, 10_000) - 0.08) < 1e-12
          and abs(a(0.1, 0.033, 0.03, 5_000, 10_000) - 0.1 * (1 + 0.1 * 0.5)) < 1e-12 and a(0.1, 0.03, 0.03, 1, 1) == 0.1)
    g = torch.Generator().manual_seed(5)
    lp = torch.log_softmax(torch.randn(3, 7, 50, generator=g), -1)
    lq = torch.log_softmax(torch.randn(3, 7, 50, generator=g), -1)
    want = torch.nn.functional.kl_div(lq, lp, log_target=True, reduction="none").sum(-1)  # KL(p || q) per position
    check("klcontrol: the exact KL over the vocabulary = torch's kl_div, 0 against itself, >= 0",
          torch.allclose(ppo.exact_kl(lp, lq), want, atol=1e-6) and float(ppo.exact_kl(lp, lp).abs().max()) < 1e-6 and bool((ppo.exact_kl(lp, lq) >= 0).all()))
    sp = ppo.split_holdout
    check("klcontrol: the held-out episodes are the permutation's last round(share x n), at least one, none of one episode",
          [len(x) for x in sp(torch.arange(16), 0.125)] == [14, 2] and [len(x) for x in sp(torch.arange(3), 0.125)] == [2, 1]
          and [len(x) for x in sp(torch.arange(1), 0.125)] == [1, 0] and [len(x) for x in sp(torch.arange(16), 0.0)] == [16, 0]
          and sp(torch.arange(16), 0.125)[1].tolist() == [14, 15])

    def update(target, coef=0.02):
        torch.manual_seed(1)
        c = {"vocab": 300, "hidden": 32, "layers": 1, "heads": 2, "kv_heads": 1, "ffn": 64, "rope_theta": 10000.0}
        model = PolicyLM(c)
        ref = PolicyLM(c).requires_grad_(False)
        ref.load_state_dict(model.state_dict())
        with torch.no_grad():  # a rollout policy already away from the reference
            for q in model.parameters():
                q.add_(torch.randn_like(q) * 0.05)
        opt = torch.optim.AdamW(model.parameters(), lr=3e-3)
        g = torch.Generator().manual_seed(2)
        prompts = [torch.randint(1, 300, (5,), generator=g).tolist() for _ in range(16)]
        with torch.no_grad():  # episodes sampled from the rollout policy, as in PPO (15 tokens each, no stop token)
            outs = Sampler(model, torch.float32, set(), 0, False).generate(prompts, 15, 1.0, g)
        seqs = [p + o for p, o in zip(prompts, outs)]
        masks = [[0] * 5 + [1] * len(o) for o in outs]
        cfg = {"max_grad_norm": 0.5, "ppo": {"clip": 0.2, "target_kl": target, "kl_stop": 1.5, "batch": 4, "epochs": 4, "gamma": 1.0, "lam": 0.95,
                                             "vf_coef": 0.5, "ent_coef": 0.01, "kl_horizon": 10, "adaptive_kl": True, "kl_holdout": 0.125}}
        args = type("A", (), {"pad_id": 0, "ppo_gen": torch.Generator().manual_seed(3)})()
        rewards = [float(i % 2) for i in range(16)]
        return ppo.ppo_step(model, ref, opt, seqs, masks, rewards, cfg, coef, args, contextlib.nullcontext, torch.device("cpu"))

    _, kl, coef, t, _ = update(1e-6)
    check("klcontrol: over the target from the start, every minibatch is a pull-back step and the held-out episodes' KL falls; the coefficient rises 20 %",
          t["pullbacks"] == t["updates"] == t["updates_max"] == 16 and t["heldout_episodes"] == 2 and t["kl_exact"] > 0 and kl > 0
          and t["kl_projected"] < 0.5 * t["kl_exact"] and abs(coef - 0.024) < 1e-12, str(t))
    _, _, coef, t, _ = update(10.0)
    check("klcontrol: a far target runs the PPO loss in every minibatch of every epoch (no pull-back), and the coefficient falls 20 %",
          t["pullbacks"] == 0 and t["updates"] == t["updates_max"] == 16 and abs(coef - 0.016) < 1e-12, str(t))
    free = t["kl_projected"]
    _, _, _, t, _ = update(10.0, coef=50.0)
    check("klcontrol: with a large coefficient the KL loss term itself lowers the held-out KL (no pull-back step)",
          t["pullbacks"] == 0 and t["kl_projected"] < t["kl_exact"] and t["kl_projected"] < free, f"{t} vs kl_coef 0.02: {free}")


if __name__ == "__main__":
    main()
