"""What the tests that run Quarry's verl agent loop (`quarry_agent`) share: a scripted token-level server (a Ray actor
answering `generate(...)` with TokenOutput, as vLLM's server does), verl's config composed for the loop, a batch of
`quarry data rl` rows read by verl's RLHFDataset, and verl's own AgentLoopWorker wired to the server and to a
RewardLoopWorker, as AgentLoopManager wires them. Used by test_verl_agent_loop.py (a local Ray) and
test_ray_cluster.py (on each node of a two-node cluster, where Ray pickles these functions by value: this folder is not
on the workers' path). Not a test module (its name does not start with test_).
"""

from __future__ import annotations

from pathlib import Path

TINY = Path(__file__).resolve().parents[2] / "media/models/tiny-sql"
EOS = "<EOS>"


def scripted_server_class():
    import ray
    from transformers import AutoTokenizer
    from verl.workers.rollout.replica import TokenOutput

    @ray.remote(num_cpus=0)
    class ScriptedServer:
        """Samples the scripted turn of the conversation in `prompt_ids` (found by its question, the turn by the
        assistant headers so far), stopping like vLLM: at the first token that completes a stop string, an appended
        end token, or max_tokens. Every answer is recorded."""

        def __init__(self, model: str, scripts: dict[str, list[str]]):
            self.tok = AutoTokenizer.from_pretrained(model, local_files_only=True)
            self.scripts = scripts
            self.calls: list[dict] = []

        async def generate(self, request_id, prompt_ids, sampling_params, image_data=None, video_data=None, **_):
            prompt = self.tok.decode(prompt_ids, skip_special_tokens=False)
            question = next(q for q in self.scripts if q in prompt)
            turn = prompt.count("<|im_start|>assistant") - 1
            text = self.scripts[question][turn]
            ids = self.tok.encode(text.removesuffix(EOS), add_special_tokens=False)
            if text.endswith(EOS):
                ids.append(self.tok.convert_tokens_to_ids("<|im_end|>"))
            stops = sampling_params.get("stop") or []
            for k in range(1, len(ids) + 1):
                if any(s in self.tok.decode(ids[:k]) for s in stops):
                    ids = ids[:k]
                    break
            ids = ids[: sampling_params["max_tokens"]]
            logprobs = [-0.001 * (i + 1) - 0.1 * turn for i in range(len(ids))]
            self.calls.append(
                {"question": question, "turn": turn, "params": dict(sampling_params), "ids": ids, "logprobs": logprobs}
            )
            return TokenOutput(token_ids=ids, log_probs=logprobs, stop_reason="completed", extra_fields={})

        def recorded(self) -> list[dict]:
            return self.calls

    return ScriptedServer


def agent_loop_config(repo_root: Path, train: Path, *, panel: str, max_turns: int, response_length: int):
    """verl's ppo_trainer config with Quarry's agent loop as the default loop and its reward function."""
    from hydra import compose, initialize_config_dir
    from hydra.core.global_hydra import GlobalHydra

    from quarry_trainer.preflight import verl_config_dir

    trainer = repo_root / "trainer/quarry_trainer"
    GlobalHydra.instance().clear()
    with initialize_config_dir(config_dir=str(verl_config_dir()), version_base=None):
        return compose(
            config_name="ppo_trainer",
            overrides=[
                f"actor_rollout_ref.model.path={TINY}",
                "actor_rollout_ref.rollout.name=vllm",
                f"data.train_files={train}",
                f"data.val_files={train}",
                "data.max_prompt_length=3072",
                f"data.max_response_length={response_length}",
                "actor_rollout_ref.rollout.multi_turn.enable=true",
                f"actor_rollout_ref.rollout.multi_turn.max_assistant_turns={max_turns}",
                f"actor_rollout_ref.rollout.agent.agent_loop_config_path={trainer}/verl/agent_loop.yaml",
                "actor_rollout_ref.rollout.agent.default_agent_loop=quarry_agent",
                f"reward.custom_reward_function.path={trainer}/verl/reward.py",
                "reward.custom_reward_function.name=compute_score",
                f"+reward.custom_reward_function.reward_kwargs.panel={panel}",
            ],
        )


def rollout_batch(config, train: Path):
    """Every row of `train` as verl's trainer hands a step's batch to the agent loop workers."""
    from transformers import AutoTokenizer
    from verl import DataProto
    from verl.utils.dataset.rl_dataset import RLHFDataset, collate_fn

    tok = AutoTokenizer.from_pretrained(str(TINY), local_files_only=True)
    dataset = RLHFDataset(data_files=[str(train)], tokenizer=tok, config=config.data, processor=None)
    rows = [dataset[i] for i in range(len(dataset))]
    batch = DataProto.from_single_dict(collate_fn(rows))
    batch.meta_info = {"global_steps": 1, "validate": False}
    return batch


def agent_loop_worker(config, server, **options):
    """verl's AgentLoopWorker (verl/experimental/agent_loop/agent_loop.py) as a Ray actor, with verl's LLMServerClient
    and GlobalRequestLoadBalancer (verl/workers/rollout/llm_server.py, router.py) in front of `server` and a
    RewardLoopWorker (verl/experimental/reward_loop/reward_loop.py) for its streaming rewards; `options` (a scheduling
    strategy) go to the three actors. Returns (worker, [the helper actors]) so a caller can kill them all."""
    import ray
    from verl.experimental.agent_loop.agent_loop import AgentLoopWorker
    from verl.experimental.reward_loop.reward_loop import RewardLoopWorker
    from verl.workers.rollout.llm_server import LLMServerClient
    from verl.workers.rollout.router import GlobalRequestLoadBalancer

    options = {"num_cpus": 0, **options}
    balancer = ray.remote(GlobalRequestLoadBalancer).options(**options).remote(servers={"scripted": server})
    rewarder = ray.remote(RewardLoopWorker).options(**options).remote(config)
    worker = (
        ray.remote(AgentLoopWorker)
        .options(**options)
        .remote(config, LLMServerClient(config, load_balancer_handle=balancer), None, [rewarder])
    )
    return worker, [balancer, rewarder]
