"""A GRPO group shares its prompt: run it through the model once, for the loss and for every turn's generation.

A group's G rollouts answer the same prompt, and a text-to-SQL prompt (instructions and schema) is most of every
sequence: 2,189 of about 2,300 tokens for the tiny model's transit questions. TRL 1.16's
`GRPOTrainer._get_per_token_logps_and_entropies` (trl/trainer/grpo_trainer.py) runs the whole `prompt + completion` of
each row through the model, so the prompt's forward and backward are done G times. Here the prompt runs once (batch
1, with gradients, `use_cache=True`), its key/value cache is repeated G times (`DynamicCache.batch_repeat_interleave`,
transformers/cache_utils.py) and the completions run on top of it. The attention each completion token sees is the
same, so the log-probabilities (and their gradients: the cache keeps the graph) are those of the full forward, up to
float rounding; `test_shared_prefix.py` checks both against TRL's path.

Generation is shared the same way (`generate_shared`): each turn's batch prefills the tokens its conversations have
in common once and hands `generate` the repeated cache (transformers' prefix caching); with the same seed the
sampled tokens are those of the unshared path.

The loss path applies when rows come in runs with one prompt each (TRL's batch: G rows a prompt, left-padded to one
width), and to models whose logits are the LM head's output (no logit scaling or soft-capping, which TRL's fused head
would apply), and not under gradient checkpointing (which turns the cache off in training); otherwise
`shared_prefix_logps` returns None and the trainer takes TRL's own path. It materialises completion logits (batch ×
completion × vocab), which TRL's fused head avoids: meant for small vocabularies and long shared prompts (the tiny
model on a CPU), and off unless `quarry.shared_prefix=true`.
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any

_SCALING = ("final_logit_softcapping", "logit_scale", "output_multiplier", "lm_head_multiplier", "logits_scaling")


def prompt_runs(input_ids: Any, attention_mask: Any, logits_to_keep: int) -> list[tuple[int, int, int]] | None:
    """Runs of consecutive rows with the same prompt, as (first row, end row, left padding); None when a prompt is
    padded other than on its left (TRL left-pads prompts to one width) or there is no prompt or completion."""
    import torch

    rows, width = input_ids.shape
    prompt_len = width - logits_to_keep
    if prompt_len < 1 or logits_to_keep < 1:
        return None
    runs: list[tuple[int, int, int]] = []
    for i in range(rows):
        mask = attention_mask[i, :prompt_len]
        pad = int((mask == 0).sum())
        if pad == prompt_len or not bool(mask[pad:].all()):
            return None
        if runs:
            first, end, run_pad = runs[-1]
            if run_pad == pad and torch.equal(input_ids[i, pad:prompt_len], input_ids[first, pad:prompt_len]):
                runs[-1] = (first, end + 1, pad)
                continue
        runs.append((i, i + 1, pad))
    return runs


def _shared_runs(model: Any, input_ids: Any, attention_mask: Any, logits_to_keep: int) -> list | None:
    """The batch's prompt runs when the shared path applies to it, else None."""
    if getattr(model, "is_gradient_checkpointing", False) and model.training:
        return None
    config = model.config.get_text_config() if hasattr(model.config, "get_text_config") else model.config
    if any(getattr(config, k, None) not in (None, 1.0) for k in _SCALING):
        return None
    runs = prompt_runs(input_ids, attention_mask, logits_to_keep)
    if runs is None or len(runs) == input_ids.size(0):
        return None
    # A run's left padding is dropped, which shifts its positions: harmless under rotary embeddings (relative), not
    # under absolute ones.
    rotary = getattr(config, "rope_parameters", None) is not None or getattr(config, "rope_theta", None) is not None
    return runs if rotary or all(pad == 0 for _, _, pad in runs) else None


def applies(model: Any, input_ids: Any, attention_mask: Any, logits_to_keep: int) -> bool:
    """True when rows share prompts (a GRPO group each), the model's logits need no scaling, and the model keeps a
    cache while training (transformers drops it under gradient checkpointing)."""
    return _shared_runs(model, input_ids, attention_mask, logits_to_keep) is not None


