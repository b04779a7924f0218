"""The chat template's own tokens between two sampled assistant turns, for a rollout that trains what it sampled.

A multi-turn episode is one token sequence: the opening chat rendered with its generation prompt, then each turn's
sampled ids as `generate` returned them, then the tokens the template puts between that turn and the next one. Those
in-between tokens are the environment's part (loss mask 0): the end-of-turn marker when the model did not sample it
(a turn a stop string ended), the observation rendered as the template's next user turn, and the generation prompt
that opens the next assistant turn. The model's own text is never rendered or tokenized again: decoding and
re-encoding does not give back the sampled ids (a BPE tokenizer merges what the model wrote piece by piece), and a
re-rendered turn gains a marker the model never wrote.

The in-between tokens are read off a probe conversation, as the difference of its renders: the template renders
`[user, assistant PROBE, user OBSERVATION]` with its generation prompt; everything after the probe's content is the
closing of an assistant turn, the observation's turn and the next assistant header. The probe sits where the sampled
turn sits (an assistant turn before a user turn), so a template that renders history differently from the last turn
(Qwen3 drops the reasoning of earlier turns) renders it the same way. TRL 1.16 builds its own tool-result suffix the
same way (trl/trainer/grpo_trainer.py, `_get_tool_suffix_ids`).
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any

_PROBE = "QUARRYPROBEREPLY"


def _ids(tokenizer: Any, text: str) -> list[int]:
    return list(tokenizer(text, add_special_tokens=False)["input_ids"])


def _render(tokenizer: Any, messages: Sequence[dict[str, Any]], generation_prompt: bool) -> str:
    plain = [{"role": m["role"], "content": m["content"]} for m in messages]
    return tokenizer.apply_chat_template(plain, tokenize=False, add_generation_prompt=generation_prompt)


def end_ids(tokenizer: Any, model: Any = None) -> set[int]:
    """The ids that end a turn when sampled: the model's generation-config EOS ids and the tokenizer's EOS, the set
    TRL 1.16 reads a completion's last token against (trl/trainer/grpo_trainer.py, `eos_token_ids`)."""
    config = getattr(getattr(model, "generation_config", None), "eos_token_id", None)
    ids = set(config if isinstance(config, (list, tuple)) else [config] if config is not None else [])
    if tokenizer.eos_token_id is not None:
        ids.add(tokenizer.eos_token_id)
    return ids


class TurnTemplate:
    """A tokenizer's chat template as token ids around sampled turns."""

    def __init__(self, tokenizer: Any):
        self.tokenizer = tokenizer
        # The end-of-turn marker: the first token after an assistant turn's content (`<|im_end|>`, `<|eot_id|>`,
        # `<end_of_turn>`), when the template closes turns with a special token.
        closing = self._after_probe(None)
        special = set(getattr(tokenizer, "all_special_ids", []) or []) | set(
            getattr(tokenizer, "added_tokens_decoder", {}) or {}
        )
        self.marker: int | None = closing[0] if closing and closing[0] in special else None

    def prompt_ids(self, messages: Sequence[dict[str, Any]]) -> list[int]:
        """The opening chat with the generation prompt: the tokens the first turn is sampled after."""
        return _ids(self.tokenizer, _render(self.tokenizer, messages, True))

    def between(self, observation: str | None, marker_sampled: bool) -> list[int]:
        """The tokens after a sampled turn up to the next turn's first sampled token: the end-of-turn marker unless
        the model sampled it, the observation as a user turn (none when the service gave none), the next assistant
        header."""
        ids = self._after_probe(observation)
        if marker_sampled and self.marker is not None and ids[:1] == [self.marker]:
            ids = ids[1:]
        return ids

    def closing(self) -> list[int]:
        """The end-of-turn marker alone (empty when the template closes turns with plain text)."""
        return [self.marker] if self.marker is not None else []

    def _after_probe(self, observation: str | None) -> list[int]:
        chat = [{"role": "user", "content": "x"}, {"role": "assistant", "content": _PROBE}]
        if observation is not None:
            chat.append({"role": "user", "content": observation})
        text = _render(self.tokenizer, chat, True)
        at = text.find(_PROBE)
        if at < 0:
            raise ValueError("the chat template does not render an assistant turn's content; cannot build turns")
        enc = self.tokenizer(text, add_special_tokens=False, return_offsets_mapping=True)
        ids = list(enc["input_ids"])
        end = at + len(_PROBE)
        # The first token that starts at or after the probe's end (a special token starts a fresh piece of text).
        for i, (a, _b) in enumerate(enc["offset_mapping"]):
            if a >= end:
                return ids[i:]
        return []
