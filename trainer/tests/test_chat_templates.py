"""Loss masks under the chat templates of real model families (issue 30, item 4). No model hub is reachable, so each
family's real template string is read from the pinned environment and put on the bundled tiny model's tokenizer
(media/models/tiny-sql), with the special tokens the template needs added, so `apply_chat_template` renders exactly as
the family does. Where each template comes from (all TRL 1.16, .venv/lib/python3.11/site-packages/trl/chat_templates/,
which stores the templates as the model repos ship them; see its README.md):

- Qwen2.5: qwen2_5.jinja ("Original Qwen2.5 chat template")
- Qwen3 (Qwen3-4B, Qwen3-8B: MTIR-SQL's and SkyRL-SQL's models): qwen3.jinja ("Original Qwen3 chat template")
- Qwen3-Instruct-2507: qwen3_instruct_2507.jinja
- Llama 3 / 3.1 / 3.2: llama3.jinja, llama3_1.jinja, llama3_2.jinja
- Gemma / Gemma 2 (identical): gemma.jinja; Gemma 3: gemma3.jinja

Mistral: no Mistral template ships anywhere in the pinned environment (no vLLM; TRL, transformers, verl and
skyrl_gym carry none), so it is not tested here rather than tested against an invented one.

For each: a conversation (system, user, assistant with `<think>`/`<sql>`, user observation, assistant final); the
trained tokens are exactly each assistant message's rendered content plus its end-of-turn marker, no prompt or
observation token trains, and the role headers (turn boundaries) do not train.
"""

from __future__ import annotations

from pathlib import Path

import pytest
import trl

from quarry_trainer.train.masks import loss_spans, tokenize_with_masks

TEMPLATES = Path(trl.__file__).parent / "chat_templates"

SYSTEM = "You write SQLite queries for the schema: singer(id, name, age)."
QUESTION = "Question: How many singers are there?"
OBSERVATION = "<observation>\n  count(*)\n0 6\n</observation>"
THINK_1 = "<think>\nThe singer table has one row per singer.\n</think>\n\n<sql>SELECT count(*) FROM singer</sql>"
THINK_2 = "<think>\nThe result is 6.\n</think>\n\n<solution>SELECT count(*) FROM singer</solution>"
PLAIN_1 = "<sql>SELECT count(*) FROM singer</sql>"
PLAIN_2 = "<solution>SELECT count(*) FROM singer</solution>"

QWEN = {"special": [], "added": [], "bos": None, "header": "<|im_start|>assistant\n", "end": "<|im_end|>\n"}
LLAMA = {
    "special": ["<|begin_of_text|>", "<|start_header_id|>", "<|end_header_id|>", "<|eot_id|>"],
    "added": [],
    "bos": "<|begin_of_text|>",
    "header": "<|start_header_id|>assistant<|end_header_id|>\n\n",
    "end": "<|eot_id|>",
}
GEMMA = {
    "special": ["<bos>", "<start_of_turn>", "<end_of_turn>"],
    "added": [],
    "bos": "<bos>",
    "header": "<start_of_turn>model\n",
    "end": "<end_of_turn>\n",
}
# Qwen3's tokenizer carries <think> and </think> as added (not special) tokens.
QWEN3 = {**QWEN, "added": ["<think>", "</think>"]}

FAMILIES = {
    "qwen2_5": QWEN,
    "qwen3": QWEN3,
    "qwen3_instruct_2507": QWEN,
    "llama3": LLAMA,
    "llama3_1": LLAMA,
    "llama3_2": LLAMA,
    "gemma": GEMMA,
    "gemma3": GEMMA,
}


def family_tokenizer(repo_root: Path, family: str):
    from transformers import AutoTokenizer

    spec = FAMILIES[family]
    tok = AutoTokenizer.from_pretrained(str(repo_root / "media/models/tiny-sql"), local_files_only=True)
    tok.chat_template = (TEMPLATES / f"{family}.jinja").read_text()
    if spec["special"]:
        tok.add_special_tokens({"additional_special_tokens": spec["special"]})
    if spec["added"]:
        tok.add_tokens(spec["added"])
    if spec["bos"]:
        tok.bos_token = spec["bos"]
    return tok


def conversation(family: str, first: str, second: str) -> list[dict]:
    opening = [{"role": "system", "content": SYSTEM}, {"role": "user", "content": QUESTION}]
    if family == "gemma":  # Gemma (1 and 2) has no system role: its template raises on one
        opening = [{"role": "user", "content": f"{SYSTEM}\n\n{QUESTION}"}]
    return [
        *[{**m, "loss": False} for m in opening],
        {"role": "assistant", "content": first, "loss": True},
        {"role": "user", "content": OBSERVATION, "loss": False},
        {"role": "assistant", "content": second, "loss": True},
    ]


