"""Shared-prefix log-probabilities equal TRL's full forward (values and gradients); it declines what it can't do."""

from __future__ import annotations

import pytest

torch = pytest.importorskip("torch")
transformers = pytest.importorskip("transformers")

from quarry_trainer.train.shared_prefix import (  # noqa: E402
    applies,
    common_prefix_length,
    generate_shared,
    prompt_runs,
    shared_prefix_logps,
)


def _model(seed: int = 0, **extra):
    torch.manual_seed(seed)
    config = transformers.Qwen2Config(
        vocab_size=61,
        hidden_size=32,
        intermediate_size=48,
        num_hidden_layers=2,
        num_attention_heads=4,
        num_key_value_heads=2,
        max_position_embeddings=128,
        **extra,
    )
    return transformers.Qwen2ForCausalLM(config).float()


def _full(model, input_ids, attention_mask, keep, temperature):
    """TRL's pre-fused reference: the whole sequence through the model, the completion's logits scored."""
    logits = model(input_ids=input_ids, attention_mask=attention_mask).logits[:, -keep - 1 : -1, :] / temperature
    logps = torch.log_softmax(logits.float(), -1).gather(-1, input_ids[:, -keep:].unsqueeze(-1)).squeeze(-1)
    probs = torch.softmax(logits.float(), -1)
    entropy = -(probs * torch.log_softmax(logits.float(), -1)).sum(-1)
    return logps, entropy


def _grad_norm(model) -> float:
    return float(torch.sqrt(sum((p.grad.float() ** 2).sum() for p in model.parameters() if p.grad is not None)))


def _batch(rows=3, prompt=11, completion=6, pad_last=2):
    g = torch.Generator().manual_seed(7)
    p = torch.randint(0, 61, (1, prompt), generator=g).expand(rows, -1)
    c = torch.randint(0, 61, (rows, completion), generator=g)
    ids = torch.cat([p, c], 1)
    mask = torch.ones_like(ids)
    if pad_last:
        mask[-1, -pad_last:] = 0  # the last row's completion is shorter (right padding, as TRL pads completions)
    return ids, mask, completion


def test_log_probs_entropy_and_gradients_equal_the_full_forward():
    ids, mask, keep = _batch()
    shared, full = _model(), _model()
    got, got_entropy = shared_prefix_logps(shared, ids, mask, keep, temperature=0.7, compute_entropy=True)
    want, want_entropy = _full(full, ids, mask, keep, 0.7)
    valid = mask[:, -keep:].bool()
    assert torch.allclose(got[valid], want[valid], atol=1e-5)
    assert torch.allclose(got_entropy[valid], want_entropy[valid], atol=1e-5)
    # A GRPO-shaped loss (advantage-weighted masked mean) gives the same gradient for every parameter.
    adv = torch.tensor([[1.0], [-0.5], [0.25]])
    (-(got * adv)[valid].mean()).backward()
    (-(want * adv)[valid].mean()).backward()
    assert _grad_norm(full) > 1e-3, "the reference gradient is not zero, so equal gradients mean something"
    for (name, a), (_, b) in zip(shared.named_parameters(), full.named_parameters(), strict=True):
        assert torch.allclose(a.grad, b.grad, atol=1e-6), name


def test_one_completion_token():
    ids, mask, _ = _batch(completion=1, pad_last=0)
    got, _ = shared_prefix_logps(_model(), ids, mask, 1)
    want, _ = _full(_model(), ids, mask, 1, 1.0)
    assert got.shape == (3, 1)
    assert torch.allclose(got, want, atol=1e-5)


def test_two_groups_with_prompts_of_different_lengths():
    """Two GRPO groups in one batch, the shorter prompt left-padded as TRL pads it: each group's prompt runs once."""
    g = torch.Generator().manual_seed(3)
    long, short = torch.randint(0, 61, (11,), generator=g), torch.randint(0, 61, (8,), generator=g)
    pad = torch.zeros(3, dtype=torch.long)
    prompts = torch.stack([long, long, torch.cat([pad, short]), torch.cat([pad, short])])
    ids = torch.cat([prompts, torch.randint(0, 61, (4, 5), generator=g)], 1)
    mask = torch.ones_like(ids)
    mask[2:, :3] = 0
    mask[1, -2:] = 0
    assert prompt_runs(ids, mask, 5) == [(0, 2, 0), (2, 4, 3)]
    # Dropping a run's left padding shifts its positions: fine with rotary embeddings, not with absolute ones.
    absolute = transformers.GPT2LMHeadModel(transformers.GPT2Config(vocab_size=61, n_embd=16, n_layer=1, n_head=2))
    assert not applies(absolute, ids, mask, 5)
    assert applies(absolute, ids[:2], mask[:2], 5)
    shared, full = _model(1), _model(1)
    got, _ = shared_prefix_logps(shared, ids, mask, 5)
    want, _ = _full(full, ids, mask, 5, 1.0)
    valid = mask[:, -5:].bool()
    assert torch.allclose(got[valid], want[valid], atol=1e-5)
    got[valid].sum().backward()
    want[valid].sum().backward()
    assert _grad_norm(full) > 1e-3
    for a, b in zip(shared.parameters(), full.parameters(), strict=True):
        assert torch.allclose(a.grad, b.grad, atol=1e-5)


