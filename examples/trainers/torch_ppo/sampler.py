"""Batched sampling over a static KV cache.

Prompts are left-padded to one length P; the cache holds P + max_new positions per layer. One
prefill writes the prompts' keys and values, then each decode step writes one position and
attends over the whole cache under a mask of the valid positions, so every decode step has the
same shapes: on CUDA it is captured once as a CUDA graph and replayed (`graphs=True`), which
removes the per-kernel launch cost that dominates a small model's decoding. Sampling (temperature,
a torch.Generator seeded by the caller) runs outside the graph.
"""
from collections import OrderedDict

import torch


class Sampler:
    def __init__(self, model, dtype, stop_ids, pad_id, graphs):
        self.m, self.dtype, self.pad = model, dtype, pad_id
        self.stop = torch.tensor(sorted(stop_ids), dtype=torch.long)
        self.stop_list = set(stop_ids)
        self.graphs = graphs
        self.bucket = 64
        self.max_graphs = 4
        self._graphs = OrderedDict()  # (batch, cache length) -> (graph, static inputs, static output), least recent first

    def _caches(self, b, tmax, dev):
        c = self.m.c
        hd = c.get("head_dim") or c["hidden"] // c["heads"]
        return [(torch.zeros(b, c["kv_heads"], tmax, hd, device=dev, dtype=self.dtype),
                 torch.zeros(b, c["kv_heads"], tmax, hd, device=dev, dtype=self.dtype)) for _ in range(c["layers"])]

    def _step(self, caches, tok, pos, at, mask):
        h = self.m.hidden(tok, pos, mask, caches, at)
        return self.m.lm_head(h[:, -1]).float()

    def _graphed_step(self, b, tmax, dev):
        key = (b, tmax)
        if key in self._graphs:
            self._graphs.move_to_end(key)
            return self._graphs[key]
        while len(self._graphs) >= self.max_graphs:
            self._graphs.popitem(last=False)
        s = {"tok": torch.zeros(b, 1, dtype=torch.long, device=dev), "pos": torch.zeros(b, 1, dtype=torch.long, device=dev),
             "at": torch.zeros(1, dtype=torch.long, device=dev), "mask": torch.zeros(b, 1, 1, tmax, dtype=torch.bool, device=dev),
             "caches": self._caches(b, tmax, dev)}
        side = torch.cuda.Stream()
        side.wait_stream(torch.cuda.current_stream())
        with torch.cuda.stream(side):
            for _ in range(2):
                self._step(s["caches"], s["tok"], s["pos"], s["at"], s["mask"])
        torch.cuda.current_stream().wait_stream(side)
        g = torch.cuda.CUDAGraph()
        with torch.cuda.graph(g):
            out = self._step(s["caches"], s["tok"], s["pos"], s["at"], s["mask"])
        self._graphs[key] = (g, s, out)
        return self._graphs[key]

    @torch.no_grad()
    def generate(self, prompts, max_new, temperature, gen):
        """prompts: lists of ids. Returns (lists of new ids, each ending at its first stop id or at max_new)."""
        dev = next(self.m.parameters()).device
        n = len(prompts)
        use_graph = self.graphs and dev.type == "cuda"
        if use_graph:  # batch in buckets too (filler rows repeat the first prompt and are dropped)
            prompts = list(prompts) + [prompts[0]] * (-(-n // self.bucket) * self.bucket - n)
        b, p = len(prompts), max(len(x) for x in prompts)
        p = -(-p // self.bucket) * self.bucket  # lengths in buckets: fewer distinct shapes, fewer graph captures
        tmax = p + max_new
        ids = torch.full((b, p), self.pad, dtype=torch.long)
        valid = torch.zeros(b, tmax, dtype=torch.bool)
        for i, x in enumerate(prompts):
            ids[i, p - len(x):] = torch.tensor(x)
            valid[i, p - len(x):] = True
        ids, valid = ids.to(dev), valid.to(dev)
        pos = (valid[:, :p].long().cumsum(1) - 1).clamp(min=0)
        if use_graph:  # capture (or reuse) the decode graph BEFORE the prefill: its warm-up writes into the cache
            g, s, gout = self._graphed_step(b, tmax, dev)
            caches = s["caches"]
            for kc, vc in caches:
                kc.zero_()
                vc.zero_()
        else:
            caches = self._caches(b, tmax, dev)
        ar = torch.arange(tmax, device=dev)
        causal = ar[None, None, None, :] <= ar[:p][None, None, :, None]
        # a padding position attends to itself only, so its (unused) keys stay finite: 0 x NaN would poison the valid rows
        pmask = (valid[:, None, None, :] & causal) | (ar[None, None, None, :] == ar[:p][None, None, :, None])
        logits = self._step(caches, ids, pos, ar[:p], pmask)
        valid[:, p:] = True
        last = pos[:, -1:]
        stop = self.stop.to(dev)
        out = torch.full((b, max_new), self.pad, dtype=torch.long, device=dev)
        done = torch.zeros(b, dtype=torch.bool, device=dev)
        for t in range(max_new):
            probs = torch.softmax(logits / max(temperature, 1e-6), dim=-1)
            nxt = torch.multinomial(probs, 1, generator=gen).squeeze(1) if temperature > 0 else logits.argmax(-1)
            nxt = torch.where(done, torch.full_like(nxt, self.pad), nxt)
            out[:, t] = nxt
            done = done | torch.isin(nxt, stop) if hasattr(torch, "isin") else done | (nxt[:, None] == stop).any(1)
            if t == max_new - 1 or (t % 8 == 7 and bool(done.all())):
                break
            last = last + 1
            mask = (valid & (ar[None, :] <= p + t))[:, None, None, :]
            at = torch.tensor([p + t], device=dev)
            if use_graph:
                s["tok"].copy_(nxt[:, None])
                s["pos"].copy_(last)
                s["at"].copy_(at)
                s["mask"].copy_(mask)
                g.replay()
                logits = gout
            else:
                logits = self._step(caches, nxt[:, None], last, at, mask)
        res = []
        for row in out[:n].tolist():
            new = []
            for x in row:
                if x == self.pad:
                    break
                new.append(x)
                if x in self.stop_list:
                    break
            res.append(new)
        return res
