"""`quarry data rl|sft` read back by independent readers: the real CLI writes Parquet over a Spider-format (and a
SParC-format) dataset built here, pyarrow reads every column, and verl's own dataset classes (RLHFDataset for RL,
MultiTurnSFTDataset for SFT) load the files with the tiny model's tokenizer, offline. The SFT trajectories come from
a real `quarry bench` run against the replay server (scripts/replay-server.mjs) on 127.0.0.1."""

from __future__ import annotations

import hashlib
import json
import sqlite3
import subprocess
from pathlib import Path

import pyarrow as pa
import pyarrow.parquet as pq
import pytest

PETS = """
CREATE TABLE owner (owner_id INTEGER PRIMARY KEY, name TEXT, city TEXT, age INTEGER);
CREATE TABLE pet (pet_id INTEGER PRIMARY KEY, owner_id INTEGER REFERENCES owner(owner_id), kind TEXT, name TEXT);
INSERT INTO owner VALUES (1, 'Ann', 'Oslo', 34), (2, 'Bo', 'Bergen', 51), (3, 'Cy', 'Oslo', 27);
INSERT INTO pet VALUES (1, 1, 'dog', 'Rex'), (2, 1, 'cat', 'Tom'), (3, 2, 'dog', 'Fido');
"""
SHOP = """
CREATE TABLE item (item_id INTEGER PRIMARY KEY, title TEXT, price REAL);
INSERT INTO item VALUES (1, 'lamp', 20.5), (2, 'chair', 45.0), (3, 'rug', 99.9);
"""
QUESTIONS = [
    ("pets", "How many owners are there?", "SELECT count(*) FROM owner"),
    ("pets", "List the names of dogs.", "SELECT name FROM pet WHERE kind = 'dog'"),
    ("shop", "What is the most expensive item?", "SELECT title FROM item ORDER BY price DESC LIMIT 1"),
    ("shop", "Which items cost more than 1000?", "SELECT title FROM item WHERE price > 1000"),
    ("shop", "How many vendors are there?", "SELECT count(*) FROM vendor"),
]

RL_COLUMNS = ["data_source", "prompt", "ability", "reward_model", "extra_info", "agent_name"]
EXTRA_INFO = ["index", "db_id", "db_path", "question", "hardness", "protocol", "max_turns", "evidence", "history"]


@pytest.fixture(scope="module")
def fixture_dir(tmp_path_factory) -> Path:
    """Two SQLite databases in Spider's layout and a Spider-format question file."""
    root = tmp_path_factory.mktemp("spider-fixture")
    for db_id, script in (("pets", PETS), ("shop", SHOP)):
        (root / "database" / db_id).mkdir(parents=True)
        con = sqlite3.connect(root / "database" / db_id / f"{db_id}.sqlite")
        con.executescript(script)
        con.close()
    items = [{"db_id": d, "question": q, "query": s} for d, q, s in QUESTIONS]
    (root / "train_fixture.json").write_text(json.dumps(items))
    return root


@pytest.fixture(scope="module")
def tokenizer(repo_root):
    from transformers import AutoTokenizer

    return AutoTokenizer.from_pretrained(repo_root / "media" / "models" / "tiny-sql")


def run_cli(quarry_cli, *args, cwd) -> subprocess.CompletedProcess:
    done = subprocess.run([*quarry_cli, *args], cwd=cwd, capture_output=True, text=True, timeout=300)
    assert done.returncode == 0, done.stderr
    return done


def jsonl(path: Path) -> list[dict]:
    return [json.loads(line) for line in path.read_text().splitlines() if line]


def sha256(path: Path) -> str:
    return hashlib.sha256(path.read_bytes()).hexdigest()


def verl_rl_dataset(files, tokenizer, tmp_path, max_prompt_length=8192):
    from omegaconf import OmegaConf
    from verl.utils.dataset.rl_dataset import RLHFDataset

    config = OmegaConf.create(
        {"prompt_key": "prompt", "max_prompt_length": max_prompt_length, "cache_dir": str(tmp_path / "verl-cache")}
    )
    return RLHFDataset(files, tokenizer, config)


@pytest.fixture(scope="module")
def rl_out(quarry_cli, fixture_dir, tmp_path_factory) -> Path:
    out = tmp_path_factory.mktemp("rl") / "out"
    run_cli(
        quarry_cli,
        "data",
        "rl",
        "--dataset",
        "spider:train_fixture.json",
        "--db-dir",
        "database",
        "--protocol",
        "skyrl",
        "--max-turns",
        "3",
        "--drop-empty-gold",
        "--out",
        str(out),
        cwd=fixture_dir,
    )
    return out


