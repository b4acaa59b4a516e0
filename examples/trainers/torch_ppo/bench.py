#!/usr/bin/env python3
"""GPU throughput of the torch trainer's parts against baselines measured in the same run:
  matmul    the card's bf16 matrix-product ceiling (8192^3, median of CUDA-event timings)
  decode    the static-KV sampler, eager and with CUDA graphs, at batch 64 and 256, on pool prompts,
            no early stop (every row decodes --max-new tokens); baseline: transformers'
            Qwen3ForCausalLM.generate of the same shape (its default dynamic cache, eager)
  sft       one SFT step (forward, backward, AdamW) of transformers' Qwen3ForCausalLM, eager,
            non-fused AdamW (the naive baseline); the trainer's own SFT steps are measured by
            running train.py itself (its metrics lines), see gpu-run.sh
Writes a JSON report (argv[1]) and prints a table.
Usage: bench.py OUT.json POOL.jsonl            all of the above
       bench.py --sft-only OUT.json POOL.jsonl the matmul ceiling and the transformers SFT baseline only
"""
import json
import os
import statistics
import sys
import time

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
import torch  # noqa: E402

import episodes as E  # noqa: E402
from model import PolicyLM, count_params, train_flops_per_token  # noqa: E402
from sampler import Sampler  # noqa: E402
from train import SIZES  # noqa: E402
from vocab import Vocab  # noqa: E402


def cfg_of(size, vocab):
    h, L, nh, kv, ffn = SIZES[size]
    return {"vocab": vocab, "hidden": h, "layers": L, "heads": nh, "kv_heads": kv, "ffn": ffn, "rope_theta": 10000.0}


def timed(fn, reps):
    fn()
    torch.cuda.synchronize()
    out = []
    for _ in range(reps):
        t0 = time.perf_counter()
        fn()
        torch.cuda.synchronize()
        out.append(time.perf_counter() - t0)
    return statistics.median(out)


def matmul_ceiling():
    a = torch.randn(8192, 8192, device="cuda", dtype=torch.bfloat16)
    b = torch.randn(8192, 8192, device="cuda", dtype=torch.bfloat16)
    for _ in range(3):
        a @ b
    ts = []
    for _ in range(20):
        s, e = torch.cuda.Event(enable_timing=True), torch.cuda.Event(enable_timing=True)
        s.record()
        a @ b
        e.record()
        torch.cuda.synchronize()
        ts.append(s.elapsed_time(e) / 1000)
    return 2 * 8192**3 / statistics.median(ts)


def hf_model(c):
    from transformers import Qwen3Config, Qwen3ForCausalLM
    qc = Qwen3Config(vocab_size=c["vocab"], hidden_size=c["hidden"], num_hidden_layers=c["layers"], num_attention_heads=c["heads"],
                     num_key_value_heads=c["kv_heads"], intermediate_size=c["ffn"], head_dim=c["hidden"] // c["heads"],
                     max_position_embeddings=4096, tie_word_embeddings=False)
    return Qwen3ForCausalLM(qc).cuda()


def main():
    sft_only = sys.argv[1] == "--sft-only"
    out_path, pool_path = sys.argv[1 + sft_only], sys.argv[2 + sft_only]
    pool = [json.loads(x) for x in open(pool_path, encoding="utf-8") if x.strip()]
    vocab = Vocab.build([E.render_prompt(sc) + E.render_reference(sc) for sc in pool], 8000)
    prompts = [vocab.encode(E.render_prompt(sc)) for sc in pool]
    lens = sorted(len(p) for p in prompts)
    rep = {"card": torch.cuda.get_device_name(0), "torch": torch.__version__, "vocab": len(vocab),
           "prompt_tokens_p50_p90_max": [lens[len(lens) // 2], lens[int(len(lens) * 0.9)], lens[-1]], "rows": []}
    peak = matmul_ceiling()
    rep["matmul_bf16_flops_per_s"] = peak
    print(f"card {rep['card']}; bf16 matmul 8192^3: {peak / 1e12:.0f} TFLOP/s; prompts p50/p90/max {rep['prompt_tokens_p50_p90_max']} tokens", flush=True)
    max_new = 128
    for size in () if sft_only else ("base", "350m"):
        c = cfg_of(size, len(vocab))
        torch.manual_seed(0)
        m = PolicyLM(c).cuda().to(torch.bfloat16).eval()
        for graphs in (False, True):
            for b in (64, 256):
                s = Sampler(m, torch.bfloat16, set(), vocab.pad, graphs)
                g = torch.Generator(device="cuda").manual_seed(1)
                dt = timed(lambda: s.generate(prompts[:b], max_new, 1.0, g), 2)
                row = {"what": "decode", "impl": "static-KV + CUDA graphs" if graphs else "static-KV eager", "size": size, "batch": b,
                       "new_tokens": b * max_new, "seconds": dt, "tokens_per_s": b * max_new / dt}
                rep["rows"].append(row)
                print(json.dumps(row), flush=True)
                del s
                torch.cuda.empty_cache()
        del m
        try:
            hm = hf_model(c).to(torch.bfloat16).eval()
            b = 64
            p = torch.tensor([[vocab.pad] * (256 - len(x[-256:])) + x[-256:] for x in prompts[:b]], device="cuda")  # left-padded
            dt = timed(lambda: hm.generate(p, attention_mask=(p != vocab.pad).long(), max_new_tokens=32, min_new_tokens=32,
                                           do_sample=True, pad_token_id=vocab.pad), 1)
            row = {"what": "decode", "impl": "transformers generate (baseline)", "size": size, "batch": b, "new_tokens": b * 32,
                   "seconds": dt, "tokens_per_s": b * 32 / dt}
            rep["rows"].append(row)
            print(json.dumps(row), flush=True)
            del hm
        except Exception as e:  # noqa: BLE001 - the baseline is reported as missing, never invented
            rep["rows"].append({"what": "decode", "impl": "transformers generate (baseline)", "size": size, "error": repr(e)[:300]})
            print(f"transformers generate baseline failed: {e!r}", flush=True)
        torch.cuda.empty_cache()
    c = cfg_of("350m", len(vocab))
    try:
        hm = hf_model(c)
        opt = torch.optim.AdamW(hm.parameters(), lr=1e-4)
        rows, seq = 8, 2048
        x = torch.randint(300, len(vocab), (rows, seq), device="cuda")
        torch.cuda.reset_peak_memory_stats()

        def step():
            with torch.autocast("cuda", dtype=torch.bfloat16):
                loss = hm(input_ids=x, labels=x).loss
            opt.zero_grad(set_to_none=True)
            loss.backward()
            opt.step()
        dt = timed(step, 5)
        f = train_flops_per_token(c, seq) * rows * seq / dt
        row = {"what": "sft", "impl": "transformers Qwen3ForCausalLM eager, AdamW non-fused (baseline)", "size": "350m", "params": count_params(c),
               "tokens_per_step": rows * seq, "seconds": dt, "tokens_per_s": rows * seq / dt, "flops_per_s": f, "mfu_vs_989": f / 989.4e12,
               "peak_gb": torch.cuda.max_memory_allocated() / 2**30, "attention": "transformers default (sdpa), plain causal over the whole row"}
        rep["rows"].append(row)
        print(json.dumps(row), flush=True)
    except Exception as e:  # noqa: BLE001
        rep["rows"].append({"what": "sft", "impl": "transformers baseline", "error": repr(e)[:300]})
        print(f"transformers SFT baseline failed: {e!r}", flush=True)
    json.dump(rep, open(out_path, "w"), indent=2)


if __name__ == "__main__":
    main()
