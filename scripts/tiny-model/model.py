"""A small Qwen2-style decoder: RMSNorm, rotary positions, grouped-query attention with q/k/v biases, SwiGLU, tied
embeddings. forward() takes and returns the key/value cache in the layout of Hugging Face Optimum's decoder export
([batch, kv_heads, sequence, head_dim] per layer), so the traced ONNX graph has the same signature."""
import math
from dataclasses import dataclass, asdict

import torch
import torch.nn as nn
import torch.nn.functional as F


@dataclass
class Config:
    vocab_size: int = 515
    hidden_size: int = 192
    intermediate_size: int = 512
    num_hidden_layers: int = 4
    num_attention_heads: int = 3
    num_key_value_heads: int = 1
    rope_theta: float = 10000.0
    rms_norm_eps: float = 1e-6
    max_position_embeddings: int = 4096

    @property
    def head_dim(self):
        return self.hidden_size // self.num_attention_heads

    def hf_config(self, bos, eos, pad):
        d = asdict(self)
        d.update({"architectures": ["Qwen2ForCausalLM"], "model_type": "qwen2", "hidden_act": "silu",
                  "tie_word_embeddings": True, "use_cache": True, "torch_dtype": "float32",
                  "bos_token_id": bos, "eos_token_id": eos, "pad_token_id": pad, "head_dim": self.head_dim,
                  "attention_dropout": 0.0, "use_sliding_window": False, "sliding_window": None})
        return d


class RMSNorm(nn.Module):
    def __init__(self, dim, eps):
        super().__init__()
        self.weight = nn.Parameter(torch.ones(dim))
        self.eps = eps

    def forward(self, x):
        return self.weight * (x * torch.rsqrt(x.pow(2).mean(-1, keepdim=True) + self.eps))


def rotate_half(x):
    half = x.shape[-1] // 2
    return torch.cat((-x[..., half:], x[..., :half]), dim=-1)


class Attention(nn.Module):
    def __init__(self, cfg):
        super().__init__()
        self.h, self.kvh, self.hd = cfg.num_attention_heads, cfg.num_key_value_heads, cfg.head_dim
        self.q_proj = nn.Linear(cfg.hidden_size, self.h * self.hd, bias=True)
        self.k_proj = nn.Linear(cfg.hidden_size, self.kvh * self.hd, bias=True)
        self.v_proj = nn.Linear(cfg.hidden_size, self.kvh * self.hd, bias=True)
        self.o_proj = nn.Linear(self.h * self.hd, cfg.hidden_size, bias=False)

    def forward(self, x, cos, sin, bias, past_k, past_v):
        b, t, _ = x.shape
        q = self.q_proj(x).view(b, t, self.h, self.hd).transpose(1, 2)
        k = self.k_proj(x).view(b, t, self.kvh, self.hd).transpose(1, 2)
        v = self.v_proj(x).view(b, t, self.kvh, self.hd).transpose(1, 2)
        q = q * cos + rotate_half(q) * sin
        k = k * cos + rotate_half(k) * sin
        k = torch.cat([past_k, k], dim=2)
        v = torch.cat([past_v, v], dim=2)
        group = self.h // self.kvh
        # [b, kvh, s, hd] -> [b, h, s, hd], each key/value head shared by `group` query heads
        kk = k.unsqueeze(2).expand(b, self.kvh, group, k.shape[2], self.hd).reshape(b, self.h, k.shape[2], self.hd)
        vv = v.unsqueeze(2).expand(b, self.kvh, group, v.shape[2], self.hd).reshape(b, self.h, v.shape[2], self.hd)
        # Scaling q (small) rather than the scores (large) and adding the mask in place keep attention cheap on CPU.
        scores = torch.matmul(q * (1.0 / math.sqrt(self.hd)), kk.transpose(2, 3))
        scores += bias
        out = torch.matmul(torch.softmax(scores, dim=-1), vv)
        return self.o_proj(out.transpose(1, 2).reshape(b, t, self.h * self.hd)), k, v


