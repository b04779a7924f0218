"""What Quarry adds to TRL's GRPO, checked on batches small enough to work out by hand: zero-variance groups, MTIR-SQL's
GRPO-Filter (and the group baseline without its filtered rollouts), pass@G / EX, the curriculum order, and the
runner's `key=value` arguments (unknown keys named)."""

from __future__ import annotations

import pytest

from quarry_trainer.train import filters
from quarry_trainer.train.grpo import ArgumentError, parse_args, parse_value, split_args


def ep(reward: float, end: str = "answer", turns=("<sql>x</sql>", "<solution>x</solution>"), ex=None, action="sql"):
    return {"reward": reward, "end": end, "ex": ex, "turns": [{"text": t, "action": action} for t in turns]}


def test_zero_variance_marks_whole_groups_with_one_reward():
    # groups of 3: [1, 1, 1] flat; [0, 1, 0] not; [-1, -1, -1] flat
    assert filters.zero_variance([1, 1, 1, 0, 1, 0, -1, -1, -1], 3) == [True] * 3 + [False] * 3 + [True] * 3
    # float noise below the tolerance still counts as one reward
    assert filters.zero_variance([0.1 * 3 / 3, 0.1], 2) == [True, True]
    with pytest.raises(ValueError, match="do not split into groups of 4"):
        filters.zero_variance([1, 2, 3], 4)


def test_mtir_filter_drops_rollouts_without_an_answer_or_with_an_empty_or_invalid_turn():
    assert filters.mtir_invalid(ep(1.0)) is False
    assert filters.mtir_invalid(ep(0.0, end="budget")) is True
    assert filters.mtir_invalid(ep(0.0, turns=("<sql>x</sql>", "  "))) is True
    assert filters.mtir_invalid(ep(0.0, action="invalid")) is True


def test_keep_mask_combines_the_filter_and_the_zero_variance_rule():
    batch = [ep(1.0), ep(1.0), ep(1.0, end="budget"), ep(0.0)]
    assert filters.keep_mask(batch, 2) == [True, True, True, True]
    assert filters.keep_mask(batch, 2, zero_var="skip") == [False, False, True, True]
    assert filters.keep_mask(batch, 2, filter_name="mtir") == [True, True, False, True]
    assert filters.keep_mask(batch, 2, "mtir", "skip") == [False, False, False, True]
    with pytest.raises(ValueError, match="unknown filter"):
        filters.keep_mask(batch, 2, filter_name="dapo")


def test_group_stats_count_groups_with_a_hit_and_hits_overall():
    # groups of 2: (T, F) solved; (F, F) not; (T, T) solved → pass@2 = 2/3, EX = 3/6
    assert filters.group_stats([True, False, False, False, True, True], 2) == {"pass_at_group": 2 / 3, "ex": 0.5}
    # a group with an unknown verdict is left out
    assert filters.group_stats([True, None, False, False], 2) == {"pass_at_group": 0.0, "ex": 0.0}
    assert filters.group_stats([None, None], 2) == {}


def test_curriculum_order_is_by_level_and_stable_within_a_level():
    rows = [{"id": i, "extra_info": {"curriculum_level": lvl}} for i, lvl in enumerate([2, 0, 1, 0, None])]
    assert [r["id"] for r in filters.curriculum_order(rows)] == [1, 3, 2, 0, 4]


