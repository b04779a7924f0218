"""The tiny model on transformers' own Qwen2ForCausalLM: its config, greedy decoding with the key/value cache the way
the `onnx` backend decodes (prefill, then one token a step), and the ONNX export in Hugging Face Optimum's decoder
signature, which is what src/core/models/onnx loads:

    inputs  input_ids, attention_mask, position_ids, past_key_values.{i}.key, past_key_values.{i}.value
    outputs logits, present.{i}.key, present.{i}.value

with dynamic batch, sequence and past axes, the first step fed a zero-length cache. optimum's exporter cannot be
installed beside the engines (optimum-onnx 0.1 pins transformers < 5), so this uses torch's own exporter on the same
signature; docs/python.md says more.
"""

from __future__ import annotations

from typing import Any

import torch
from transformers import DynamicCache, Qwen2Config, Qwen2ForCausalLM

# The shape the committed model has: d=192, 4 layers, 3 query heads and 1 key/value head of 64, SwiGLU 512.
SHAPE: dict[str, Any] = {
    "hidden_size": 192,
    "intermediate_size": 512,
    "num_hidden_layers": 4,
    "num_attention_heads": 3,
    "num_key_value_heads": 1,
    "head_dim": 64,
    "max_position_embeddings": 4096,
    "rope_theta": 10000.0,
    "rms_norm_eps": 1e-6,
}


def make_config(vocab_size: int, eos_token_id: int, pad_token_id: int) -> Qwen2Config:
    return Qwen2Config(
        vocab_size=vocab_size,
        tie_word_embeddings=True,
        use_sliding_window=False,
        bos_token_id=None,
        eos_token_id=eos_token_id,
        pad_token_id=pad_token_id,
        **SHAPE,
    )


def new_model(config: Qwen2Config) -> Qwen2ForCausalLM:
    model = Qwen2ForCausalLM(config)
    model.config.architectures = ["Qwen2ForCausalLM"]
    return model


@torch.no_grad()
def greedy(model: Qwen2ForCausalLM, prompt_ids: list[int], max_new: int, stop_ids: set[int]) -> list[int]:
    """Greedy decoding with the key/value cache: the prompt in one step, then one token a step (as the onnx backend)."""
    model.eval()
    cache = DynamicCache(config=model.config)
    ids = torch.tensor([prompt_ids])
    out: list[int] = []
    total = len(prompt_ids)
    pos = torch.arange(total).unsqueeze(0)
    for _ in range(max_new):
        logits = model(
            input_ids=ids,
            attention_mask=torch.ones(1, total, dtype=torch.long),
            position_ids=pos,
            past_key_values=cache,
            use_cache=True,
        ).logits
        nxt = int(torch.argmax(logits[0, -1]))
        out.append(nxt)
        if nxt in stop_ids:
            break
        ids = torch.tensor([[nxt]])
        pos = torch.tensor([[total]])
        total += 1
    return out


class _OptimumSignature(torch.nn.Module):
    """Flat past tensors in, flat present tensors out, around the model's DynamicCache."""

    def __init__(self, model: Qwen2ForCausalLM):
        super().__init__()
        self.model = model
        self.layers = model.config.num_hidden_layers

    def forward(self, input_ids, attention_mask, position_ids, *past):
        cache = DynamicCache(config=self.model.config)
        for i in range(self.layers):
            cache.update(past[2 * i], past[2 * i + 1], i)
        out = self.model(
            input_ids=input_ids,
            attention_mask=attention_mask,
            position_ids=position_ids,
            past_key_values=cache,
            use_cache=True,
        )
        flat = []
        for layer in out.past_key_values.layers:
            flat += [layer.keys, layer.values]
        return (out.logits, *flat)


def export_onnx(model: Qwen2ForCausalLM, path: str, opset: int = 17) -> None:
    """Writes `path` in the Optimum decoder signature and checks it with onnx's checker."""
    import onnx

    cfg = model.config
    model.eval()
    # Export with eager attention: the same arithmetic as SDPA, and a graph torch's exporter traces plainly.
    previous = cfg._attn_implementation
    model.set_attn_implementation("eager")
    try:
        past_len, seq = 2, 3
        # A config without head_dim has hidden_size / heads (transformers/models/qwen2/modeling_qwen2.py does the same);
        # one without num_key_value_heads has as many as query heads (models/qwen2/configuration_qwen2.py).
        head_dim = cfg.head_dim or cfg.hidden_size // cfg.num_attention_heads
        kv_heads = cfg.num_key_value_heads or cfg.num_attention_heads
        past = [torch.zeros(1, kv_heads, past_len, head_dim) for _ in range(2 * cfg.num_hidden_layers)]
        args = (
            torch.tensor([[5, 6, 7]]),
            torch.ones(1, past_len + seq, dtype=torch.long),
            torch.tensor([[past_len, past_len + 1, past_len + 2]]),
            *past,
        )
        names_in = ["input_ids", "attention_mask", "position_ids"]
        names_out = ["logits"]
        axes = {
            "input_ids": {0: "batch_size", 1: "sequence_length"},
            "attention_mask": {0: "batch_size", 1: "total_sequence_length"},
            "position_ids": {0: "batch_size", 1: "sequence_length"},
            "logits": {0: "batch_size", 1: "sequence_length"},
        }
        for i in range(cfg.num_hidden_layers):
            for kind in ("key", "value"):
                names_in.append(f"past_key_values.{i}.{kind}")
                names_out.append(f"present.{i}.{kind}")
                axes[names_in[-1]] = {0: "batch_size", 2: "past_sequence_length"}
                axes[names_out[-1]] = {0: "batch_size", 2: "total_sequence_length"}
        torch.onnx.export(
            _OptimumSignature(model),
            args,
            path,
            input_names=names_in,
            output_names=names_out,
            dynamic_axes=axes,
            opset_version=opset,
            do_constant_folding=True,
            dynamo=False,
        )
    finally:
        model.set_attn_implementation(previous)
    onnx.checker.check_model(onnx.load(path))
