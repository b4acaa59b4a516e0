"""A Llama/Qwen3-shaped causal LM in plain PyTorch (RMSNorm, RoPE, grouped-query attention with
per-head q/k RMSNorm as in Qwen3, SwiGLU MLP, untied output head) plus a scalar value head, and a
batched sampler over a static KV cache.

Plain PyTorch rather than transformers' Qwen3ForCausalLM so that the same file runs on CI's Debian
torch (1.13, no transformers) and on the GPU (2.x: scaled_dot_product_attention, torch.compile of
the one-token decode step over the static cache, which CUDA graphs then replay). Parameter names
follow the Hugging Face Llama/Qwen3 layout, so the safetensors weights map onto a Qwen3 checkpoint.
"""
import math

import torch
import torch.nn as nn
import torch.nn.functional as F

HAS_SDPA = hasattr(F, "scaled_dot_product_attention")
TORCH_VER = tuple(int(x) for x in torch.__version__.split("+")[0].split(".")[:2])
HAS_GQA_SDPA = HAS_SDPA and TORCH_VER >= (2, 5)  # scaled_dot_product_attention(enable_gqa=True)
# train.py --deterministic sets this: masked attention (the SFT document mask) by the explicit softmax
# below, whose backward is plain matmuls: SDPA's kernels for an arbitrary mask accumulate gradients
# with atomics, and with them two runs of the same SFT steps differed in the last bits (measured:
# bench/results/torch_ppo.md, resume); GQA repeats k/v heads (SDPA without enable_gqa) as before.
DETERMINISTIC_ATTENTION = False
try:  # FlexAttention: block-sparse attention under a mask function (compiled to one kernel by torch.compile)
    from torch.nn.attention.flex_attention import BlockMask, create_block_mask, flex_attention
except ImportError:
    BlockMask = create_block_mask = flex_attention = None


class RMSNorm(nn.Module):
    def __init__(self, d, eps=1e-6):
        super().__init__()
        self.weight = nn.Parameter(torch.ones(d))
        self.eps = eps

    def forward(self, x):
        xf = x.float()
        return (xf * torch.rsqrt(xf.pow(2).mean(-1, keepdim=True) + self.eps)).to(x.dtype) * self.weight


def rope_angles(pos, d, theta):
    """float32 cos, sin [B, 1, T, D/2] of the rotary embedding at integer positions pos [B, T] (computed once per forward)."""
    inv = 1.0 / (theta ** (torch.arange(0, d, 2, device=pos.device, dtype=torch.float32) / d))
    ang = pos.float()[:, None, :, None] * inv
    return torch.cos(ang), torch.sin(ang)