def test_declines_different_prompts_inner_padding_and_scaled_logits():
    ids, mask, keep = _batch()
    other = ids.clone()
    other[1, 0] = (other[1, 0] + 1) % 61
    assert shared_prefix_logps(_model(), other, mask, keep) is None
    padded = mask.clone()
    padded[0, 3] = 0  # a hole inside a prompt, not left padding
    assert shared_prefix_logps(_model(), ids, padded, keep) is None
    assert not applies(_model(), ids, mask, ids.size(1))  # no prompt at all
    capped = _model()
    capped.config.final_logit_softcapping = 30.0
    assert not applies(capped, ids, mask, keep)
    assert applies(_model(), ids, mask, keep)
    checkpointed = _model()
    checkpointed.gradient_checkpointing_enable()
    checkpointed.train()
    assert not applies(checkpointed, ids, mask, keep)
    checkpointed.eval()
    assert applies(checkpointed, ids, mask, keep)


def test_the_bundled_tiny_model_matches_on_a_real_prompt(repo_root):
    path = repo_root / "media" / "models" / "tiny-sql"
    tok = transformers.AutoTokenizer.from_pretrained(path)
    model = transformers.AutoModelForCausalLM.from_pretrained(path).float()
    text = tok.apply_chat_template(
        [{"role": "user", "content": "How many books are there?"}], tokenize=False, add_generation_prompt=True
    )
    prompt = tok(text, return_tensors="pt").input_ids
    answers = ["<sql>SELECT COUNT(*) FROM book;</sql>", "<sql>SELECT 1</sql>"]
    completion = tok(answers, padding=True, return_tensors="pt")
    ids = torch.cat([prompt.expand(2, -1), completion.input_ids], 1)
    mask = torch.cat([torch.ones(2, prompt.size(1), dtype=torch.long), completion.attention_mask], 1)
    keep = completion.input_ids.size(1)
    with torch.no_grad():
        got, _ = shared_prefix_logps(model, ids, mask, keep, temperature=1.0)
        want, _ = _full(model, ids, mask, keep, 1.0)
    valid = mask[:, -keep:].bool()
    assert torch.allclose(got[valid], want[valid], atol=1e-4)


def test_common_prefix_length():
    assert common_prefix_length([[1, 2, 3], [1, 2, 4], [1, 2]]) == 2
    assert common_prefix_length([[5], [6]]) == 0
    assert common_prefix_length([[1, 2]]) == 2
    assert common_prefix_length([]) == 0


def test_generation_with_a_shared_prefix_matches_plain_generation(repo_root):
    """Greedy turns of three conversations (one prompt, then differing earlier turns: the padding lands mid-row) come
    out token for token as each conversation generated alone."""
    path = repo_root / "media" / "models" / "tiny-sql"
    tok = transformers.AutoTokenizer.from_pretrained(path)
    model = transformers.AutoModelForCausalLM.from_pretrained(path).float().eval()
    opening = [{"role": "user", "content": "Which books did Ursula K. Le Guin write?"}]
    chats = [
        opening,
        [*opening, {"role": "assistant", "content": "<sql>SELECT 1</sql>"}, {"role": "user", "content": "1"}],
        [
            *opening,
            {"role": "assistant", "content": "<sql>SELECT title FROM book LIMIT 3</sql>"},
            {"role": "user", "content": "<observation>a | b | c</observation>"},
        ],
    ]
    rows = [tok(tok.apply_chat_template(c, tokenize=False, add_generation_prompt=True)).input_ids for c in chats]
    assert common_prefix_length(rows) > 10
    pad = tok.pad_token_id if tok.pad_token_id is not None else tok.eos_token_id
    got = generate_shared(model, rows, pad, do_sample=False, max_new_tokens=24)
    assert generate_shared(model, rows, pad, share=False, do_sample=False, max_new_tokens=24) == got
    for row, new in zip(rows, got, strict=True):
        alone = model.generate(torch.tensor([row]), do_sample=False, max_new_tokens=24, pad_token_id=pad)
        want = alone[0, len(row) :].tolist()
        assert new[: len(want)] == want
        assert all(t == pad for t in new[len(want) :])