def test_rl_parquet_has_every_column_in_verls_schema(rl_out, fixture_dir):
    table = pq.read_table(rl_out / "train.parquet")
    assert table.column_names == RL_COLUMNS
    schema = table.schema
    message = pa.struct([pa.field("role", pa.string(), False), pa.field("content", pa.string(), False)])
    assert schema.field("prompt").type == pa.list_(pa.field("element", message, False))
    assert schema.field("reward_model").type == pa.struct(
        [pa.field("style", pa.string(), False), pa.field("ground_truth", pa.string(), False)]
    )
    extra = schema.field("extra_info").type
    assert [extra.field(i).name for i in range(extra.num_fields)] == EXTRA_INFO
    assert extra.field("index").type == pa.int64() and extra.field("max_turns").type == pa.int64()

    rows = table.to_pylist()
    # The failing gold (no table vendor) and the empty one (--drop-empty-gold) are gone.
    assert [r["extra_info"]["question"] for r in rows] == [q for _, q, _ in QUESTIONS[:3]]
    for row, (db_id, question, gold) in zip(rows, QUESTIONS):
        assert row["data_source"] == "quarry/spider"
        assert row["ability"] == "text2sql"
        assert row["reward_model"] == {"style": "rule", "ground_truth": gold}
        # The verl agent loop that plays the row (AgentLoopWorker reads agent_name): Quarry's for skyrl.
        assert row["agent_name"] == "quarry_agent"
        info = row["extra_info"]
        assert info["db_id"] == db_id
        assert info["db_path"] == str(fixture_dir / "database" / db_id / f"{db_id}.sqlite")
        assert (info["protocol"], info["max_turns"], info["evidence"], info["history"]) == ("skyrl", 3, None, None)
        assert info["hardness"] in {"easy", "medium", "hard", "extra"}
        assert [m["role"] for m in row["prompt"]] == ["user"]
        assert question in row["prompt"][0]["content"]
    assert "create table owner" in rows[0]["prompt"][0]["content"]
    # The JSONL holds the same records.
    assert jsonl(rl_out / "train.jsonl") == rows


def test_rl_data_json_describes_the_run(rl_out, fixture_dir):
    doc = json.loads((rl_out / "data.json").read_text())
    assert (doc["schema"], doc["kind"]) == ("quarry.data/1", "rl")
    dataset = fixture_dir / "train_fixture.json"
    assert doc["sources"] == [
        {"role": "dataset", "path": str(dataset), "bytes": dataset.stat().st_size, "sha256": sha256(dataset)}
    ]
    assert doc["counts"]["dropped"] == {"gold-fails": 1, "empty-gold": 1}
    assert {o["file"]: (o["rows"], o["sha256"]) for o in doc["outputs"]} == {
        "train.parquet": (3, sha256(rl_out / "train.parquet")),
        "train.jsonl": (3, sha256(rl_out / "train.jsonl")),
    }


def test_verls_rl_dataset_loads_the_parquet_and_the_jsonl(rl_out, tokenizer, tmp_path):
    rows = pq.read_table(rl_out / "train.parquet").to_pylist()
    for name in ("train.parquet", "train.jsonl"):
        dataset = verl_rl_dataset(str(rl_out / name), tokenizer, tmp_path)
        assert len(dataset) == len(rows)
        for i, row in enumerate(rows):
            item = dataset[i]
            assert item["raw_prompt"] == row["prompt"]
            assert item["reward_model"] == row["reward_model"]
            assert item["data_source"] == "quarry/spider"
            assert item["extra_info"] == row["extra_info"]
            assert item["index"] == row["extra_info"]["index"]
            text = tokenizer.apply_chat_template(item["raw_prompt"], add_generation_prompt=True, tokenize=False)
            assert text.startswith("<|im_start|>user\nTask Overview:") and text.endswith("<|im_start|>assistant\n")
    # verl's overlong-prompt filter sees the same token counts as the tokenizer.
    texts = [tokenizer.apply_chat_template(r["prompt"], add_generation_prompt=True, tokenize=False) for r in rows]
    lengths = [len(tokenizer(t, add_special_tokens=False)["input_ids"]) for t in texts]
    assert len(set(lengths)) == len(lengths), lengths
    cut = sorted(lengths)[1]
    filtered = verl_rl_dataset(str(rl_out / "train.parquet"), tokenizer, tmp_path, max_prompt_length=cut)
    assert len(filtered) == 2


