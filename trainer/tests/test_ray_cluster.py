"""verl's reward and agent-loop workers on a real two-node Ray cluster started BEFORE the launch (scripts/services/
ray-cluster.sh: a head and a second raylet on this machine, each forking its workers with none of the driver's
environment) reach `quarry serve-env` and score: the way launch.sh hands them the service (RAY_RUNTIME_ENV_HOOK =
quarry_trainer.ray_env.runtime_env_hook, and `python -m quarry_trainer.ray_env serve` holding the token and, with
--per-node, a service on every node), and the way it did before (QUARRY_ENV_URL and QUARRY_ENV_TOKEN exported to the
driver only), where the workers find no URL.

The driver is this process, connected with `ray.init(address=...)` and verl's own runtime env
(verl/trainer/constants_ppo.py `get_ppo_ray_runtime_env`, as verl/trainer/main_ppo.py `run_ppo` builds it); it never
puts a Quarry variable into the workers' environment itself. The reward side is verl's RewardLoopManager
(verl/experimental/reward_loop/reward_loop.py: one RewardLoopWorker actor per node, round-robin with node affinity)
around Quarry's compute_score (quarry_trainer/verl/reward.py); the agent-loop side builds Quarry's SQL tool with verl's
tool loader inside an actor pinned to each node (verl/tools/tool_registry.py, as verl's tool agent loop does), and
verl's AgentLoopWorker, pinned to each node, runs Quarry's `quarry_agent` loop (quarry_trainer/verl/agent_loop.py) on
two SkyRL-SQL episodes against a scripted model (_verl_agent_support.py, shared with test_verl_agent_loop.py): each must
reach its node's service and score SkyRL-SQL's totals (AGENT_LOOP_PROBES). A last test submits a launch-like driver
as a Ray job (the `ray` target's way), whose runtime env Ray merges before the hook.
The cluster's address is read from QUARRY_RAY_CLUSTER_ADDRESS (.ci/run sets it, and then a cluster that does not answer
fails the tests) or $QUARRY_RAY_CLUSTER_DIR/address; without a running cluster the tests skip, saying how to start one.
"""

from __future__ import annotations

import asyncio
import contextlib
import os
import socket
import subprocess
import sys
from pathlib import Path

import pytest
from _verl_agent_support import TINY, agent_loop_config, agent_loop_worker, rollout_batch, scripted_server_class

GOLD = "SELECT name FROM singer WHERE country = 'France' ORDER BY age"
RESPONSES = {
    "<think>French singers by age</think>\n<solution>" + GOLD + "</solution>": 1.0,
    "<think>forgot the answer</think>\n<sql>SELECT 1</sql>": -1.0,
}
ROW = {"db_id": "concert", "question": "French singers by age?", "protocol": "skyrl", "index": 0}
HOOK = "quarry_trainer.ray_env.runtime_env_hook"


def cluster_dir() -> Path:
    return Path(os.environ.get("QUARRY_RAY_CLUSTER_DIR", "/tmp/quarry-ray-cluster"))


def recorded_address() -> str | None:
    path = cluster_dir() / "address"
    return path.read_text().strip() if path.is_file() else None


def files_holding(root: Path, needle: str) -> list[str]:
    found = []
    for path in root.rglob("*"):
        with contextlib.suppress(OSError):
            if path.is_file() and not path.is_symlink() and needle.encode() in path.read_bytes():
                found.append(str(path.relative_to(root)))
    return found


@pytest.fixture(scope="module")
def cluster() -> str:
    """The cluster's address: QUARRY_RAY_CLUSTER_ADDRESS (then it must answer: .ci/run sets it), else the one
    ray-cluster.sh recorded (skip when there is none or it does not answer)."""
    required = os.environ.get("QUARRY_RAY_CLUSTER_ADDRESS")
    address = required or recorded_address()
    if not address:
        pytest.skip("no two-node Ray cluster running: start it with `bash scripts/services/ray-cluster.sh start`")
    host, port = address.rsplit(":", 1)
    with contextlib.suppress(OSError), socket.create_connection((host, int(port)), timeout=5):
        return address
    if required:
        pytest.fail(f"QUARRY_RAY_CLUSTER_ADDRESS={address}: no Ray cluster answers there")
    pytest.skip(f"the Ray cluster recorded at {address} does not answer: restart scripts/services/ray-cluster.sh")


