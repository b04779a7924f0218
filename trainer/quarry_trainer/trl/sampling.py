"""What one batched Hugging Face `generate` sampled, row by row: the ids, how the turn ended, their log-probabilities.

`generate` pads a row that finished before the others with the pad id, and for many tokenizers (the tiny model's,
Qwen's base models) the pad id is also an end-of-sequence id, so the returned rows alone do not say where a turn
ended or why. `TurnRecorder` is the batch's stopping criterion (transformers/generation/stopping_criteria.py,
`StoppingCriteria`): after every new token it ends each row at an end-of-turn id, at one of the protocol's stop
strings (transformers' own `StopStringCriteria`) or at the row's own token budget, and records the length and the
finish reason: "stop" (an end-of-turn id or a stop string) or "length" (the budget ran out mid-turn, the vLLM / OpenAI
name). Rows share one `generate` call but not one budget: each episode has what is left of TRL's completion budget.

It is also a logits processor (transformers/generation/logits_process.py, `LogitsProcessor`). `generate` runs custom
processors after the generation config's penalties and before the temperature and top-p warpers
(transformers/generation/utils.py, `_get_logits_processor`), so it sees the model's logits; at each step it keeps
log_softmax(logits / temperature) for one step and reads the log-probability of the token that was sampled from it
when the next step shows it. That is TRL's per-token log-probability of a completion token
(`_get_per_token_logps_and_entropies`: the logits divided by the sampling temperature), at the moment of sampling.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass
from typing import Any

import torch
from transformers.generation.logits_process import LogitsProcessor
from transformers.generation.stopping_criteria import StoppingCriteria, StopStringCriteria


@dataclass
class Sampled:
    ids: list[int]
    logprobs: list[float] | None
    finish: str  # "stop" or "length"


class TurnRecorder(StoppingCriteria):
    """The batch's stopping criterion; `logprobs_processor()` is its logits-processor half."""

    def __init__(
        self,
        tokenizer: Any,
        budgets: Sequence[int],
        ends: set[int],
        stops: Sequence[str] = (),
        temperature: float | None = None,
    ):
        self.budgets = list(budgets)
        self.ends = sorted(ends)
        self.strings = StopStringCriteria(tokenizer, list(stops)) if stops else None
        self.temperature = temperature
        self.steps = 0
        self.ended: list[tuple[int, str] | None] = [None] * len(self.budgets)
        self.pending: torch.Tensor | None = None
        self.logps: list[torch.Tensor] = []

    def __call__(self, input_ids: torch.LongTensor, scores: Any, **kwargs: Any) -> torch.BoolTensor:
        self.steps += 1
        done = torch.isin(input_ids[:, -1], torch.tensor(self.ends, device=input_ids.device))
        if self.strings is not None:
            done = done | self.strings(input_ids, scores, **kwargs)
        for i, ended in enumerate(self.ended):
            if ended is not None:
                continue
            if bool(done[i]):
                self.ended[i] = (self.steps, "stop")
            elif self.steps >= self.budgets[i]:
                self.ended[i] = (self.steps, "length")
        # transformers' StoppingCriteria.__call__ promises torch.BoolTensor (generation/stopping_criteria.py), a legacy
        # tensor class no torch op is typed to return; this tensor is bool.
        return torch.tensor([e is not None for e in self.ended], device=input_ids.device)  # type: ignore[return-value]

    def logprobs_processor(self) -> LogitsProcessor:
        return _Logprobs(self)

    def rows(self, new: Sequence[Sequence[int]]) -> list[Sampled]:
        """Each row's sampled ids (the padding after it ended dropped), log-probabilities and finish reason."""
        columns = None
        if self.pending is not None:
            last = torch.tensor([list(r)[-1] if len(r) else 0 for r in new], device=self.pending.device)
            columns = torch.stack([*self.logps, _pick(self.pending, last)], dim=1).tolist()
        out = []
        for i, row in enumerate(new):
            length, finish = self.ended[i] or (len(row), "length")
            out.append(Sampled(list(row)[:length], columns[i][:length] if columns else None, finish))
        return out


def _pick(logps: torch.Tensor, ids: torch.Tensor) -> torch.Tensor:
    return logps.gather(-1, ids.unsqueeze(-1)).squeeze(-1)


class _Logprobs(LogitsProcessor):
    """Before each token is sampled: the log-probability of the previous step's token (now the last of input_ids)
    under the distribution it was sampled from, then that distribution for this step."""

    def __init__(self, recorder: TurnRecorder):
        self.recorder = recorder

    def __call__(self, input_ids: torch.LongTensor, scores: torch.FloatTensor) -> torch.FloatTensor:
        r = self.recorder
        if r.temperature is None:
            return scores
        if r.pending is not None:
            r.logps.append(_pick(r.pending, input_ids[:, -1]))
        r.pending = torch.log_softmax(scores.float() / r.temperature, dim=-1)
        return scores
