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
        self.episodes: list[dict[str, Any]] = []
        self.greedy: list[dict[str, Any]] = []

    def __call__(self, prompts: list[Any], trainer: Any) -> dict[str, Any]:
        tokenizer = trainer.processing_class
        model = trainer.accelerator.unwrap_model(trainer.model)
        limit = trainer.args.max_completion_length
        out: dict[str, list[Any]] = {
            "prompt_ids": [],
            "completion_ids": [],
            "logprobs": [],
            "env_mask": [],
            "quarry_reward": [],
            "quarry_terms": [],
        }
        was_training = model.training
        model.eval()
        try:
            for n, prompt in enumerate(prompts, 1):
                task = self.tasks.get(_key(prompt))
                if task is None:
                    raise KeyError("a prompt the rollout was not built with: give QuarryRollout the training rows")
                ids, completion, mask, reward, terms = self._episode(task, model, tokenizer, limit)
                if self.greedy_per_group and n % self.greedy_per_group == 0:
                    self.greedy.append(self._episode(task, model, tokenizer, limit, greedy=True, keep=False)[-1])
                out["prompt_ids"].append(ids)
                out["completion_ids"].append(completion)
                out["env_mask"].append(mask)
                out["quarry_reward"].append(reward)
                out["quarry_terms"].append(terms)
        finally:
            if was_training:
                model.train()
        # Sampling log-probabilities are not kept: the trainer computes the old policy's itself (no vLLM here).
        out["logprobs"] = None  # type: ignore[assignment]
        return out

    def _episode(
        self, task: dict[str, Any], model: Any, tokenizer: Any, limit: int | None, greedy: bool = False, keep=True
    ):
        import torch

        ep = self.client.create_episode(panel=self.panel, **task)
        messages: list[dict[str, Any]] = [dict(m) for m in ep["messages"]]
        opening = len(messages)
        stop = ep["stop"]
        reward, terms, end, ex = 0.0, None, None, None
        turns: list[dict[str, Any]] = []
        sample = self.temperature > 0 and not greedy
        for _ in range(64):
            rendered = tokenizer.apply_chat_template(messages, tokenize=False, add_generation_prompt=True)
            ids = tokenizer(rendered, add_special_tokens=False, return_tensors="pt")["input_ids"]
            with torch.no_grad():
                gen = model.generate(
                    ids,
                    do_sample=sample,
                    temperature=self.temperature if sample else None,
                    top_p=self.top_p if sample and self.top_p < 1 else None,
                    max_new_tokens=self.max_new_tokens,
                    stop_strings=stop or None,
                    tokenizer=tokenizer,
                    pad_token_id=tokenizer.pad_token_id
                    if tokenizer.pad_token_id is not None
                    else tokenizer.eos_token_id,
                )
            text = tokenizer.decode(gen[0, ids.shape[1] :], skip_special_tokens=True)
            messages.append({"role": "assistant", "content": text, "loss": True})
            step = self.client.step(ep["id"], text)
            info = step.get("info") or {}
            turns.append({"text": text, "action": (info.get("action") or {}).get("kind")})
            if step["done"]:
                reward = float(step["reward"]) if step.get("reward") is not None else 0.0
                terms = step.get("terms")
                end, ex = info.get("end"), info.get("ex")
                break
            if step.get("observation") is not None:
                messages.append({"role": "user", "content": step["observation"], "loss": False})
            stop = step.get("stop") or stop
        else:
            self.client.end_episode(ep["id"])
            end = "aborted"
        record = {"id": ep["id"], "messages": messages, "reward": reward, "terms": terms, "end": end, "ex": ex}
        record["turns"] = turns
        if not keep:
            return (record,)
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
        return prompt_ids, completion, mask, reward, terms
