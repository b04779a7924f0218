"""MTIR on verl declares its tool once (issue 30, item 5). verl's tool agent loop renders the first prompt with
`apply_chat_template(messages, tools=<the tool_config.yaml schemas>)` (verl/experimental/agent_loop/tool_agent_loop.py
_handle_pending_state → agent_loop.py ct_build_initial_tokens → verl/utils/tokenizer/continuous_token.py
_render_tokens), and a tool-aware template such as Qwen2.5's writes its own `# Tools` block from them. MTIR's prompt
(App. C.1) declares the same tool in its system message, so the paper's rows on verl showed the block twice. Rows
made with `quarry data rl --tools-in-template` leave it to the template: rendered as verl renders them, with Qwen2.5's
real template (TRL 1.16's qwen2_5.jinja) on the bundled tiny model's tokenizer, one declaration remains, and it says
what the paper's said: the same name, description and parameters (less the properties' "title", which verl's schema
cannot hold; see tool_config.yaml)."""

from __future__ import annotations

import json
import re
import sqlite3
import subprocess
from pathlib import Path

import pytest
import trl

TEMPLATE = Path(trl.__file__).parent / "chat_templates" / "qwen2_5.jinja"
BLOCK_HEAD = "You are provided with function signatures within <tools></tools> XML tags:"


@pytest.fixture(scope="module")
def rows(quarry_cli, tmp_path_factory) -> dict[str, list[dict]]:
    """One Spider question as `quarry data rl --protocol mtir` writes it, with the paper's prompt and without."""
    root = tmp_path_factory.mktemp("mtir-tools")
    (root / "database" / "pets").mkdir(parents=True)
    con = sqlite3.connect(root / "database" / "pets" / "pets.sqlite")
    con.executescript("CREATE TABLE owner (id INTEGER PRIMARY KEY, name TEXT); INSERT INTO owner VALUES (1, 'Ann');")
    con.close()
    item = {"db_id": "pets", "question": "How many owners are there?", "query": "SELECT count(*) FROM owner"}
    (root / "train.json").write_text(json.dumps([item]))
    out: dict[str, list[dict]] = {}
    for name, extra in (("paper", []), ("template", ["--tools-in-template"])):
        args = ["data", "rl", "--dataset", "spider:train.json", "--db-dir", "database", "--protocol", "mtir"]
        done = subprocess.run(
            [*quarry_cli, *args, "--out", name, *extra], cwd=root, capture_output=True, text=True, timeout=300
        )
        assert done.returncode == 0, done.stderr
        out[name] = [json.loads(line) for line in (root / name / "train.jsonl").read_text().splitlines() if line]
    return out


@pytest.fixture(scope="module")
def tool_schemas(repo_root) -> list[dict]:
    """The schemas verl's tool agent loop passes as tools=: built by verl's loader from tool_config.yaml and dumped
    as ToolAgentLoop.__init__ dumps them (model_dump(exclude_unset=True, exclude_none=True))."""
    from verl.tools.tool_registry import initialize_tools_from_config

    with pytest.MonkeyPatch.context() as mp:
        # The tool's client needs a service address to be built; nothing here calls it.
        mp.setenv("QUARRY_ENV_URL", "http://127.0.0.1:9")
        tools = initialize_tools_from_config(str(repo_root / "trainer/quarry_trainer/verl/tool_config.yaml"))
    return [t.tool_schema.model_dump(exclude_unset=True, exclude_none=True) for t in tools]


@pytest.fixture(scope="module")
def tokenizer(repo_root):
    from transformers import AutoTokenizer

    tok = AutoTokenizer.from_pretrained(repo_root / "media" / "models" / "tiny-sql")
    tok.chat_template = TEMPLATE.read_text()
    return tok


def render(tokenizer, messages: list[dict], tools: list[dict]) -> str:
    return tokenizer.apply_chat_template(messages, tools=tools, add_generation_prompt=True, tokenize=False)


def test_the_rows_verl_needs_declare_the_tool_once(rows, tool_schemas, tokenizer):
    [row] = rows["template"]
    text = render(tokenizer, row["prompt"], tool_schemas)
    # One declaration: the block's sentence once, and `<tools>` twice in it (the sentence's and the opening tag).
    assert text.count(BLOCK_HEAD) == 1
    assert text.count("<tools>") == 2 and text.count("</tools>") == 2
    assert text.count('"name": "sql-execute_sql_query"') == 1
    # The paper's user prompt is all there, as the paper's rows have it.
    assert rows["paper"][0]["prompt"][1]["content"] in text


def test_the_papers_rows_under_verls_tools_declare_it_twice(rows, tool_schemas, tokenizer):
    """What the launch refuses (`quarry train` data.tools): the paper's prompt plus the template's block."""
    [row] = rows["paper"]
    text = render(tokenizer, row["prompt"], tool_schemas)
    assert text.count("<tools>") == 4
    # Without tools= (TRL, SkyRL, the editor) the paper's prompt is the only declaration.
    plain = tokenizer.apply_chat_template(row["prompt"], add_generation_prompt=True, tokenize=False)
    assert plain.count("<tools>") == 2 and "##Tools" in plain


def test_verls_declaration_says_what_the_papers_said(rows, tool_schemas):
    """App. C.1's signature, read off the paper's system prompt, against the function verl hands the template."""
    system = rows["paper"][0]["prompt"][0]
    assert system["role"] == "system"
    paper = json.loads(re.search(r"<tools>\n(.*)\n</tools>", system["content"], re.S).group(1))
    [schema] = tool_schemas
    assert schema["type"] == "function"
    verl = schema["function"]
    assert verl["name"] == paper["name"]
    assert verl["description"] == paper["description"]
    # verl's property schema has no "title" (verl/tools/schemas.py OpenAIFunctionPropertySchema); the rest is equal.
    untitled = {k: {f: v for f, v in p.items() if f != "title"} for k, p in paper["parameters"]["properties"].items()}
    assert verl["parameters"] == {**paper["parameters"], "properties": untitled}
    assert set(verl) == {"name", "description", "parameters"}