@pytest.fixture
def launch_service(quarry_cli, sql_root, tmp_path):
    """The launch's own service, as launch.sh starts it: a fresh token in a 0600 file, a free port."""
    import secrets

    from quarry_trainer.env import serve_env

    token_file = tmp_path / "serve-env.token"
    fd = os.open(token_file, os.O_WRONLY | os.O_CREAT | os.O_EXCL, 0o600)
    with os.fdopen(fd, "w") as f:
        f.write(secrets.token_hex(32))
    with serve_env([sql_root], command=quarry_cli, token_file=str(token_file)) as url:
        yield url, token_file


@contextlib.contextmanager
def ray_env_helper(cluster, repo_root, url, token_file, per_node=False, db_dir=None, quarry_cli=()):
    """`python -m quarry_trainer.ray_env serve` as launch.sh runs it; yields the directory actor's name."""
    args = [sys.executable, "-m", "quarry_trainer.ray_env", "serve", "--url", url, "--token-file", str(token_file)]
    if per_node:
        args += ["--per-node", "--db-dir", str(db_dir), "--", *quarry_cli]
    env = {**os.environ, "RAY_ADDRESS": cluster, "PYTHONPATH": str(repo_root / "trainer")}
    proc = subprocess.Popen(args, stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True, env=env)
    try:
        first = proc.stdout.readline()
        prefix = "quarry ray env: directory "
        if not first.startswith(prefix):
            proc.kill()
            pytest.fail(f"the ray_env helper printed {first!r}: {proc.stderr.read()}")
        yield first[len(prefix) :].strip()
    finally:
        proc.terminate()
        assert proc.wait(timeout=60) == 0, proc.stderr.read()


@contextlib.contextmanager
def verl_driver(cluster, repo_root):
    """ray.init as verl's run_ppo calls it: verl's runtime env merged with the recipe's (here: where quarry_trainer
    is, and offline tokenizers), on the cluster at `cluster`."""
    import ray
    from verl.trainer.constants_ppo import get_ppo_ray_runtime_env

    runtime_env = get_ppo_ray_runtime_env()
    runtime_env["env_vars"].update({"PYTHONPATH": str(repo_root / "trainer"), "HF_HUB_OFFLINE": "1"})
    ray.init(address=cluster, runtime_env=runtime_env, log_to_driver=False)
    try:
        # This folder is not on the workers' path: the probes and the shared agent-loop helpers travel by value.
        ray.cloudpickle.register_pickle_by_value(sys.modules[__name__])
        ray.cloudpickle.register_pickle_by_value(sys.modules[scripted_server_class.__module__])
        yield ray
    finally:
        ray.shutdown()


def node_ids(ray) -> list[str]:
    ids = [n["NodeID"] for n in ray.nodes() if n["Alive"]]
    assert len(ids) == 2, f"the cluster has {len(ids)} alive nodes, not 2"
    return ids


class EnvProbe:
    """What a worker of the job sees: its node, QUARRY_ENV_URL in its environment, and EnvClient's URL or error."""

    def run(self) -> dict:
        import ray

        from quarry_trainer.env import EnvClient, EnvServiceError

        out = {"node": ray.get_runtime_context().get_node_id(), "env_url": os.environ.get("QUARRY_ENV_URL")}
        try:
            client = EnvClient()
            out["url"] = f"http://{client.host}:{client.port}"
            out["health"] = client.health()
        except EnvServiceError as err:
            out["error"] = err.kind
        return out


