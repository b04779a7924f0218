"""TRL trains exactly the tokens the policy sampled: a real GRPOTrainer step on the tiny model (its own chat template)
with Quarry's multi-turn rollout against a real `quarry serve-env`. Every `generate` call is watched (the real one
runs): each turn's input is the episode's training tokens so far, and its sampled ids are the trained ids, even where
decoding and re-encoding them gives other ids; observations and the template's tokens between turns are masked; a turn
cut at the token limit ends the episode as it was sampled, with no end-of-turn marker."""

from __future__ import annotations

import json

import pytest

torch = pytest.importorskip("torch")
pytest.importorskip("trl")

END = "<|im_end|>"


@pytest.fixture
def rl_rows(make_rl_data):
    out = make_rl_data(
        [{"db_id": "concert", "question": "How many singers are there?", "query": "SELECT count(*) FROM singer"}],
        max_turns=3,
    )
    return [json.loads(line) for line in (out / "train.jsonl").read_text().splitlines()]


def _watch_generate(model):
    """Every `generate` call's unpadded input rows and new tokens (the real generate runs)."""
    calls: list[tuple[list[list[int]], list[list[int]]]] = []
    real = model.generate

    def generate(input_ids, attention_mask=None, **kwargs):
        out = real(input_ids, attention_mask=attention_mask, **kwargs)
        rows = [ids[mask.bool()].tolist() for ids, mask in zip(input_ids, attention_mask, strict=True)]
        calls.append((rows, out[:, input_ids.size(1) :].tolist()))
        return out

    model.generate = generate
    return calls


def _run(repo_root, tmp_path, rl_rows, *, turn_tokens, temperature, generations=4, mask_truncated=False):
    """One GRPO step; returns (what TRL trains: its batch after scoring, the watched generate calls, the rollout,
    the trainer, per-token log-probabilities TRL computes for the batch before the step)."""
    from datasets import Dataset
    from transformers import AutoModelForCausalLM, AutoTokenizer
    from trl import GRPOConfig, GRPOTrainer

    from quarry_trainer.trl.rewards import quarry_reward
    from quarry_trainer.trl.rollout import QuarryRollout

    model_dir = str(repo_root / "media/models/tiny-sql")
    tokenizer = AutoTokenizer.from_pretrained(model_dir, local_files_only=True)
    model = AutoModelForCausalLM.from_pretrained(model_dir, local_files_only=True)
    calls = _watch_generate(model)
    seen: dict = {}

    class Watched(GRPOTrainer):
        def _generate(self, prompts):
            result = super()._generate(prompts)
            seen.setdefault("lengths", [len(ids) for ids in result[1]])
            return result

        def _generate_and_score_completions(self, inputs):
            output = super()._generate_and_score_completions(inputs)
            ids = torch.cat([output["prompt_ids"], output["completion_ids"]], 1)
            mask = torch.cat([output["prompt_mask"], output["completion_mask"]], 1)
            with torch.no_grad():
                logps, _, _ = self._get_per_token_logps_and_entropies(
                    self.model, ids, mask, output["completion_ids"].size(1)
                )
            seen.setdefault(
                "batch", {k: v for k, v in output.items() if torch.is_tensor(v)} | {"lengths": seen["lengths"]}
            )
            seen.setdefault("logps", logps)
            return output

    rollout = QuarryRollout(rl_rows, max_new_tokens=turn_tokens, temperature=temperature)
    config = GRPOConfig(
        output_dir=str(tmp_path / "grpo"),
        per_device_train_batch_size=generations,
        num_generations=generations,
        max_steps=1,
        max_completion_length=160,
        temperature=temperature,
        mask_truncated_completions=mask_truncated,
        bf16=False,  # the model's float32 (precision.py: bf16 autocast is emulated on this CPU, and rounds logps)
        learning_rate=1e-5,
        beta=0.0,
        logging_steps=1,
        save_strategy="no",
        report_to="none",
        use_cpu=True,
        seed=5,
    )
    trainer = Watched(
        model=model,
        reward_funcs=[quarry_reward],
        args=config,
        train_dataset=Dataset.from_list([{"prompt": r["prompt"], "extra_info": r["extra_info"]} for r in rl_rows]),
        processing_class=tokenizer,
        rollout_func=rollout,
    )
    trainer.train()
    return seen["batch"], calls, rollout, tokenizer, seen["logps"]


def _follows(seq: list[int], at: int, sampled: list[int]) -> int:
    """How many of `sampled` the sequence holds from position `at` on."""
    n = 0
    while n < len(sampled) and at + n < len(seq) and seq[at + n] == sampled[n]:
        n += 1
    return n


def _sampled_turns(calls, prompts, completions):
    """For each watched generate row, (completion index, start, sampled ids): the trained sequence whose tokens up
    to `start` are the row's input (the episode's tokens so far) and which holds most of what generate returned."""
    found = []
    for rows, new in calls:
        for row, sampled in zip(rows, new, strict=True):
            hits = [
                i
                for i, (p, c) in enumerate(zip(prompts, completions, strict=True))
                if len(row) >= len(p) and (p + c)[: len(row)] == row
            ]
            assert hits, "a turn was generated from tokens that no trained sequence starts with"
            i = max(hits, key=lambda h: _follows(completions[h], len(row) - len(prompts[h]), sampled))
            found.append((i, len(row) - len(prompts[i]), sampled))
    return found