def runs(tok, messages) -> tuple[list[str], str, str]:
    """The trained text as contiguous runs of trained tokens, all the untrained text, and the full render."""
    r = tokenize_with_masks(tok, messages)
    out: list[list[int]] = []
    untrained: list[int] = []
    prev = 0
    for i, m in zip(r["input_ids"], r["assistant_masks"], strict=True):
        if m:
            if not prev:
                out.append([])
            out[-1].append(i)
        else:
            untrained.append(i)
        prev = m
    text, _ = loss_spans(tok, messages)
    assert tok.decode(r["input_ids"]) == text, "the tokens decode back to the render"
    return [tok.decode(ids) for ids in out], tok.decode(untrained), text


def check(tok, family: str, messages: list[dict], expected: list[str]) -> None:
    spec = FAMILIES[family]
    trained, untrained, text = runs(tok, messages)
    assert trained == [e + spec["end"] for e in expected]
    for m in messages:
        if not m["loss"]:
            assert m["content"] in untrained, f"{m['role']} message trained"
    assert untrained.count(spec["header"]) == 2, "the assistant role headers are prompt, not loss"
    assert not any(spec["header"] in t for t in trained)
    # The turn boundary the model sees at inference: the generation prompt before the last assistant turn is a
    # prefix of the render, and the last trained run starts at or after its end.
    prompt = tok.apply_chat_template(
        [{"role": m["role"], "content": m["content"]} for m in messages[:-1]],
        tokenize=False,
        add_generation_prompt=True,
    )
    assert text.startswith(prompt)
    assert text.index(trained[-1].removesuffix(spec["end"]), len(prompt)) >= len(prompt)


@pytest.mark.parametrize("family", sorted(set(FAMILIES) - {"qwen3"}))
def test_templates_that_render_in_order_train_each_assistant_turn_and_its_end_marker(repo_root, family):
    tok = family_tokenizer(repo_root, family)
    check(tok, family, conversation(family, THINK_1, THINK_2), [THINK_1, THINK_2])


def test_qwen3_with_thinking_drops_the_earlier_turns_reasoning_as_its_template_does(repo_root):
    """Qwen3 strips `<think>…</think>` from assistant turns before the last user message: the render of the first
    three messages is not a prefix of the whole. The earlier turn trains on its answer (its reasoning is not in the
    render); the last turn trains on its reasoning and answer."""
    tok = family_tokenizer(repo_root, "qwen3")
    messages = conversation("qwen3", THINK_1, THINK_2)
    text, _ = loss_spans(tok, messages)
    assert "The singer table has one row per singer." not in text, "the template drops the earlier reasoning"
    check(tok, "qwen3", messages, [PLAIN_1, THINK_2])


def test_qwen3_without_thinking_leaves_the_inserted_empty_think_block_untrained(repo_root):
    """Without reasoning, Qwen3 still renders an empty `<think>\\n\\n</think>\\n\\n` before the last turn: that is
    template text (with `enable_thinking=False` it is the generation prompt), so it is not trained."""
    tok = family_tokenizer(repo_root, "qwen3")
    messages = conversation("qwen3", PLAIN_1, PLAIN_2)
    text, _ = loss_spans(tok, messages)
    assert "<think>\n\n</think>\n\n" + PLAIN_2 in text
    check(tok, "qwen3", messages, [PLAIN_1, PLAIN_2])
    prompt = tok.apply_chat_template(
        [{"role": m["role"], "content": m["content"]} for m in messages[:-1]],
        tokenize=False,
        add_generation_prompt=True,
        enable_thinking=False,
    )
    assert text.startswith(prompt), "with enable_thinking=False the empty think block is the generation prompt"
    r = tokenize_with_masks(tok, messages)
    n_prompt = len(tok(prompt, add_special_tokens=False)["input_ids"])
    assert r["input_ids"][:n_prompt] == tok(prompt, add_special_tokens=False)["input_ids"]
    first_turn = len(tok(PLAIN_1 + "<|im_end|>\n", add_special_tokens=False)["input_ids"])
    assert sum(r["assistant_masks"][:n_prompt]) == first_turn, "inside the prompt only the first turn trains"
    assert all(r["assistant_masks"][n_prompt:]), "the last turn trains from the end of the generation prompt"


def test_qwen3_reformatted_reasoning_trains_as_rendered(repo_root):
    """A last turn written `<think>R</think>A` renders as `<think>\\nR\\n</think>\\n\\nA`: the rendered form trains."""
    tok = family_tokenizer(repo_root, "qwen3")
    messages = conversation("qwen3", THINK_1, "<think>The result is 6.</think>" + PLAIN_2)
    check(tok, "qwen3", messages, [PLAIN_1, THINK_2])


def test_qwen3_single_turn_does_not_train_the_header(repo_root):
    """One assistant turn: the prefix renders hold, but the content is reformatted; the header still is prompt."""
    tok = family_tokenizer(repo_root, "qwen3")
    messages = conversation("qwen3", "<think>look</think>" + PLAIN_1, PLAIN_2)[:3]
    trained, untrained, _ = runs(tok, messages)
    assert trained == ["<think>\nlook\n</think>\n\n" + PLAIN_1 + "<|im_end|>\n"]
    assert untrained.count("<|im_start|>assistant\n") == 1
