"""Which tokens of a conversation carry loss. A `quarry data sft` / `quarry.sft/1` example flags each message with
`loss` (the model's own turns: assistant; never the prompt or an observation). The conversation is rendered once with
the tokenizer's chat template, and the loss is laid on that render: a token trains when its characters lie inside a
loss message's rendered content or the template's text that closes it (the end-of-turn marker, which the model must
learn to produce). The role header that opens an assistant turn is prompt, not loss, and so is any text the template
itself inserts before the content (Qwen3's empty `<think>\n\n</think>\n\n` block on a turn without reasoning: with
`enable_thinking=False` that block is part of the generation prompt).

Each message's characters are found in one of two ways:
- templates that render turns in order (Qwen2.5, Llama 3.x, Gemma, the tiny model's): the render of the conversation up
  to message i is a prefix of the whole, so message i is the text between two such renders, its end-of-turn marker
  included;
- templates that rewrite history (Qwen3, DeepSeek-R1 distills: an assistant turn before the last user message loses
  its `<think>…</think>` reasoning, and the last turn gets a (possibly empty) think block), so no prefix render
  matches: each message's content is located in the final render, in order, and a loss message's span runs from its
  content to the end of the end-of-turn marker that follows it (the marker is read off a probe render).

What is trained is what the final render holds: an earlier Qwen3 assistant turn trains on its answer without its
reasoning (the template drops it, as it does at inference when that turn is history); the last turn trains on its
reasoning as the template formats it (`<think>\nR\n</think>\n\n`) and its answer. `enable_thinking` only changes
Qwen3's generation prompt, not the render of a finished conversation, so it does not change the masks.

The result is TRL's pre-tokenized form: `input_ids` and `assistant_masks` (1 = trained), which TRL 1.16's
SFTTrainer turns into labels (trl/trainer/sft_trainer.py, "Build a labels column … assistant_masks always applies").
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any

Message = dict[str, Any]

_PROBE = "QUARRYPROBEREPLY"


class _NotPrefix(Exception):
    pass


def _render(tokenizer: Any, messages: Sequence[Message]) -> str:
    if not messages:
        return ""
    plain = [{"role": m["role"], "content": m["content"]} for m in messages]
    return tokenizer.apply_chat_template(plain, tokenize=False, add_generation_prompt=False)


def _trained(m: Message) -> bool:
    return bool(m.get("loss", m["role"] == "assistant"))


def _locate(text: str, content: str, lo: int, hi: int) -> tuple[int, int] | None:
    """Where `content` was rendered inside text[lo:hi]: verbatim, trimmed (Llama 3's templates trim), or, for a
    content with `<think>…</think>` reasoning, its answer with the reasoning either reformatted (the span then starts
    at the rendered `<think>`) or dropped by the template (the span is the answer alone)."""
    for form in (content, content.strip()):
        if form:
            at = text.find(form, lo, hi)
            if at >= 0:
                return at, at + len(form)
    if "</think>" not in content:
        return None
    head, answer = content.rsplit("</think>", 1)
    reasoning, answer = head.split("<think>")[-1].strip(), answer.strip()
    if answer:
        a = text.find(answer, lo, hi)
        if a < 0:
            return None
        end = a + len(answer)
    else:  # reasoning only: the turn's rendered text ends at its last `</think>`
        a = text.find("</think>", text.find(reasoning, lo, hi) if reasoning else lo, hi)
        if a < 0:
            return None
        end = a + len("</think>")
    start = a
    if reasoning:
        r = text.rfind(reasoning, lo, a)
        if r >= 0:
            t = text.rfind("<think>", lo, r)
            start = t if t >= 0 else r
    return start, end


def _prefix_spans(tokenizer: Any, messages: Sequence[Message], text: str) -> list[tuple[int, int]]:
    spans: list[tuple[int, int]] = []
    start = 0
    for i, m in enumerate(messages):
        upto = _render(tokenizer, messages[: i + 1])
        if not text.startswith(upto):
            raise _NotPrefix(i)
        end = len(upto)
        if _trained(m):
            found = _locate(text, m["content"], start, end) if m["content"] else None
            spans.append((found[0] if found else start, end))
        start = end
    return spans


def _closing(tokenizer: Any) -> str:
    """The text the template puts after an assistant message's content (`<|im_end|>\n`, `<|eot_id|>`, …)."""
    probe = _render(tokenizer, [{"role": "user", "content": "x"}, {"role": "assistant", "content": _PROBE}])
    at = probe.rfind(_PROBE)
    return probe[at + len(_PROBE) :] if at >= 0 else ""


def _located_spans(tokenizer: Any, messages: Sequence[Message], text: str) -> list[tuple[int, int]]:
    closing = _closing(tokenizer)
    spans: list[tuple[int, int]] = []
    cursor = 0
    for i, m in enumerate(messages):
        found = _locate(text, m["content"], cursor, len(text)) if m["content"] else None
        if not _trained(m):
            if found:
                cursor = found[1]
            continue
        if found is None:
            raise ValueError(
                f"the chat template neither renders message {i} as a prefix of the whole conversation nor renders "
                "its content where it can be found; loss masks need one or the other"
            )
        start, end = found
        for marker in (closing, closing.rstrip()):
            if marker and text.startswith(marker, end):
                end += len(marker)
                break
        else:
            raise ValueError(
                f"the chat template does not close message {i} with its end-of-turn marker {closing!r}; "
                "loss masks need the marker to follow the message's content"
            )
        spans.append((start, end))
        cursor = end
    return spans


def loss_spans(tokenizer: Any, messages: Sequence[Message]) -> tuple[str, list[tuple[int, int]]]:
    """The rendered text and the character spans that carry loss."""
    text = _render(tokenizer, messages)
    try:
        return text, _prefix_spans(tokenizer, messages, text)
    except _NotPrefix:
        return text, _located_spans(tokenizer, messages, text)


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
