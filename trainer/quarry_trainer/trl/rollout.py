"""A multi-turn `rollout_func` for TRL's GRPOTrainer whose episodes run on `quarry serve-env`.

TRL 1.16 calls `rollout_func(prompts, trainer)` with this process's prompts and expects one completion per entry as
`{"prompt_ids", "completion_ids", "logprobs", ...}`. (Its docstring says the slice is not duplicated and asks for
`num_generations` completions per prompt, but `_generate_and_score_completions` passes `[x["prompt"] for x in
inputs]`, and the RepeatSampler has already repeated each prompt `num_generations` times: one completion per entry
is what the trainer's shapes need.) An `env_mask` (1 =
model token, 0 = environment token) keeps observations out of the loss, and every other key is forwarded to the
reward functions (trl/trainer/grpo_trainer.py: the `rollout_func` argument and `_generate`, "Support custom env_mask
from rollout_func").

Each episode: the service opens it (`POST /v1/episodes`: the protocol's opening chat and stop strings); the policy
(the trainer's own model, Hugging Face `generate` with the protocol's stop strings) writes a turn; the service runs it
and answers the observation; until the episode ends, when the service scores the whole trajectory with the panel.
A group's episodes (the same prompt, TRL's `num_generations` in a row) run side by side: each turn is one left-padded
batched `generate` for the episodes still going, which on a CPU costs little more than one.
The conversation is then rendered once with the chat template: the opening messages (with the generation prompt) are
the prompt, the rest the completion, and `env_mask` marks the model's own turns (content and end-of-turn marker) as in
SFT (quarry_trainer.train.masks). The rewards reach `quarry_reward` (rewards.py) as the extra field `quarry_reward`.

Tasks are found by prompt: the rollout is built with the training rows (`quarry data rl`'s records: `prompt`,
`extra_info`, `reward_model.ground_truth`), keyed by their prompt's last message.
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any

from quarry_trainer.env import EnvClient
from quarry_trainer.train.masks import loss_spans
from quarry_trainer.train.shared_prefix import generate_shared


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

    def __call__(self, prompts: list[Any], trainer: Any) -> dict[str, Any]:
        tokenizer = trainer.processing_class
        model = trainer.accelerator.unwrap_model(trainer.model)
        limit = trainer.args.max_completion_length
        out: dict[str, list[Any]] = {
            "prompt_ids": [],
            "completion_ids": [],
            "env_mask": [],
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
                for ids, completion, mask, reward, terms in self._episodes(task, count, model, tokenizer, limit):
                    out["prompt_ids"].append(ids)
                    out["completion_ids"].append(completion)
                    out["env_mask"].append(mask)
                    out["quarry_reward"].append(reward)
                    out["quarry_terms"].append(terms)
                if self.greedy_per_group and last % self.greedy_per_group == 0:
                    greedy = self._episodes(task, 1, model, tokenizer, limit, greedy=True, keep=False)
                    self.greedy.append(greedy[0])
        finally:
            if was_training:
                model.train()
        # Sampling log-probabilities are not kept: the trainer computes the old policy's itself (no vLLM here).
        out["logprobs"] = None  # type: ignore[assignment]
        return out

    def _group_full(self, size: int) -> bool:
        return bool(self.greedy_per_group) and size >= self.greedy_per_group

    def _generate(self, model: Any, tokenizer: Any, chats: list[list[dict[str, Any]]], stop, sample: bool):
        """One turn for several conversations at once (left-padded; with `share_prefix` their common tokens
        prefilled once), each stopping at its own stop string."""
        rendered = [tokenizer.apply_chat_template(m, tokenize=False, add_generation_prompt=True) for m in chats]
        new = generate_shared(
            model,
            [tokenizer(r, add_special_tokens=False)["input_ids"] for r in rendered],
            tokenizer.pad_token_id if tokenizer.pad_token_id is not None else tokenizer.eos_token_id,
            share=self.share_prefix,
            do_sample=sample,
            temperature=self.temperature if sample else None,
            top_p=self.top_p if sample and self.top_p < 1 else None,
            max_new_tokens=self.max_new_tokens,
            stop_strings=list(stop) or None,
            tokenizer=tokenizer,
        )
        return [tokenizer.decode(row, skip_special_tokens=True) for row in new]

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
        eps = []
        for _ in range(count):
            ep = self.client.create_episode(panel=self.panel, **task)
            messages = [dict(m) for m in ep["messages"]]
            eps.append(
                {
                    "ep": ep,
                    "messages": messages,
                    "opening": len(messages),
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
                texts = self._generate(model, tokenizer, [e["messages"] for e in group], stop, sample)
                for e, text in zip(group, texts, strict=True):
                    self._advance(e, text)
        results = []
        for e in eps:
            if not e["done"]:
                self.client.end_episode(e["ep"]["id"])
                e["end"] = "aborted"
            record = {k: e[k] for k in ("messages", "reward", "terms", "end", "ex", "turns")}
            record["id"] = e["ep"]["id"]
            results.append(record if not keep else self._completion(record, e["opening"], tokenizer, limit))
        return results

    def _advance(self, e: dict[str, Any], text: str) -> None:
        """The service runs one turn of episode `e`; its observation (or its end and reward) is recorded."""
        e["messages"].append({"role": "assistant", "content": text, "loss": True})
        step = self.client.step(e["ep"]["id"], text)
        info = step.get("info") or {}
        e["turns"].append({"text": text, "action": (info.get("action") or {}).get("kind")})
        if step["done"]:
            e["done"] = True
            e["reward"] = float(step["reward"]) if step.get("reward") is not None else 0.0
            e["terms"] = step.get("terms")
            e["end"], e["ex"] = info.get("end"), info.get("ex")
            return
        if step.get("observation") is not None:
            e["messages"].append({"role": "user", "content": step["observation"], "loss": False})
        e["stop"] = tuple(step.get("stop") or e["stop"])

    def _completion(self, record: dict[str, Any], opening: int, tokenizer: Any, limit: int | None):
        """The episode as TRL takes it: prompt ids, completion ids and the mask of the model's own tokens."""
        messages = record["messages"]
        prompt_text = tokenizer.apply_chat_template(
            [{"role": m["role"], "content": m["content"]} for m in messages[:opening]],
            tokenize=False,
            add_generation_prompt=True,
        )
        full, spans = loss_spans(tokenizer, [{**m, "loss": m.get("loss", False)} for m in messages])
        if not full.startswith(prompt_text):
            raise ValueError("the chat template does not render the opening messages as a prefix of the episode")
        prompt_ids = tokenizer(prompt_text, add_special_tokens=False)["input_ids"]
        enc = tokenizer(full[len(prompt_text) :], add_special_tokens=False, return_offsets_mapping=True)
        base = len(prompt_text)
        mask = [
            1 if any(s <= a + base and b + base <= e for s, e in spans) and b > a else 0
            for a, b in enc["offset_mapping"]
        ]
        completion = list(enc["input_ids"])
        # The chat template puts a newline after the last end-of-turn marker: end the completion at the marker, so
        # TRL sees a finished completion (its truncation check reads the last token).
        ends = {tokenizer.eos_token_id, tokenizer.convert_tokens_to_ids("<|im_end|>")} - {None}
        last = max((i for i, t in enumerate(completion) if t in ends), default=None)
        if last is not None and not tokenizer.decode(completion[last + 1 :]).strip():
            completion, mask = completion[: last + 1], mask[: last + 1]
        if limit is not None and len(completion) > limit:
            completion, mask = completion[:limit], mask[:limit]
        self.episodes.append(record)
        return prompt_ids, completion, mask, record["reward"], record["terms"]