class ToolProbe:
    """Quarry's SQL tool built by verl's tool loader from tool_config.yaml, as verl's tool agent loop builds it in
    its worker, then one call the way the loop makes it (create, execute, release)."""

    def run(self, tool_config: str) -> dict:
        import ray
        from verl.tools.tool_registry import initialize_tools_from_config

        [tool] = initialize_tools_from_config(tool_config)

        async def call():
            instance, _ = await tool.create(create_kwargs={"db": "concert"})
            try:
                return await tool.execute(instance, {"db_name": "concert", "sql": "SELECT count(*) AS n FROM singer"})
            finally:
                await tool.release(instance)

        response, _, info = asyncio.run(call())
        return {
            "node": ray.get_runtime_context().get_node_id(),
            "url": f"http://{tool.client.host}:{tool.client.port}",
            "text": response.text,
            "info": info,
        }


# quarry_agent's episodes on each node: SkyRL-SQL rows (`quarry data rl --protocol skyrl`), a scripted model, and the
# totals SkyRL-SQL's reward gives them (§4.1: 1 for a correct answer, 0 for a wrong one; −1 would be a format error or
# an episode that never opened, the loop's failure score).
AGENT_QUESTIONS = [
    {"db_id": "concert", "question": "How many singers are there?", "query": "SELECT count(*) FROM singer"},
    {
        "db_id": "concert",
        "question": "Name the French singers.",
        "query": "SELECT name FROM singer WHERE country = 'France'",
    },
]
AGENT_SCRIPTS = {
    "How many singers are there?": [
        "<think>Count the rows of singer.</think>\n<sql>SELECT count(*) FROM singer</sql>",
        "<think>There are 4 singers.</think>\n<solution>SELECT count(*) FROM singer</solution>",
    ],
    "Name the French singers.": ["<think>Every singer's name.</think>\n<solution>SELECT name FROM singer</solution>"],
}
AGENT_TOTALS = {"How many singers are there?": 1.0, "Name the French singers.": 0.0}


def agent_loop_client(worker) -> dict:
    """Inside an AgentLoopWorker (through __ray_call__): its node and the URL its quarry_agent episodes' EnvClient
    used, as quarry_trainer/verl/agent_loop.py keys the panel's failure value it learns from each episode it opens
    (host:port of the episode's client); empty when no episode opened."""
    import ray

    from quarry_trainer.verl import agent_loop

    urls = sorted({f"http://{service}" for service, _ in agent_loop._FAILURE_SCORES})
    return {"node": ray.get_runtime_context().get_node_id(), "url": " ".join(urls)}


class QuarryAgentProbe:
    """verl's AgentLoopWorker pinned to this actor's node (with its load balancer, RewardLoopWorker and the scripted
    server), as test_verl_agent_loop.py builds it, running one quarry_agent episode per row of `rows`."""

    def run(self, repo_root: str, rows: str) -> dict:
        import ray
        from ray.util.scheduling_strategies import NodeAffinitySchedulingStrategy

        here = NodeAffinitySchedulingStrategy(node_id=ray.get_runtime_context().get_node_id(), soft=False)
        config = agent_loop_config(Path(repo_root), Path(rows), panel="skyrl", max_turns=2, response_length=512)
        server = scripted_server_class().options(scheduling_strategy=here).remote(str(TINY), AGENT_SCRIPTS)
        worker, helpers = agent_loop_worker(config, server, scheduling_strategy=here)
        try:
            batch = rollout_batch(config, Path(rows))
            out = ray.get(worker.generate_sequences.remote(batch), timeout=300)
            seen = ray.get(worker.__ray_call__.remote(agent_loop_client), timeout=60)
        finally:
            for actor in (worker, server, *helpers):
                ray.kill(actor)
        questions = [info["question"] for info in batch.non_tensor_batch["extra_info"]]
        scores = {q: float(out.batch["rm_scores"][i].sum()) for i, q in enumerate(questions)}
        ends = [q["end"] for q in out.non_tensor_batch["quarry"]]
        return {
            **seen,
            "ok": len(questions) == len(AGENT_TOTALS) and scores == AGENT_TOTALS and ends == ["answer"] * len(ends),
            "scores": scores,
            "ends": ends,
        }