def test_arguments_parse_hydra_values_and_name_unknown_keys():
    assert parse_value("1e-6") == 1e-6
    assert parse_value("[0.9,0.95]") == [0.9, 0.95]
    assert parse_value("'it\\'s'") == "it's"
    assert parse_value("true") is True
    base = ["quarry.model=m", "quarry.train_file=t.jsonl", "output_dir=o"]
    quarry, config = parse_args([*base, "num_generations=4", "epsilon_high=0.28", "quarry.zero_variance=skip"])
    assert config == {"output_dir": "o", "num_generations": 4, "epsilon_high": 0.28}
    assert quarry["zero_variance"] == "skip" and quarry["model"] == "m"
    _, _, unknown, problems = split_args([*base, "num_generation=4", "quarry.max_turn=3"])
    assert unknown == ["num_generation", "quarry.max_turn"]
    assert "did you mean num_generations?" in problems[0]
    assert "did you mean quarry.max_turns?" in problems[1]
    with pytest.raises(ArgumentError, match="quarry.max_turns=three: expected int"):
        parse_args([*base, "quarry.max_turns=three"])
    with pytest.raises(ArgumentError, match="quarry.model= is required"):
        parse_args(["quarry.train_file=t", "output_dir=o"])


def test_dropped_rows_leave_the_loss_and_the_token_count():
    import torch

    output = {
        # 3 completions, 4 positions: row 0 has 3 tokens, row 1 has 4 (one an observation token), row 2 has 2
        "completion_mask": torch.tensor([[1, 1, 1, 0], [1, 1, 1, 1], [1, 1, 0, 0]]),
        "tool_mask": torch.tensor([[1, 1, 1, 1], [1, 0, 1, 1], [1, 1, 1, 1]]),
        "num_items_in_batch": torch.tensor(8),
    }
    out = filters.drop_from_loss(output, [True, False, True])
    assert out["tool_mask"].tolist() == [[1, 1, 1, 1], [0, 0, 0, 0], [1, 1, 1, 1]]
    assert int(out["num_items_in_batch"]) == 3 + 2
    # Nothing dropped: the batch is untouched.
    same = {"completion_mask": torch.ones(1, 2), "tool_mask": torch.ones(1, 2), "num_items_in_batch": 7}
    assert filters.drop_from_loss(same, [True])["num_items_in_batch"] == 7


def test_filtered_rollouts_leave_the_group_baseline():
    """One group of 4: a right answer (1), a valid wrong one (0), two invalid rollouts (-1, GRPO-Filter drops them).
    TRL 1.16's group advantage, (r - nanmean) / (nanstd + 1e-4) per group, NaN → 0 (grpo_trainer.py), on the rewards
    Quarry hands it: with the invalid rollouts in the baseline the valid wrong answer would earn +0.26 for being
    valid; without them it earns -0.71 and the right one +0.71, and the dropped rollouts get 0."""
    import torch
    from trl.trainer.utils import nanstd

    def advantages(rewards_per_func):
        r = rewards_per_func.sum(1).view(-1, 4)
        r = torch.where(torch.isnan(rewards_per_func).all(1).view(-1, 4), torch.nan, r)
        adv = (r - torch.nanmean(r, 1, keepdim=True)) / (nanstd(r, 1, keepdim=True) + 1e-4)
        return torch.nan_to_num(adv, nan=0.0).flatten().tolist()

    rewards = torch.tensor([[1.0], [0.0], [-1.0], [-1.0]])
    keep = [not filters.mtir_invalid(e) for e in [ep(1), ep(0), ep(-1, end="budget"), ep(-1, action="invalid")]]
    assert keep == [True, True, False, False]
    assert advantages(rewards) == pytest.approx([1.3056, 0.2611, -0.7833, -0.7833], abs=1e-3)
    excluded = filters.exclude_from_baseline(rewards, keep)
    assert advantages(excluded) == pytest.approx([0.7070, -0.7070, 0.0, 0.0], abs=1e-3)
    assert rewards[2, 0] == -1.0, "the input is left as it was"
    lone = filters.exclude_from_baseline(rewards, [True, False, False, False])
    assert advantages(lone) == [0.0] * 4, "one kept rollout has no baseline to compare with"
    assert filters.exclude_from_baseline(rewards, [True] * 4) is rewards
    # Every rollout filtered: nothing to baseline, and TRL would log no reward for the step: they pass as they are.
    assert filters.exclude_from_baseline(rewards, [False] * 4) is rewards
