"""Which tokens of a conversation carry loss. A `quarry data sft` / `quarry.sft/1` example flags each message with
`loss` (the model's own turns: assistant; never the prompt or an observation). The conversation is rendered once with
the tokenizer's chat template; each message's characters are found by rendering the conversation up to it; a token
trains when its characters lie inside a loss message's content or the template's text that closes it (the end-of-turn
marker, which the model must learn to produce). The role header that opens an assistant turn is prompt, not loss.

The result is TRL's pre-tokenized form: `input_ids` and `assistant_masks` (1 = trained), which TRL 1.16's
SFTTrainer turns into labels (trl/trainer/sft_trainer.py, "Build a labels column … assistant_masks always applies").
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any

Message = dict[str, Any]


def _render(tokenizer: Any, messages: Sequence[Message]) -> str:
    if not messages:
        return ""
    plain = [{"role": m["role"], "content": m["content"]} for m in messages]
    return tokenizer.apply_chat_template(plain, tokenize=False, add_generation_prompt=False)


def loss_spans(tokenizer: Any, messages: Sequence[Message]) -> tuple[str, list[tuple[int, int]]]:
    """The rendered text and the character spans that carry loss."""
    text = _render(tokenizer, messages)
    spans: list[tuple[int, int]] = []
    start = 0
    for i, m in enumerate(messages):
        end = len(_render(tokenizer, messages[: i + 1]))
        if not text.startswith(_render(tokenizer, messages[: i + 1])):
            raise ValueError(
                f"the chat template does not render message {i} as a prefix of the whole conversation; "
                "loss masks need a template that renders turns in order"
            )
        trained = m.get("loss", m["role"] == "assistant")
        if trained:
            at = text.find(m["content"], start, end) if m["content"] else -1
            spans.append((at if at >= 0 else start, end))
        start = end
    return text, spans


def tokenize_with_masks(
    tokenizer: Any, messages: Sequence[Message], max_length: int | None = None
) -> dict[str, list[int]]:
    """`input_ids` and `assistant_masks` for one conversation (truncated to `max_length` tokens when given)."""
    text, spans = loss_spans(tokenizer, messages)
    enc = tokenizer(text, add_special_tokens=False, return_offsets_mapping=True)
    ids: list[int] = list(enc["input_ids"])
    masks = []
    for a, b in enc["offset_mapping"]:
        masks.append(1 if any(s <= a and b <= e and b > a for s, e in spans) else 0)
    if max_length is not None:
        ids, masks = ids[:max_length], masks[:max_length]
    return {"input_ids": ids, "assistant_masks": masks}