def test_trl_trains_the_sampled_ids_of_every_turn_and_masks_the_observations(env_url, rl_rows, repo_root, tmp_path):
    batch, calls, rollout, tokenizer, logps = _run(repo_root, tmp_path, rl_rows, turn_tokens=32, temperature=2.0)
    prompts, completions, masks = _trained(batch)
    covered = [[0] * len(c) for c in completions]
    round_trip_differs = 0
    for i, start, sampled in _sampled_turns(calls, prompts, completions):
        n = _follows(completions[i], start, sampled)
        assert n > 0, "a sampled turn is missing from the trained ids"
        # What generate returned past the trained ids is its padding (the row had ended), never a sampled token.
        assert set(sampled[n:]) <= {tokenizer.pad_token_id}, "sampled ids were dropped or replaced"
        assert masks[i][start : start + n] == [1] * n, "a sampled token is out of the loss"
        covered[i][start : start + n] = [1] * n
        ids = completions[i][start : start + n]
        if tokenizer(tokenizer.decode(ids), add_special_tokens=False)["input_ids"] != ids:
            round_trip_differs += 1
    assert round_trip_differs, "precondition: some sampled turn re-tokenizes to other ids"
    # Every trained token was sampled; everything else in the completion is the environment's, out of the loss.
    assert masks == covered
    # The log-probabilities the rollout recorded while sampling are TRL's for the trained tokens (up to float32
    # rounding: a cached, left-padded decode against one full forward; a shifted token would be off by nats).
    for i, mask in enumerate(masks):
        recorded = torch.tensor(batch["sampling_per_token_logps"][i][: len(mask)].tolist())
        at = torch.tensor(mask).bool()
        assert torch.allclose(recorded[at], logps[i][: len(mask)][at], atol=1e-3)

    multi = [i for i, ep in enumerate(rollout.episodes) if len(ep["turns"]) >= 2]
    assert multi, "precondition: a multi-turn episode"
    for i in multi:
        ep = rollout.episodes[i]
        observations = [m["content"] for m in ep["messages"] if m["role"] == "user" and not m.get("loss", True)]
        hidden = [t for t, m in zip(completions[i], masks[i], strict=True) if not m]
        text = tokenizer.decode(hidden)
        assert observations and all(o in text for o in observations), "each observation is in the masked tokens"
        # Turns a stop string ended (no sampled end marker) are closed by the template's marker as context.
        for t in ep["turns"][:-1]:
            assert t["finish"] == "stop"


def _trained(batch):
    """Prompts and completions as TRL holds them (padding dropped: the lengths `_generate` returned), and each
    completion's loss mask (TRL's `completion_mask * tool_mask`)."""
    prompts = [p[m.bool()].tolist() for p, m in zip(batch["prompt_ids"], batch["prompt_mask"], strict=True)]
    loss = batch["completion_mask"] * batch["tool_mask"]
    completions = [ids[:n].tolist() for ids, n in zip(batch["completion_ids"], batch["lengths"], strict=True)]
    return prompts, completions, [mask[:n].tolist() for mask, n in zip(loss, batch["lengths"], strict=True)]


def _cut_turns(calls, prompts, completions, limit, ends):
    """Completion index → (start, ids) of its last watched turn that ran to `limit` new tokens without an end id."""
    cut = {}
    for i, start, sampled in _sampled_turns(calls, prompts, completions):
        if len(sampled) == limit and not set(sampled) & ends:
            cut[i] = (start, sampled)
        elif i in cut and start > cut[i][0]:
            del cut[i]
    return cut


def test_a_turn_cut_at_the_token_limit_ends_the_episode_as_sampled(env_url, rl_rows, repo_root, tmp_path):
    batch, calls, rollout, tokenizer, _ = _run(repo_root, tmp_path, rl_rows, turn_tokens=6, temperature=1.0)
    prompts, completions, masks = _trained(batch)
    ends = {tokenizer.convert_tokens_to_ids(END), tokenizer.eos_token_id, tokenizer.pad_token_id}
    cut = _cut_turns(calls, prompts, completions, 6, ends)
    assert cut, "precondition: a turn cut at 6 tokens"
    for i, (start, sampled) in cut.items():
        # The completion ends with the cut turn's own 6 sampled tokens, trained: no end-of-turn marker after them.
        assert completions[i][start:] == sampled
        assert masks[i][start:] == [1] * 6
        ep = rollout.episodes[i]
        assert ep["messages"][-1] == {
            "role": "assistant",
            "content": tokenizer.decode(sampled, skip_special_tokens=True),
            "loss": True,
        }
        # The episode ended there, scored by the service's panel on the trajectory with the cut turn.
        assert ep["end"] in ("budget", "answer") and ep["turns"][-1]["finish"] == "length"
        assert ep["terms"] and ep["reward"] == pytest.approx(sum(ep["terms"].values()))


def test_mask_truncated_completions_takes_cut_episodes_out_of_the_loss(env_url, rl_rows, repo_root, tmp_path):
    batch, calls, _, tokenizer, _ = _run(
        repo_root, tmp_path, rl_rows, turn_tokens=6, temperature=1.0, generations=2, mask_truncated=True
    )
    prompts, completions, masks = _trained(batch)
    ends = {tokenizer.convert_tokens_to_ids(END), tokenizer.eos_token_id, tokenizer.pad_token_id}
    cut = _cut_turns(calls, prompts, completions, 6, ends)
    assert cut, "precondition: a cut episode"
    for i, mask in enumerate(masks):
        assert (sum(mask) == 0) == (i in cut), "TRL reads an episode ending in a cut turn as truncated, only that"