# The agent loops run on every node beside the tool probe: (name, actor class whose `run(repo_root, rows)`, given the
# parquet of AGENT_QUESTIONS as `quarry data rl --protocol skyrl` writes it, returns {"node": the Ray node id of the
# AgentLoopWorker, "url": the URL its episodes' EnvClient used, "ok": every episode ran to its answer and scored
# AGENT_TOTALS}). quarry_agent (quarry_trainer/verl/agent_loop.py: its _Episode.open makes the EnvClient inside
# verl's AgentLoopWorker) is driven as trainer/tests/test_verl_agent_loop.py drives it (_verl_agent_support.py). A
# worker that does not get the service (the launch before the hook) opens no episode: its URL is empty and its
# episodes score the loop's failure score, so the check fails.
AGENT_LOOP_PROBES = [("quarry_agent", QuarryAgentProbe)]


def on_each_node(ray, cls, *args) -> list[dict]:
    from ray.util.scheduling_strategies import NodeAffinitySchedulingStrategy

    actors = [
        ray.remote(cls).options(scheduling_strategy=NodeAffinitySchedulingStrategy(node_id=n, soft=False)).remote()
        for n in node_ids(ray)
    ]
    try:
        return ray.get([a.run.remote(*args) for a in actors], timeout=300)
    finally:
        for a in actors:
            ray.kill(a)


def verl_reward_config(repo_root):
    import verl
    from hydra import compose, initialize_config_dir

    config_dir = os.path.join(os.path.dirname(verl.__file__), "trainer", "config")
    with initialize_config_dir(config_dir=config_dir, version_base=None):
        return compose(
            config_name="ppo_trainer",
            overrides=[
                f"reward.custom_reward_function.path={repo_root / 'trainer/quarry_trainer/verl/reward.py'}",
                "reward.custom_reward_function.name=compute_score",
                "+reward.custom_reward_function.reward_kwargs.panel=skyrl",
                "reward.num_workers=2",
                f"actor_rollout_ref.model.path={repo_root / 'media/models/tiny-sql'}",
                "actor_rollout_ref.rollout.name=vllm",
            ],
        )


def reward_batch(repo_root, response: str):
    import numpy as np
    import torch
    from transformers import AutoTokenizer
    from verl import DataProto

    tokenizer = AutoTokenizer.from_pretrained(str(repo_root / "media/models/tiny-sql"), local_files_only=True)
    ids = tokenizer(response, add_special_tokens=False)["input_ids"]
    prompt = tokenizer("Question: French singers?", add_special_tokens=False)["input_ids"]
    return DataProto.from_dict(
        tensors={
            "responses": torch.tensor([ids]),
            "prompts": torch.tensor([prompt]),
            "attention_mask": torch.ones(1, len(prompt) + len(ids), dtype=torch.long),
        },
        non_tensors={
            "data_source": np.array(["quarry/spider"], dtype=object),
            "reward_model": np.array([{"style": "rule", "ground_truth": GOLD}], dtype=object),
            "extra_info": np.array([dict(ROW)], dtype=object),
        },
    )


def reward_worker_client(worker) -> dict:
    """Inside a RewardLoopWorker (through __ray_call__): its node and the URL compute_score's EnvClient uses."""
    import ray

    raw_fn = worker.reward_manager.compute_score.args[0]  # partial(_call_with_kwargs, compute_score, kwargs)
    client = raw_fn.__globals__["_client"]
    return {"node": ray.get_runtime_context().get_node_id(), "url": f"http://{client.host}:{client.port}"}


def test_workers_of_a_cluster_started_before_the_launch_do_not_see_the_drivers_environment(
    cluster, launch_service, repo_root, monkeypatch
):
    """What launches did before the hook: the variables exported to the driver, the workers left without them."""
    url, token_file = launch_service
    monkeypatch.setenv("QUARRY_ENV_URL", url)
    monkeypatch.setenv("QUARRY_ENV_TOKEN", token_file.read_text())
    monkeypatch.delenv("RAY_RUNTIME_ENV_HOOK", raising=False)
    with verl_driver(cluster, repo_root) as ray:
        seen = on_each_node(ray, EnvProbe)
    node_ids_of(seen)
    for s in seen:
        assert s["env_url"] is None and s["error"] == "config", s