def rope(x, cs):
    """Rotary embedding of x [B, H, T, D] with (cos, sin) from rope_angles."""
    cos, sin = cs[0].to(x.dtype), cs[1].to(x.dtype)
    d = x.shape[-1]
    x1, x2 = x[..., : d // 2], x[..., d // 2:]
    return torch.cat([x1 * cos - x2 * sin, x2 * cos + x1 * sin], dim=-1)


def is_block_mask(mask):
    return BlockMask is not None and isinstance(mask, BlockMask)


def doc_positions(doc):
    """Positions that restart at 0 at every document of a packed row; doc [B, T] (document index per token, non-decreasing)."""
    t = torch.arange(doc.shape[1], device=doc.device).expand_as(doc)
    start = torch.zeros_like(doc, dtype=torch.bool)
    start[:, 0] = True
    start[:, 1:] = doc[:, 1:] != doc[:, :-1]
    first = torch.where(start, t, torch.zeros_like(t)).cummax(1).values
    return t - first


def doc_mask(doc):
    """Dense bool mask [B, 1, T, T] of document-causal attention (True = may attend): the same document, not later."""
    t = doc.shape[1]
    causal = torch.ones(t, t, dtype=torch.bool, device=doc.device).tril()
    return (doc[:, None, :, None] == doc[:, None, None, :]) & causal


class DocBlockMasks:
    """FlexAttention BlockMasks of document-causal attention; blocks wholly across documents are
    skipped. One mask function per row shape, reading a persistent buffer that each call refills,
    so a compiled model sees the same mask function every step (no recompilation)."""

    def __init__(self):
        self.buf, self.mod = {}, {}

    def __call__(self, doc):
        key = tuple(doc.shape)
        if key not in self.buf:
            buf = self.buf[key] = torch.zeros_like(doc)

            def mask_mod(b, h, q, kv):
                return (buf[b, q] == buf[b, kv]) & (q >= kv)
            self.mod[key] = mask_mod
        self.buf[key].copy_(doc)
        return create_block_mask(self.mod[key], doc.shape[0], None, doc.shape[1], doc.shape[1], device=doc.device)


_DOC_BLOCK_MASKS = DocBlockMasks()


def doc_block_mask(doc):
    return _DOC_BLOCK_MASKS(doc)


def attend(q, k, v, mask, causal):
    """q [B,H,Tq,D], k/v [B,KV,Tk,D] (KV divides H: grouped-query); mask: bool [B,1,Tq|1,Tk] (True = may
    attend), a FlexAttention BlockMask, or None (then plain causal when `causal`)."""
    g = q.shape[1] // k.shape[1]
    if is_block_mask(mask):  # flex_attention is no autocast op: q, k (fp32 after their RMSNorm under autocast) take v's dtype
        return flex_attention(q.to(v.dtype), k.to(v.dtype), v, block_mask=mask, enable_gqa=g > 1)
    if HAS_GQA_SDPA and not DETERMINISTIC_ATTENTION:
        kw = {"enable_gqa": True} if g > 1 else {}
        if mask is None:
            return F.scaled_dot_product_attention(q, k, v, is_causal=causal, **kw)
        return F.scaled_dot_product_attention(q, k, v, attn_mask=mask, **kw)
    if g > 1:
        k, v = k.repeat_interleave(g, dim=1), v.repeat_interleave(g, dim=1)
    if HAS_SDPA and not (DETERMINISTIC_ATTENTION and mask is not None and q.requires_grad):
        if mask is None:
            return F.scaled_dot_product_attention(q, k, v, is_causal=causal)
        return F.scaled_dot_product_attention(q, k, v, attn_mask=mask)
    s = (q @ k.transpose(-1, -2)) / math.sqrt(q.shape[-1])
    if mask is None and causal:
        tq, tk = q.shape[-2], k.shape[-2]
        mask = torch.ones(tq, tk, dtype=torch.bool, device=q.device).tril(tk - tq)
    if mask is not None:
        s = s.masked_fill(~mask, float("-inf"))
    return torch.softmax(s.float(), dim=-1).to(q.dtype) @ v


class Block(nn.Module):
    def __init__(self, c):
        super().__init__()
        d, h, kv, hd = c["hidden"], c["heads"], c["kv_heads"], head_dim(c)
        self.h, self.kv, self.hd, self.theta = h, kv, hd, c["rope_theta"]
        eps = c.get("rms_eps", 1e-6)
        self.input_layernorm = RMSNorm(d, eps)
        self.q_proj = nn.Linear(d, h * hd, bias=False)
        self.k_proj = nn.Linear(d, kv * hd, bias=False)
        self.v_proj = nn.Linear(d, kv * hd, bias=False)
        self.o_proj = nn.Linear(h * hd, d, bias=False)
        self.q_norm, self.k_norm = RMSNorm(hd, eps), RMSNorm(hd, eps)
        self.post_attention_layernorm = RMSNorm(d, eps)
        self.gate_proj = nn.Linear(d, c["ffn"], bias=False)
        self.up_proj = nn.Linear(d, c["ffn"], bias=False)
        self.down_proj = nn.Linear(c["ffn"], d, bias=False)

    def forward(self, x, cs, mask, cache=None, at=None):
        b, t, _ = x.shape
        y = self.input_layernorm(x)
        q = self.q_norm(self.q_proj(y).view(b, t, self.h, self.hd)).transpose(1, 2)
        k = self.k_norm(self.k_proj(y).view(b, t, self.kv, self.hd)).transpose(1, 2)
        v = self.v_proj(y).view(b, t, self.kv, self.hd).transpose(1, 2)
        q, k = rope(q, cs), rope(k, cs)
        if cache is not None:  # static cache [B, KV, Tmax, D]: write at `at`, attend over all of it under `mask`
            kc, vc = cache
            kc.index_copy_(2, at, k)
            vc.index_copy_(2, at, v)
            k, v = kc, vc
        g = self.h // self.kv
        if cache is not None and g > 1:
            # grouped-query attention without copying the cache: the g query heads of one kv head become
            # g x t query rows against that kv head, and the mask is repeated over them
            tq = q.shape[2]
            qg = q.reshape(b, self.kv, g * tq, self.hd)
            mg = mask[:, :, None].expand(-1, -1, g, -1, -1).reshape(b, 1, g * tq, mask.shape[-1])
            a = attend(qg, k, v, mg, causal=False).reshape(b, self.h, tq, self.hd)
        else:
            a = attend(q, k, v, mask, causal=cache is None and mask is None)
        x = x + self.o_proj(a.transpose(1, 2).reshape(b, t, self.h * self.hd))
        y = self.post_attention_layernorm(x)
        return x + self.down_proj(F.silu(self.gate_proj(y)) * self.up_proj(y))


class PolicyLM(nn.Module):
    """Causal LM + value head. forward(ids, pos, mask) -> (logits, values). For packed rows, pos
    restarts at every document (doc_positions) and mask is doc_mask / doc_block_mask."""

    def __init__(self, c):
        super().__init__()
        self.c = dict(c)
        self.embed_tokens = nn.Embedding(c["vocab"], c["hidden"])
        self.layers = nn.ModuleList(Block(c) for _ in range(c["layers"]))
        self.norm = RMSNorm(c["hidden"], c.get("rms_eps", 1e-6))
        self.lm_head = nn.Linear(c["hidden"], c["vocab"], bias=False)
        self.value_head = nn.Linear(c["hidden"], 1)
        for m in self.modules():
            if isinstance(m, (nn.Linear, nn.Embedding)):
                nn.init.normal_(m.weight, std=0.02)
        nn.init.zeros_(self.value_head.weight)
        nn.init.zeros_(self.value_head.bias)

    def hidden(self, ids, pos=None, mask=None, caches=None, at=None):
        x = self.embed_tokens(ids)
        if pos is None:
            pos = torch.arange(ids.shape[1], device=ids.device).expand(ids.shape[0], -1)
        cs = rope_angles(pos, head_dim(self.c), self.c["rope_theta"])
        for i, layer in enumerate(self.layers):
            x = layer(x, cs, mask, None if caches is None else caches[i], at)
        return self.norm(x)

    def forward(self, ids, pos=None, mask=None):
        h = self.hidden(ids, pos, mask)
        return self.lm_head(h), self.value_head(h).squeeze(-1)


def head_dim(c):
    return c.get("head_dim") or c["hidden"] // c["heads"]


def count_params(c):
    d, f, L, hd = c["hidden"], c["ffn"], c["layers"], head_dim(c)
    per = d * hd * (c["heads"] * 2 + c["kv_heads"] * 2) + 3 * d * f
    return {"blocks": L * per, "embed": c["vocab"] * d, "head": c["vocab"] * d}


def train_flops_per_token(c, seq):
    """6 N (N: the matmul parameters: blocks + output head) + 6 L d S for causal attention over S tokens (half of PaLM's 12 L d S)."""
    p = count_params(c)
    return 6 * (p["blocks"] + p["head"]) + 6 * c["layers"] * c["heads"] * head_dim(c) * seq


def train_flops(c, doc_lens):
    """Model FLOPs of one training step (forward + backward) over packed documents of these lengths,
    padding excluded: 6 N per token + 6 L d l^2 per document of length l (causal attention inside
    the document only: what document masking computes; d = heads x head_dim)."""
    p = count_params(c)
    n = sum(doc_lens)
    return 6 * (p["blocks"] + p["head"]) * n + 6 * c["layers"] * c["heads"] * head_dim(c) * sum(x * x for x in doc_lens)
