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


class RMSNorm(nn.Module):
    def __init__(self, d, eps=1e-6):
        super().__init__()
        self.weight = nn.Parameter(torch.ones(d))
        self.eps = eps

    def forward(self, x):
        xf = x.float()
        return (xf * torch.rsqrt(xf.pow(2).mean(-1, keepdim=True) + self.eps)).to(x.dtype) * self.weight


def rope(x, pos, theta):
    """Rotary embedding of x [B, H, T, D] at integer positions pos [B, T]."""
    d = x.shape[-1]
    inv = 1.0 / (theta ** (torch.arange(0, d, 2, device=x.device, dtype=torch.float32) / d))
    ang = pos.float()[:, None, :, None] * inv
    cos, sin = torch.cos(ang).to(x.dtype), torch.sin(ang).to(x.dtype)
    x1, x2 = x[..., : d // 2], x[..., d // 2:]
    return torch.cat([x1 * cos - x2 * sin, x2 * cos + x1 * sin], dim=-1)


def attend(q, k, v, mask, causal):
    """q [B,H,Tq,D], k/v [B,H,Tk,D]; mask: bool [B,1,Tq|1,Tk] (True = may attend) or None."""
    if HAS_SDPA:
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

    def forward(self, x, pos, mask, cache=None, at=None):
        b, t, _ = x.shape
        y = self.input_layernorm(x)
        q = self.q_norm(self.q_proj(y).view(b, t, self.h, self.hd)).transpose(1, 2)
        k = self.k_norm(self.k_proj(y).view(b, t, self.kv, self.hd)).transpose(1, 2)
        v = self.v_proj(y).view(b, t, self.kv, self.hd).transpose(1, 2)
        q, k = rope(q, pos, self.theta), rope(k, pos, self.theta)
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
            if g > 1:
                k, v = k.repeat_interleave(g, dim=1), v.repeat_interleave(g, dim=1)
            a = attend(q, k, v, mask, causal=cache is None and mask is None)
        x = x + self.o_proj(a.transpose(1, 2).reshape(b, t, self.h * self.hd))
        y = self.post_attention_layernorm(x)
        return x + self.down_proj(F.silu(self.gate_proj(y)) * self.up_proj(y))


class PolicyLM(nn.Module):
    """Causal LM + value head. forward(ids, pos, mask) -> (logits, values, hidden)."""

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
        for i, layer in enumerate(self.layers):
            x = layer(x, pos, mask, None if caches is None else caches[i], at)
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
    """6 N (N: the matmul parameters: blocks + output head) + 6 L d S for causal attention (half of PaLM's 12 L d S)."""
    p = count_params(c)
    return 6 * (p["blocks"] + p["head"]) + 6 * c["layers"] * c["hidden"] * seq