def test_quarry_train_with_a_shared_prefix_trains_as_without_it(quarry_cli, concert_rl_data, repo_root, tmp_path):
    """Two steps of `quarry train --engine trl` (a real GRPOTrainer on a real `quarry serve-env`), with and without
    `trl.quarry.shared_prefix=true`, from one seed, in float32: the same rollouts, the same logged loss and entropy,
    and the same weight update up to float rounding (as Adam amplifies it), after a step whose gradient is not zero."""
    import json
    import subprocess

    from safetensors.torch import load_file

    data = concert_rl_data
    sets = [
        "rl.group_size=3",
        "rl.train_batch_size=2",
        "rl.mini_batch_size=2",
        "rl.micro_batch_size_per_gpu=6",
        "rl.total_steps=2",
        "rl.max_turns=2",
        # 64 tokens a turn let the tiny model close some turns and not others: rewards differ within a group, so the
        # steps have a non-zero gradient to compare (at 16 every rollout earned -1: zero advantages, zero gradient,
        # and both runs ended on the untouched initial weights).
        "rl.max_turn_tokens=64",
        "rl.max_prompt_length=3000",
        "rl.max_response_length=512",
        "rl.save_freq=100",
        "rl.lr=1e-3",
        "rl.temperature=1.0",
        "trl.use_cpu=true",
        # float32 explicitly: on a CPU with native bfloat16 (AVX512-BF16, AMX) TRL's bf16 default stays on
        # (train/precision.py), and bf16's 8-bit mantissa moves the logged entropy in the third digit between two
        # mathematically equal paths, far past the 1e-5 compared here.
        "trl.bf16=false",
        "trl.seed=11",
        # The loss path needs the model's cache in training, which gradient checkpointing turns off.
        "trl.gradient_checkpointing=false",
    ]

    def run(out, *extra):
        args = [a for s in [*sets, *extra] for a in ("--set", s)]
        cmd = [*quarry_cli, "train", "--recipe", "skyrl-sql", "--model", str(repo_root / "media/models/tiny-sql")]
        cmd += ["--data", str(data), "--out", str(out), "--python", str(repo_root / ".venv/bin/python"), *args]
        done = subprocess.run(cmd, capture_output=True, text=True, timeout=900)
        assert done.returncode == 0, done.stderr[-3000:]
        steps = [json.loads(x) for x in (out / "metrics.jsonl").read_text().splitlines() if '"reward"' in x]
        rollouts = [json.loads(x)["messages"] for x in (out / "rollouts.jsonl").read_text().splitlines()]
        return steps, rollouts, load_file(str(out / "final" / "model.safetensors"))

    plain_steps, plain_rollouts, plain = run(tmp_path / "plain")
    # (Step 1's group rewards differ; step 2's may not: Adam's momentum still moves the weights then.)
    assert any(step["grad_norm"] > 0 for step in plain_steps), "a zero gradient would make the comparison vacuous"
    initial = load_file(str(repo_root / "media/models/tiny-sql/model.safetensors"))
    moved = max(float((plain[k].float() - initial[k].float()).abs().max()) for k in plain)
    assert moved > 1e-4, "the plain run's weights moved from the initial model's"
    shared_steps, shared_rollouts, shared = run(tmp_path / "shared", "trl.quarry.shared_prefix=true")
    assert len(plain_steps) == len(shared_steps) == 2
    assert shared_rollouts == plain_rollouts
    for i, (a, b) in enumerate(zip(plain_steps, shared_steps, strict=True)):
        assert b["loss"] == pytest.approx(a["loss"], abs=1e-5)
        # Step 1 runs on the same weights: the entropy of the two paths agrees to float rounding. Step 2 runs on the
        # weights after one Adam step, where (below) a handful of parameters moved by up to ±lr on rounding alone, so
        # its entropy may differ by a few 1e-5 (3.6e-5 seen): compared at 1e-4, still far under a real divergence.
        assert b["entropy"] == pytest.approx(a["entropy"], abs=1e-5 if i == 0 else 1e-4)
        assert b["reward"] == a["reward"]
    # The weights are compared as Adam leaves them, which is not linear in the gradient: a parameter whose gradient is
    # about Adam's eps (1e-8) moves by up to ±lr on float32 rounding alone (2.4e-3 for a handful of them here, where
    # the gradients agree to 1e-6; the unit tests above compare gradients directly). So: the two runs' updates from
    # the initial weights agree as vectors, and only a sliver of the parameters differ past 1e-4.
    up = torch.cat([(plain[k].float() - initial[k].float()).flatten() for k in plain])
    us = torch.cat([(shared[k].float() - initial[k].float()).flatten() for k in plain])
    relative = float((up - us).norm() / up.norm())
    assert relative < 2e-2, f"the shared-prefix run's update is {relative} (relative) away from TRL's own path's"
    assert int(((up - us).abs() > 1e-4).sum()) < up.numel() // 1000


@pytest.mark.skipif(not torch.cuda.is_available(), reason="needs a CUDA device (the rollout on a GPU)")
def test_generation_runs_on_the_models_device(repo_root):
    """The rollout's turns on a GPU: the padded rows go where the weights are (before the fix they stayed on the CPU and
    every GRPO step on a GPU failed with "Expected all tensors to be on the same device")."""
    path = repo_root / "media" / "models" / "tiny-sql"
    tok = transformers.AutoTokenizer.from_pretrained(path)
    model = transformers.AutoModelForCausalLM.from_pretrained(path).to("cuda").eval()
    chat = [{"role": "user", "content": "Which books did Ursula K. Le Guin write?"}]
    row = tok(tok.apply_chat_template(chat, tokenize=False, add_generation_prompt=True)).input_ids
    pad = tok.pad_token_id if tok.pad_token_id is not None else tok.eos_token_id
    for share in (True, False):
        got = generate_shared(model, [row, row], pad, share=share, do_sample=False, max_new_tokens=8)
        assert len(got) == 2 and got[0] == got[1] and got[0]