def test_rl_conversational_history_reads_back(quarry_cli, fixture_dir, tokenizer, tmp_path):
    sparc = [
        {
            "database_id": "pets",
            "interaction": [
                {"utterance": "Show all owners.", "query": "SELECT name FROM owner"},
                {"utterance": "Only those in Oslo.", "query": "SELECT name FROM owner WHERE city = 'Oslo'"},
            ],
            "final": {"utterance": "Owners in Oslo.", "query": "SELECT name FROM owner WHERE city = 'Oslo'"},
        }
    ]
    (fixture_dir / "sparc_fixture.json").write_text(json.dumps(sparc))
    out = tmp_path / "sparc"
    run_cli(
        quarry_cli,
        *("data", "rl", "--dataset", "sparc:sparc_fixture.json", "--db-dir", "database", "--protocol", "mtsqlr1"),
        *("--out", str(out)),
        cwd=fixture_dir,
    )
    rows = pq.read_table(out / "train.parquet").to_pylist()
    assert [r["extra_info"]["history"] for r in rows] == [
        [],
        [{"question": "Show all owners.", "sql": "SELECT name FROM owner"}],
    ]
    assert rows[0]["data_source"] == "quarry/sparc"
    assert [m["role"] for m in rows[1]["prompt"]] == ["system", "user"]
    dataset = verl_rl_dataset(str(out / "train.parquet"), tokenizer, tmp_path)
    assert dataset[1]["extra_info"]["history"] == rows[1]["extra_info"]["history"]


@pytest.fixture(scope="module")
def bench_run(quarry_cli, repo_root, fixture_dir, tmp_path_factory) -> Path:
    """`quarry bench --samples 2` against the replay server: right, then wrong, answers."""
    script = tmp_path_factory.mktemp("replay") / "script.json"
    entries = [
        {"match": q, "responses": [f"<think>Query it.</think>\n<sql>{s}</sql>", f"<solution>{s}</solution>"]}
        for _, q, s in QUESTIONS[:3]
    ]
    entries += [{"match": q, "response": "<solution>SELECT 1</solution>"} for _, q, _ in QUESTIONS]
    script.write_text(json.dumps(entries))
    server = subprocess.Popen(
        [quarry_cli[0], str(repo_root / "scripts" / "replay-server.mjs"), "--script", str(script), "--port", "0"],
        stdout=subprocess.PIPE,
        text=True,
    )
    try:
        line = server.stdout.readline().split()
        assert line[0] == "listening", line
        out = tmp_path_factory.mktemp("bench") / "run"
        run_cli(
            quarry_cli,
            *("bench", "--dataset", "spider:train_fixture.json", "--db-dir", "database"),
            *("--model", f"openai:{line[1]}#replay", "--protocol", "skyrl", "--samples", "2", "--out", str(out)),
            cwd=fixture_dir,
        )
        return out
    finally:
        server.terminate()
        server.wait(timeout=30)


def test_sft_parquet_is_masked_conversations_verl_and_trl_read(quarry_cli, bench_run, tokenizer, tmp_path):
    out = tmp_path / "sft"
    run_cli(
        quarry_cli,
        *("data", "sft", "--trajectories", str(bench_run / "trajectories.jsonl"), "--correct-only"),
        *("--out", str(out)),
        cwd=tmp_path,
    )
    table = pq.read_table(out / "sft.parquet")
    message = pa.struct(
        [
            pa.field("role", pa.string(), False),
            pa.field("content", pa.string(), False),
            pa.field("loss", pa.bool_(), False),
        ]
    )
    assert table.schema.field("messages").type == pa.list_(pa.field("element", message, False))
    rows = table.to_pylist()
    assert rows == jsonl(out / "sft.jsonl")
    # Sample 0 of the first three questions ran SQL, then answered right; every sample 1 answered SELECT 1.
    assert [r["question"] for r in rows] == [q for _, q, _ in QUESTIONS[:3]]
    for r in rows:
        assert [m["role"] for m in r["messages"]] == ["user", "assistant", "user", "assistant"]
        assert [m["loss"] for m in r["messages"]] == [False, True, False, True]

    from omegaconf import OmegaConf
    from verl.utils.dataset.multiturn_sft_dataset import MultiTurnSFTDataset

    config = OmegaConf.create({"max_length": 16384, "truncation": "error", "pad_mode": "no_padding"})
    dataset = MultiTurnSFTDataset(str(out / "sft.parquet"), tokenizer, config)
    assert len(dataset) == len(rows)
    for i, r in enumerate(rows):
        item = dataset[i]
        trained = item["input_ids"][item["loss_mask"] == 1].tolist()
        # verl trains each assistant message's content and its end-of-turn tokens, nothing else.
        expected = "".join(m["content"] + "<|im_end|>\n" for m in r["messages"] if m["loss"])
        assert tokenizer.decode(trained) == expected

    import datasets
    from trl.data_utils import is_conversational

    loaded = datasets.load_dataset("parquet", data_files=str(out / "sft.parquet"), cache_dir=str(tmp_path / "hf"))
    assert is_conversational(loaded["train"][0])
