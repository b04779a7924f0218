"""The bundled tiny model (media/models/tiny-sql) is a real Hugging Face checkpoint: transformers loads it offline,
its tokenizer's chat template gives the prompt ids the TypeScript side builds, and greedy decoding in transformers
gives the same tokens as onnxruntime-node on the parity prompts."""

from __future__ import annotations

import json

import pytest

from quarry_trainer import parity


@pytest.fixture(scope="module")
def model_dir(repo_root):
    return repo_root / "media" / "models" / "tiny-sql"


@pytest.fixture(scope="module")
def committed(model_dir):
    return json.loads((model_dir / "reference.json").read_text())


def test_loads_offline_as_qwen2_with_its_chat_template(model_dir):
    model, tokenizer = parity.load(model_dir)
    assert type(model).__name__ == "Qwen2ForCausalLM"
    assert model.config.architectures == ["Qwen2ForCausalLM"]
    assert tokenizer.eos_token == "<|im_end|>"
    text = tokenizer.apply_chat_template(
        [{"role": "user", "content": "hi"}], tokenize=False, add_generation_prompt=True
    )
    assert text == "<|im_start|>user\nhi<|im_end|>\n<|im_start|>assistant\n"
    for name in (
        "config.json",
        "model.safetensors",
        "tokenizer.json",
        "tokenizer_config.json",
        "generation_config.json",
        "model.onnx",
    ):
        assert (model_dir / name).is_file(), name


def test_chat_template_gives_the_reference_prompt_ids(model_dir, committed):
    _, tokenizer = parity.load(model_dir)
    for case in committed["cases"]:
        assert parity.prompt_ids(tokenizer, case["messages"]) == case["prompt_ids"]


def test_transformers_reproduces_the_committed_reference(model_dir, committed):
    cases = [c["messages"] for c in committed["cases"]]
    fresh = parity.reference(model_dir, cases, max_new_tokens=committed["cases"][0]["max_new_tokens"])
    assert fresh["stop_ids"] == committed["stop_ids"]
    assert [c["output_ids"] for c in fresh["cases"]] == [c["output_ids"] for c in committed["cases"]]


def test_transformers_and_onnxruntime_node_decode_the_same_tokens(model_dir, committed, quarry_cli, tmp_path):
    # Parity prompts: the committed ones plus questions the model never saw, decoded live by transformers here and by
    # the onnx backend in Node.
    first = committed["cases"][0]["messages"][0]
    question_cases = [c["messages"] for c in committed["cases"]]
    for q in ("Which authors were born before 1900?", "List every order placed in 2021."):
        unseen = dict(first)
        unseen["content"] = first["content"].replace(_question(first["content"]), q)
        question_cases.append([unseen])
    ref_path = tmp_path / "reference.json"
    parity.write_reference(model_dir, question_cases, ref_path, max_new_tokens=40)
    report = parity.run_parity(quarry_cli, model_dir, ref_path)
    diverged = [c for c in report["cases"] if not c["equal"]]
    assert report["equal"], f"first divergences: {[(c['index'], c['firstDivergence']) for c in diverged]}"
    assert len(report["cases"]) == len(question_cases)


def _question(prompt: str) -> str:
    """The question line of a skyrl prompt (the text after 'Question:' up to the line's end)."""
    for line in prompt.splitlines():
        if line.startswith("Question:"):
            return line[len("Question:") :].strip()
    raise AssertionError("no Question: line in the prompt")
