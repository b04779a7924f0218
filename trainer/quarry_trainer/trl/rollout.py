"""A multi-turn `rollout_func` for TRL's GRPOTrainer whose episodes run on `quarry serve-env`.

TRL 1.16 calls `rollout_func(prompts, trainer)` with this process's prompts and expects one completion per entry as
`{"prompt_ids", "completion_ids", "logprobs", ...}`. (Its docstring says the slice is not duplicated and asks for
`num_generations` completions per prompt, but `_generate_and_score_completions` passes `[x["prompt"] for x in
inputs]`, and the RepeatSampler has already repeated each prompt `num_generations` times: one completion per entry
is what the trainer's shapes need.) An `env_mask` (1 = model token, 0 = environment token) becomes TRL's `tool_mask`
and multiplies the loss mask; `logprobs` (per completion token, 0 for the environment's) become
`sampling_per_token_logps`; every other key is forwarded to the reward functions (trl/trainer/grpo_trainer.py: the
`rollout_func` argument, `_generate` "Support custom env_mask from rollout_func", `_generate_and_score_completions`).

Each episode: the service opens it (`POST /v1/episodes`: the protocol's opening chat and stop strings); the policy
(the trainer's own model, Hugging Face `generate`) writes a turn; the service runs it and answers the observation;
until the episode ends, when the service scores the whole trajectory with the panel. A group's episodes (the same
prompt, TRL's `num_generations` in a row) run side by side: each turn is one left-padded batched `generate` for the
episodes still going, which on a CPU costs little more than one.

Tokens in, tokens out: an episode is one token sequence, and TRL trains exactly the ids the policy sampled.
  - The prompt is the opening chat rendered once with its generation prompt. Each turn is generated from the
    episode's tokens so far (prompt + completion), not from a re-rendered conversation, and its ids are kept as
    `generate` returned them (sampling.TurnRecorder says where each row ended and why), with mask 1 and the
    log-probabilities they were sampled with. The text the service gets is their decoding; it is never tokenized
    again (decode → encode does not give back the sampled ids).
  - Between two turns come the chat template's tokens (turns.TurnTemplate, the difference of two renders): the
    end-of-turn marker when the model did not sample it (a turn a stop string ended), the observation as a user turn,
    the next assistant header; all mask 0.
  - A turn cut at the token limit (finish reason "length": `quarry.max_turn_tokens`, or what is left of TRL's
    `max_completion_length`) is kept as sampled, gets no end-of-turn marker, and the episode ends there: the service
    steps the cut text (for its action) and its panel scores the trajectory, the cut turn recorded with finish reason
    "length" as written (`/v1/reward`, as replay.py scores a response: a cut answer fails the format terms, an
    episode left without an answer ends `budget`). Its last token is not an end-of-turn id, so TRL counts it as
    truncated (`completions/clipped_ratio`) and `mask_truncated_completions` (GRPOConfig, default False) decides
    whether it trains: by default its sampled tokens train with its advantage (the panel's format penalty is the
    signal against rambling); with `mask_truncated_completions=true` (DAPO's overlong filtering) the episode leaves
    the loss. No invented token is trained either way.
  - An episode whose next observation would not fit in `max_completion_length` ends after its last complete turn,
    scored the same way (`budget`).
  - An episode the service ends after a turn a stop string closed gets the template's end-of-turn marker as its last
    token, mask 0, so TRL reads it as finished.

Why `rollout_func` and not TRL's `environment_factory`. TRL 1.16 favours `environment_factory` for multi-turn (an
environment whose public methods are tools; trl/trainer/grpo_trainer.py `_tool_call_loop`). It fits none of Quarry's
protocols as they are:
  - it renders the tools' JSON schemas into the prompt through the chat template and parses the model's calls with
    the tokenizer's response schema (`parse_response`), so the prompt is TRL's, not the protocol's (MTIR-SQL's App.
    C.1 system prompt, which the service renders), and only templates with a known response schema and tool-call
    rendering work (`supports_tool_calling`; the tiny model's template has none; on transformers < 5.13 it also needs
    jmespath, which the `trl` extra does not install);
  - an observation becomes a `tool` message in the template's format, while the service's observation is the
    protocol's own text (MTIR's `<tool_response>` user turn, feedback rounds, SQL results for tag protocols);
  - a turn ends at EOS only: there are no stop strings (`</sql>`, `</solution>`, MTIR's `<tool_response>` when the
    model starts inventing the tool's answer), no per-turn token limit (`quarry.max_turn_tokens`) and no turn budget
    other than `max_tool_calling_iterations`;
  - the tag protocols (SkyRL-SQL's `<sql>`/`<solution>`, SQL-Trail, Progress-SQL) write actions inside text, not as
    tool calls, so TRL would see no call and end every episode after one turn;
  - the group's side-by-side generation, shared-prefix prefill, greedy group episodes and GRPO-Filter (which reads
    each turn's action) live here.
MTIR-SQL's JSON `<tool_call>` is the one protocol close to TRL's tool path, and only on a Qwen-style template, where
the prompt and observation formats would still differ from the paper's. So every protocol keeps this `rollout_func`;
TRL's warning that it is experimental is left for the user to see.

Tasks are found by prompt: the rollout is built with the training rows (`quarry data rl`'s records: `prompt`,
`extra_info`, `reward_model.ground_truth`), keyed by their prompt's last message.
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any

from transformers import LogitsProcessorList, StoppingCriteriaList

from quarry_trainer.env import EnvClient
from quarry_trainer.train.shared_prefix import generate_shared

from .sampling import Sampled, TurnRecorder
from .turns import TurnTemplate, end_ids


def _key(prompt: Any) -> str:
    if isinstance(prompt, list) and prompt:
        return str(prompt[-1].get("content", ""))
    return str(prompt)


class QuarryRollout:
    def __init__(
        self,
        rows: Sequence[dict[str, Any]],
        client: EnvClient | None = None,
        max_new_tokens: int = 256,
        temperature: float = 1.0,
        panel: str | None = None,
        top_p: float = 1.0,
        max_turns: int | None = None,
        greedy_per_group: int = 0,
        share_prefix: bool = False,
    ):
        self.tasks: dict[str, dict[str, Any]] = {}
        for row in rows:
            info = dict(row.get("extra_info") or {})
            gold = (row.get("reward_model") or {}).get("ground_truth")
            self.tasks[_key(row["prompt"])] = {
                "protocol": info.get("protocol", "skyrl"),
                "db": info.get("db_id") or info.get("db_path"),
                "question": info["question"],
                "gold_sql": gold,
                "max_turns": max_turns if max_turns is not None else info.get("max_turns"),
                "evidence": info.get("evidence"),
                "history": info.get("history"),
            }
        self.client = client or EnvClient()
        self.max_new_tokens = max_new_tokens
        self.temperature = temperature
        self.panel = panel
        self.top_p = top_p
        # Every `greedy_per_group` entries (one group: TRL repeats each prompt G times in a row), one more episode of
        # the same prompt decoded greedily, outside the loss: the "EX of the group's greedy" metric.
        self.greedy_per_group = greedy_per_group
        # A turn's conversations share the group's prompt: prefill it once (train/shared_prefix.generate_shared).
        self.share_prefix = share_prefix
        self.episodes: list[dict[str, Any]] = []
        self.greedy: list[dict[str, Any]] = []
        self._turns: TurnTemplate | None = None

    def __call__(self, prompts: list[Any], trainer: Any) -> dict[str, Any]:
        tokenizer = trainer.processing_class
        model = trainer.accelerator.unwrap_model(trainer.model)
        limit = trainer.args.max_completion_length
        out: dict[str, list[Any]] = {
            "prompt_ids": [],
            "completion_ids": [],
            "env_mask": [],
            "logprobs": [],
            "quarry_reward": [],
            "quarry_terms": [],
        }
        # TRL repeats each prompt num_generations times in a row: a run of equal prompts is one group, whose episodes
        # run side by side (one batched `generate` per turn for every episode still going).
        runs: list[tuple[dict[str, Any], int, int]] = []
        for n, prompt in enumerate(prompts, 1):
            task = self.tasks.get(_key(prompt))
            if task is None:
                raise KeyError("a prompt the rollout was not built with: give QuarryRollout the training rows")
            if runs and runs[-1][0] is task and not self._group_full(runs[-1][1]):
                runs[-1] = (task, runs[-1][1] + 1, n)
            else:
                runs.append((task, 1, n))
        was_training = model.training
        model.eval()
        try:
            for task, count, last in runs:
                for ids, completion, mask, logps, reward, terms in self._episodes(task, count, model, tokenizer, limit):
                    out["prompt_ids"].append(ids)
                    out["completion_ids"].append(completion)
                    out["env_mask"].append(mask)
                    out["logprobs"].append(logps)
                    out["quarry_reward"].append(reward)
                    out["quarry_terms"].append(terms)
                if self.greedy_per_group and last % self.greedy_per_group == 0:
                    greedy = self._episodes(task, 1, model, tokenizer, limit, greedy=True, keep=False)
                    self.greedy.append(greedy[0])
        finally:
            if was_training:
                model.train()
        if self.temperature <= 0:
            out["logprobs"] = None  # type: ignore[assignment]  # greedy: no sampling distribution
        return out

    def _group_full(self, size: int) -> bool:
        return bool(self.greedy_per_group) and size >= self.greedy_per_group

    def _generate(self, model: Any, tokenizer: Any, group: list[dict[str, Any]], stop, sample: bool, limit):
        """One turn for several episodes at once (left-padded; with `share_prefix` their common tokens prefilled
        once): each row is the episode's tokens so far, and ends at an end-of-turn id, one of its stop strings or its
        own token budget (sampling.TurnRecorder)."""
        budgets = [self._budget(e, limit) for e in group]
        recorder = TurnRecorder(
            tokenizer,
            budgets,
            end_ids(tokenizer, model),
            stops=stop,
            temperature=self.temperature if sample else None,
        )
        new = generate_shared(
            model,
            [e["prompt_ids"] + e["ids"] for e in group],
            tokenizer.pad_token_id if tokenizer.pad_token_id is not None else tokenizer.eos_token_id,
            share=self.share_prefix,
            do_sample=sample,
            temperature=self.temperature if sample else None,
            top_p=self.top_p if sample and self.top_p < 1 else None,
            max_new_tokens=max(budgets),
            stopping_criteria=StoppingCriteriaList([recorder]),
            logits_processor=LogitsProcessorList([recorder.logprobs_processor()]),
        )
        return recorder.rows(new)

    def _budget(self, e: dict[str, Any], limit: int | None) -> int:
        """New tokens this turn may take: the turn's own limit, within what is left of TRL's completion budget (one
        token kept back for the end-of-turn marker a stop string's turn gets when the episode ends with it)."""
        if limit is None:
            return self.max_new_tokens
        return max(1, min(self.max_new_tokens, limit - len(e["ids"]) - 1))

    def _episodes(
        self,
        task: dict[str, Any],
        count: int,
        model: Any,
        tokenizer: Any,
        limit: int | None,
        greedy: bool = False,
        keep: bool = True,
    ) -> list[Any]:
        """`count` episodes of one task, run side by side on the service; each turn is one batched generation."""
        sample = self.temperature > 0 and not greedy
        template = self._template(tokenizer)
        ends = end_ids(tokenizer, model)
        eps: list[dict[str, Any]] = []
        for _ in range(count):
            ep = self.client.create_episode(panel=self.panel, **task)
            messages = [dict(m) for m in ep["messages"]]
            eps.append(
                {
                    "ep": ep,
                    "task": task,
                    "messages": messages,
                    "prompt_ids": template.prompt_ids(messages),
                    "ids": [],
                    "mask": [],
                    "logprobs": [],
                    "stop": tuple(ep["stop"] or ()),
                    "turns": [],
                    "done": False,
                    "reward": 0.0,
                    "terms": None,
                    "end": None,
                    "ex": None,
                }
            )
        for _ in range(64):
            active = [e for e in eps if not e["done"]]
            if not active:
                break
            by_stop: dict[tuple[str, ...], list[dict[str, Any]]] = {}
            for e in active:
                by_stop.setdefault(e["stop"], []).append(e)
            for stop, group in by_stop.items():
                turns = self._generate(model, tokenizer, group, stop, sample, limit)
                for e, turn in zip(group, turns, strict=True):
                    self._advance(e, turn, tokenizer, template, ends, limit)
        results = []
        for e in eps:
            if not e["done"]:
                self.client.end_episode(e["ep"]["id"])
                e["end"] = "aborted"
            record = {k: e[k] for k in ("messages", "reward", "terms", "end", "ex", "turns")}
            record["id"] = e["ep"]["id"]
            results.append(record if not keep else self._completion(record, e))
        return results

    def _template(self, tokenizer: Any) -> TurnTemplate:
        if self._turns is None or self._turns.tokenizer is not tokenizer:
            self._turns = TurnTemplate(tokenizer)
        return self._turns

    def _append(self, e: dict[str, Any], ids: list[int], trained: bool, logprobs: list[float] | None = None) -> None:
        e["ids"] += ids
        e["mask"] += [1 if trained else 0] * len(ids)
        e["logprobs"] += logprobs if logprobs is not None else [0.0] * len(ids)

    def _advance(self, e: dict[str, Any], turn: Sampled, tokenizer: Any, template: TurnTemplate, ends, limit) -> None:
        """The sampled turn joins episode `e` as it is; the service runs it, and its observation (or its end and
        reward) is recorded."""
        text = tokenizer.decode(turn.ids, skip_special_tokens=True)
        self._append(e, turn.ids, True, turn.logprobs)
        e["messages"].append({"role": "assistant", "content": text, "loss": True})
        if turn.finish == "length":
            # Cut at the token limit: the episode ends on the cut turn, as sampled (no end-of-turn marker).
            self._end_early(e, text, cut=True)
            return
        step = self.client.step(e["ep"]["id"], text)
        info = step.get("info") or {}
        e["turns"].append({"text": text, "action": (info.get("action") or {}).get("kind"), "finish": turn.finish})
        if step["done"]:
            self._finish(e, step)
            # A turn a stop string ended has no end-of-turn marker of its own: the template's marker closes the
            # completion as context (mask 0), so TRL sees it finished (its truncation check reads the last token).
            if not turn.ids or turn.ids[-1] not in ends:
                self._append(e, template.closing(), False)
            return
        between = template.between(step.get("observation"), marker_sampled=bool(turn.ids) and turn.ids[-1] in ends)
        if limit is not None and len(e["ids"]) + len(between) + 2 > limit:
            # No room for the observation and a next turn: the episode ends here, without an answer.
            self._end_early(e, text, cut=False)
            return
        self._append(e, between, False)
        if step.get("observation") is not None:
            e["messages"].append({"role": "user", "content": step["observation"], "loss": False})
        e["stop"] = tuple(step.get("stop") or e["stop"])

    def _finish(self, e: dict[str, Any], step: dict[str, Any]) -> None:
        info = step.get("info") or {}
        e["done"] = True
        e["reward"] = float(step["reward"]) if step.get("reward") is not None else 0.0
        e["terms"] = step.get("terms")
        e["end"], e["ex"] = info.get("end"), info.get("ex")

    def _end_early(self, e: dict[str, Any], text: str, cut: bool) -> None:
        """An episode the token limits end before the service does: its trajectory (the last turn as sampled, with
        finish reason "length" when it was cut) is scored by the service's panel through /v1/reward, as
        replay.py scores a response (a cut answer fails the format terms; an episode left without one ends with
        `budget`)."""
        eid = e["ep"]["id"]
        task = e["task"]
        if cut:
            # The record before the cut turn, then the turn as the service parses it (its action, for the record).
            record = self.client.request("GET", f"/v1/episodes/{eid}")
            step = self.client.step(eid, text)
            info = step.get("info") or {}
            record["turns"].append(
                {
                    "index": len(record["turns"]),
                    "assistant": text,
                    "action": info.get("action"),
                    "observations": [],
                    "exec": info.get("exec"),
                    "finishReason": "length",
                    "usage": {"promptTokens": 0, "completionTokens": 0},
                    "timings": {"modelMs": 0, "envMs": 0},
                }
            )
            e["turns"].append({"text": text, "action": (info.get("action") or {}).get("kind"), "finish": "length"})
            done = bool(step.get("done"))
        else:
            record = self.client.request("GET", f"/v1/episodes/{eid}")
            info, done = {}, False
        record["end"] = (info.get("end") or "answer") if done else "budget"
        record["finalSql"] = info.get("finalSql") if done else None
        if not done:
            self.client.end_episode(eid)
        e["done"], e["end"], e["reward"], e["terms"], e["ex"] = True, record["end"], 0.0, None, None
        if task.get("gold_sql"):
            result = self.client.reward(
                {
                    "panel": self.panel or task["protocol"],
                    "db": task["db"],
                    "goldSql": task["gold_sql"],
                    "trajectory": record,
                }
            )
            e["reward"] = float(result["total"])
            e["terms"] = {t["name"]: t["contribution"] for t in result.get("terms") or []}
            e["ex"] = False if record["finalSql"] is None else None

    def _completion(self, record: dict[str, Any], e: dict[str, Any]):
        """The episode as TRL takes it: prompt ids, completion ids, the mask of the model's own tokens and their
        sampling log-probabilities (0 for the environment's tokens)."""
        self.episodes.append(record)
        return e["prompt_ids"], e["ids"], e["mask"], e["logprobs"], record["reward"], record["terms"]
