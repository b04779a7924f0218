"""Per-token log-probabilities of a GRPO batch whose rows share one prompt, with the prompt run through the model once.

A group's G rollouts answer the same prompt, and a text-to-SQL prompt (instructions and schema) is most of every
sequence: 2,189 of about 2,300 tokens for the tiny model's transit questions. TRL 1.16's
`GRPOTrainer._get_per_token_logps_and_entropies` (trl/trainer/grpo_trainer.py) runs the whole `prompt + completion` of
each row through the model, so the prompt's forward and backward are done G times. Here the prompt runs once (batch
1, with gradients, `use_cache=True`), its key/value cache is repeated G times (`DynamicCache.batch_repeat_interleave`,
transformers/cache_utils.py) and the completions run on top of it. The attention each completion token sees is the
same, so the log-probabilities (and their gradients: the cache keeps the graph) are those of the full forward, up to
float rounding; `test_shared_prefix.py` checks both against TRL's path.

It applies only when every row's prompt tokens are equal and unpadded, and to models whose logits are the LM head's
output (no logit scaling or soft-capping, which TRL's fused head would apply); otherwise `shared_prefix_logps`
returns None and the trainer takes TRL's own path. It materialises completion logits (batch × completion × vocab),
which TRL's fused head avoids: meant for small vocabularies and long shared prompts (the tiny model on a CPU), and
off unless `quarry.shared_prefix=true`.
"""

from __future__ import annotations

from typing import Any

_SCALING = ("final_logit_softcapping", "logit_scale", "output_multiplier", "lm_head_multiplier", "logits_scaling")


def applies(model: Any, input_ids: Any, attention_mask: Any, logits_to_keep: int) -> bool:
    """True when the rows share one unpadded prompt and the model's logits need no scaling."""
    import torch

    config = model.config.get_text_config() if hasattr(model.config, "get_text_config") else model.config
    if any(getattr(config, k, None) not in (None, 1.0) for k in _SCALING):
        return False
    prompt_len = input_ids.size(1) - logits_to_keep
    if prompt_len < 1 or logits_to_keep < 1:
        return False
    prompt = input_ids[:1, :prompt_len]
    return bool(attention_mask[:, :prompt_len].all()) and torch.equal(
        input_ids[:, :prompt_len], prompt.expand(input_ids.size(0), -1)
    )


def shared_prefix_logps(
    model: Any,
    input_ids: Any,
    attention_mask: Any,
    logits_to_keep: int,
    temperature: float = 1.0,
    compute_entropy: bool = False,
) -> tuple[Any, Any] | None:
    """(log-probs, entropies or None) of the last `logits_to_keep` tokens of each row, or None when it does not apply.

    Shapes as TRL's: `input_ids` and `attention_mask` are (B, P + C), the results (B, C). Row padding after the
    completion (attention 0) is allowed: those positions come out as numbers the caller masks, as in TRL.
    """
    import torch
    from trl.trainer.utils import entropy_from_logits, selective_log_softmax

    if not applies(model, input_ids, attention_mask, logits_to_keep):
        return None
    rows = input_ids.size(0)
    prompt_len = input_ids.size(1) - logits_to_keep
    completion = input_ids[:, prompt_len:]
    head = model(input_ids=input_ids[:1, :prompt_len], use_cache=True, logits_to_keep=1)
    cache = head.past_key_values
    cache.batch_repeat_interleave(rows)
    # The prompt's last position predicts each row's first completion token; the completion's own positions (all but
    # the last) predict the rest.
    first = head.logits[:, -1:, :].expand(rows, -1, -1)
    if logits_to_keep > 1:
        positions = torch.arange(prompt_len, prompt_len + logits_to_keep - 1, device=input_ids.device)
        tail = model(
            input_ids=completion[:, :-1],
            attention_mask=attention_mask[:, :-1],
            past_key_values=cache,
            position_ids=positions.unsqueeze(0).expand(rows, -1),
            use_cache=True,
        ).logits
        logits = torch.cat([first, tail], dim=1)
    else:
        logits = first
    logits = logits / temperature
    logps = selective_log_softmax(logits, completion)
    entropies = entropy_from_logits(logits) if compute_entropy else None
    return logps, entropies