class MLP(nn.Module):
    def __init__(self, cfg):
        super().__init__()
        self.gate_proj = nn.Linear(cfg.hidden_size, cfg.intermediate_size, bias=False)
        self.up_proj = nn.Linear(cfg.hidden_size, cfg.intermediate_size, bias=False)
        self.down_proj = nn.Linear(cfg.intermediate_size, cfg.hidden_size, bias=False)

    def forward(self, x):
        return self.down_proj(F.silu(self.gate_proj(x)) * self.up_proj(x))


class Layer(nn.Module):
    def __init__(self, cfg):
        super().__init__()
        self.input_layernorm = RMSNorm(cfg.hidden_size, cfg.rms_norm_eps)
        self.self_attn = Attention(cfg)
        self.post_attention_layernorm = RMSNorm(cfg.hidden_size, cfg.rms_norm_eps)
        self.mlp = MLP(cfg)

    def forward(self, x, cos, sin, bias, past_k, past_v):
        a, k, v = self.self_attn(self.input_layernorm(x), cos, sin, bias, past_k, past_v)
        x = x + a
        return x + self.mlp(self.post_attention_layernorm(x)), k, v


class Decoder(nn.Module):
    def __init__(self, cfg):
        super().__init__()
        self.cfg = cfg
        self.embed_tokens = nn.Embedding(cfg.vocab_size, cfg.hidden_size)
        self.layers = nn.ModuleList([Layer(cfg) for _ in range(cfg.num_hidden_layers)])
        self.norm = RMSNorm(cfg.hidden_size, cfg.rms_norm_eps)
        inv = 1.0 / (cfg.rope_theta ** (torch.arange(0, cfg.head_dim, 2, dtype=torch.float32) / cfg.head_dim))
        self.register_buffer("inv_freq", inv, persistent=False)
        self.apply(self._init)

    @staticmethod
    def _init(m):
        if isinstance(m, nn.Linear):
            nn.init.normal_(m.weight, std=0.02)
            if m.bias is not None:
                nn.init.zeros_(m.bias)
        elif isinstance(m, nn.Embedding):
            nn.init.normal_(m.weight, std=0.02)

    def empty_cache(self, batch):
        c = self.cfg
        z = torch.zeros(batch, c.num_key_value_heads, 0, c.head_dim)
        return [(z, z) for _ in range(c.num_hidden_layers)]

    def forward(self, input_ids, attention_mask, position_ids, past):
        """past: list of (key, value) per layer, each [batch, kv_heads, past_len, head_dim] (past_len may be 0).
        attention_mask: [batch, past_len + seq_len], 1 for real tokens. Returns logits and the new cache."""
        x = self.embed_tokens(input_ids)
        freqs = position_ids.to(torch.float32).unsqueeze(-1) * self.inv_freq
        emb = torch.cat([freqs, freqs], dim=-1).unsqueeze(1)
        cos, sin = emb.cos(), emb.sin()
        # Causal mask built from tensor ops only, so the traced graph follows the real lengths at run time.
        key_index = torch.cumsum(torch.ones_like(attention_mask[0]), 0) - 1
        step = torch.cumsum(torch.ones_like(input_ids[0]), 0) - 1
        query_index = key_index[-1:] - step[-1:] + step
        allowed = (key_index.unsqueeze(0) <= query_index.unsqueeze(1)).unsqueeze(0).unsqueeze(0)
        allowed = allowed & (attention_mask[:, None, None, :] > 0)
        bias = torch.zeros(allowed.shape, dtype=x.dtype).masked_fill(~allowed, -1e9)
        presents = []
        for layer, (pk, pv) in zip(self.layers, past):
            x, k, v = layer(x, cos, sin, bias, pk, pv)
            presents.append((k, v))
        logits = F.linear(self.norm(x), self.embed_tokens.weight)
        return logits, presents


class OnnxWrapper(nn.Module):
    """Flat inputs and outputs in Optimum's order, for torch.onnx.export."""

    def __init__(self, model):
        super().__init__()
        self.model = model

    def forward(self, input_ids, attention_mask, position_ids, *flat_past):
        past = [(flat_past[2 * i], flat_past[2 * i + 1]) for i in range(len(flat_past) // 2)]
        logits, presents = self.model(input_ids, attention_mask, position_ids, past)
        out = [logits]
        for k, v in presents:
            out += [k, v]
        return tuple(out)