def node_ids_of(seen: list[dict]) -> list[str]:
    assert len({s["node"] for s in seen}) == 2, f"the probes ran on {len({s['node'] for s in seen})} node(s)"
    return [s["node"] for s in seen]


@pytest.mark.parametrize("per_node", [False, True], ids=["launch-service", "service-per-node"])
def test_verl_reward_and_tool_workers_on_both_nodes_reach_the_service_and_score(
    cluster, launch_service, repo_root, sql_root, quarry_cli, make_rl_data, monkeypatch, per_node
):
    url, token_file = launch_service
    with ray_env_helper(cluster, repo_root, url, token_file, per_node, sql_root, quarry_cli) as directory:
        # What launch.sh exports before the trainer starts; the token stays in the driver's environment only.
        monkeypatch.setenv("QUARRY_ENV_URL", url)
        monkeypatch.setenv("QUARRY_ENV_TOKEN", token_file.read_text())
        monkeypatch.setenv("QUARRY_ENV_DIRECTORY", directory)
        monkeypatch.setenv("RAY_RUNTIME_ENV_HOOK", HOOK)
        with verl_driver(cluster, repo_root) as ray:
            served = ray.get(ray.get_actor(directory, namespace="quarry").urls.remote())
            nodes = node_ids(ray)
            if per_node:
                assert sorted(served["nodes"]) == sorted(nodes)
                assert len(set(served["nodes"].values()) | {url}) == 3, "one service per node besides the launch's"
            expected = {n: served["nodes"][n] if per_node else url for n in nodes}

            # The hook's variables reach every worker, the token does not (it comes from the directory actor).
            for s in on_each_node(ray, EnvProbe):
                assert s["env_url"] == url and "error" not in s, s
                assert s["url"] == expected[s["node"]] and s["health"]["ok"] is True

            # verl's agent loop worker builds Quarry's tool; its SQL runs on the node's service.
            tool_config = str(repo_root / "trainer/quarry_trainer/verl/tool_config.yaml")
            calls = on_each_node(ray, ToolProbe, tool_config)
            node_ids_of(calls)
            for c in calls:
                assert c["url"] == expected[c["node"]], c
                assert c["info"] == {"ok": True, "rows": 1} and "4" in c["text"], c
            # verl's agent loop workers run quarry_agent episodes on the node's service and score them.
            rows = make_rl_data(AGENT_QUESTIONS, max_turns=2, name="agent") / "train.parquet"
            for name, probe in AGENT_LOOP_PROBES:
                ran = on_each_node(ray, probe, str(repo_root), str(rows))
                node_ids_of(ran)
                for r in ran:
                    assert r["url"] == expected[r["node"]] and r["ok"], (name, r)

            # verl's reward loop: its manager places one RewardLoopWorker per node; each scores with compute_score.
            from verl.experimental.reward_loop.reward_loop import RewardLoopManager

            manager = RewardLoopManager(verl_reward_config(repo_root))
            workers = manager.reward_loop_workers
            for response, score in RESPONSES.items():
                batch = reward_batch(repo_root, response)
                outs = ray.get([w.compute_score_batch.remote(batch) for w in workers], timeout=300)
                assert [o[0]["reward_score"] for o in outs] == [score, score], response
            used = ray.get([w.__ray_call__.remote(reward_worker_client) for w in workers], timeout=60)
            node_ids_of(used)
            for u in used:
                assert u["url"] == expected[u["node"]], u
            for w in workers:
                ray.kill(w)
    if recorded_address() == cluster:  # the cluster's own folder, with its nodes' logs, is here
        # Ray logs every runtime env it sets up, env_vars included (runtime_env_agent.log on each node): the URL is
        # there, the token, which went through the directory actor, is in no file of the cluster.
        assert any("runtime_env_agent" in f for f in files_holding(cluster_dir(), url))
        assert files_holding(cluster_dir(), token_file.read_text()) == []
    if per_node:
        for node_url in served["nodes"].values():
            host, port = node_url.removeprefix("http://").rsplit(":", 1)
            with pytest.raises(OSError):
                socket.create_connection((host, int(port)), timeout=5).close()