def _run_logits(model: Any, input_ids: Any, attention_mask: Any, logits_to_keep: int) -> Any:
    """Completion logits of rows that share one unpadded prompt: the prompt once, the completions on its cache."""
    import torch

    rows = input_ids.size(0)
    prompt_len = input_ids.size(1) - logits_to_keep
    head = model(input_ids=input_ids[:1, :prompt_len], use_cache=True, logits_to_keep=1)
    cache = head.past_key_values
    cache.batch_repeat_interleave(rows)
    # The prompt's last position predicts each row's first completion token; the completion's own positions (all but
    # the last) predict the rest.
    first = head.logits[:, -1:, :].expand(rows, -1, -1)
    if logits_to_keep == 1:
        return first
    positions = torch.arange(prompt_len, prompt_len + logits_to_keep - 1, device=input_ids.device)
    tail = model(
        input_ids=input_ids[:, prompt_len:-1],
        attention_mask=attention_mask[:, :-1],
        past_key_values=cache,
        position_ids=positions.unsqueeze(0).expand(rows, -1),
        use_cache=True,
    ).logits
    return torch.cat([first, tail], dim=1)


def shared_prefix_logps(
    model: Any,
    input_ids: Any,
    attention_mask: Any,
    logits_to_keep: int,
    temperature: float = 1.0,
    compute_entropy: bool = False,
) -> tuple[Any, Any] | None:
    """(log-probs, entropies or None) of the last `logits_to_keep` tokens of each row, or None when it does not apply.

    Shapes as TRL's: `input_ids` and `attention_mask` are (B, P + C), the results (B, C). Each run of rows with one
    prompt (a GRPO group) runs its prompt once, without the run's left padding: RoPE attention depends on relative
    positions only, so dropping the padding changes nothing. Row padding after the completion (attention 0) is
    allowed: those positions come out as numbers the caller masks, as in TRL.
    """
    import torch
    from trl.trainer.utils import entropy_from_logits, selective_log_softmax

    runs = _shared_runs(model, input_ids, attention_mask, logits_to_keep)
    if runs is None:
        return None
    logps, entropies = [], []
    for first, end, pad in runs:
        logits = _run_logits(model, input_ids[first:end, pad:], attention_mask[first:end, pad:], logits_to_keep)
        logits = logits / temperature
        logps.append(selective_log_softmax(logits, input_ids[first:end, -logits_to_keep:]))
        if compute_entropy:
            entropies.append(entropy_from_logits(logits))
    return torch.cat(logps), (torch.cat(entropies) if compute_entropy else None)


def common_prefix_length(rows: Sequence[Sequence[int]]) -> int:
    """How many leading token ids every row shares."""
    if not rows:
        return 0
    n = min(len(r) for r in rows)
    first = rows[0]
    for i in range(n):
        if any(r[i] != first[i] for r in rows[1:]):
            return i
    return n


def generate_shared(
    model: Any, rows: Sequence[Sequence[int]], pad_id: int, share: bool = True, **generate_kwargs: Any
) -> list[list[int]]:
    """Hugging Face `generate` for prompts that share their first tokens, with those tokens prefilled once.

    The shared prefix runs through the model with batch 1; its cache, repeated per row, is handed to `generate`
    (transformers' prefix caching: `generate` feeds only the tokens past the cache). What differs after it is padded on
    the left of the difference, between prefix and suffix, with attention 0 there; positions come from the attention
    mask, so every real token keeps the position it has unpadded. Returns each row's new tokens. Without `share`, with
    fewer than two rows or with no shared prefix it is plain `generate` on left-padded rows.
    """
    import torch

    shared = min(common_prefix_length(rows), min(len(r) for r in rows) - 1) if share and len(rows) > 1 else 0
    width = max(len(r) - shared for r in rows)
    ids = torch.full((len(rows), shared + width), pad_id, dtype=torch.long)
    mask = torch.zeros_like(ids)
    for i, r in enumerate(rows):
        start = shared + width - (len(r) - shared)
        ids[i, :shared] = torch.tensor(r[:shared])
        ids[i, start:] = torch.tensor(r[shared:])
        mask[i, :shared] = 1
        mask[i, start:] = 1
    # Built on the CPU, then moved to where the model's weights are (a GPU run's model is on cuda:0).
    device = next(model.parameters()).device
    ids, mask = ids.to(device), mask.to(device)
    kwargs = dict(generate_kwargs)
    with torch.no_grad():
        if shared > 0:
            cache = model(input_ids=ids[:1, :shared], use_cache=True, logits_to_keep=1).past_key_values
            cache.batch_repeat_interleave(len(rows))
            kwargs["past_key_values"] = cache
        gen = model.generate(ids, attention_mask=mask, pad_token_id=pad_id, **kwargs)
    return [row[ids.size(1) :].tolist() for row in gen]