# A launch run as a Ray job (the `ray` target: src/app/jobs/targets/ray.ts submits its command with the target's env,
# QUARRY_JOB_ID and QUARRY_JOB_DIR as the job's runtime env): the driver it starts joins the cluster through
# RAY_ADDRESS, which the job supervisor sets, and Ray merges the job's runtime env into the driver's before the hook.
JOB_DRIVER = """
import json, os, subprocess, sys
import ray
from ray.util.scheduling_strategies import NodeAffinitySchedulingStrategy

url, token_file = sys.argv[1], sys.argv[2]
helper = subprocess.Popen([sys.executable, "-m", "quarry_trainer.ray_env", "serve", "--url", url, "--token-file",
                           token_file], stdout=subprocess.PIPE, text=True)
line = helper.stdout.readline()
assert line.startswith("quarry ray env: directory "), line
os.environ.update(QUARRY_ENV_URL=url, QUARRY_ENV_TOKEN=open(token_file).read(), RAY_RUNTIME_ENV_HOOK="@HOOK@",
                  QUARRY_ENV_DIRECTORY=line.rsplit(" ", 1)[1].strip())
ray.init()  # as verl's main_ppo does

@ray.remote(num_cpus=0)
def probe():
    from quarry_trainer.env import EnvClient
    client = EnvClient()
    return {"node": ray.get_runtime_context().get_node_id(), "env_url": os.environ.get("QUARRY_ENV_URL"),
            "job": os.environ.get("QUARRY_JOB_ID"), "url": f"http://{client.host}:{client.port}",
            "health": client.health()["ok"]}

nodes = [n["NodeID"] for n in ray.nodes() if n["Alive"]]
pinned = [probe.options(scheduling_strategy=NodeAffinitySchedulingStrategy(n, soft=False)).remote() for n in nodes]
print("PROBES " + json.dumps(ray.get(pinned)), flush=True)
helper.terminate()
sys.exit(helper.wait())
""".replace("@HOOK@", HOOK)


def test_a_launch_run_as_a_ray_job_hands_the_service_to_workers_on_both_nodes(
    cluster, launch_service, repo_root, tmp_path
):
    import json
    import time

    from ray.job_submission import JobStatus, JobSubmissionClient

    dashboard = cluster_dir() / "dashboard"
    if recorded_address() != cluster or not dashboard.is_file():
        pytest.skip("the cluster's Jobs API is not known: ray-cluster.sh records it beside the address")
    url, token_file = launch_service
    driver = tmp_path / "driver.py"
    driver.write_text(JOB_DRIVER)
    client = JobSubmissionClient(dashboard.read_text().strip())
    job = client.submit_job(
        entrypoint=f"{sys.executable} {driver} {url} {token_file}",
        # What the ray target passes: the target's env (here PYTHONPATH, which the helper must not set again) and
        # the job's id and folder.
        runtime_env={"env_vars": {"PYTHONPATH": str(repo_root / "trainer"), "QUARRY_JOB_ID": "ray-env-test"}},
    )
    deadline = time.monotonic() + 300
    while client.get_job_status(job) not in {JobStatus.SUCCEEDED, JobStatus.FAILED, JobStatus.STOPPED}:
        assert time.monotonic() < deadline, "the Ray job did not finish within 300 s"
        time.sleep(1)
    logs = client.get_job_logs(job)
    assert client.get_job_status(job) == JobStatus.SUCCEEDED, logs
    [line] = [x for x in logs.splitlines() if x.startswith("PROBES ")]
    probes = json.loads(line.removeprefix("PROBES "))
    node_ids_of(probes)
    for p in probes:
        assert p == {**p, "env_url": url, "job": "ray-env-test", "url": url, "health": True}, p
    assert token_file.read_text() not in logs
