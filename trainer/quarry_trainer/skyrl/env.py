"""A skyrl-gym `BaseTextEnv` whose episodes run on `quarry serve-env` (skyrl_gym/envs/base_text_env.py: `init(prompt)
-> (prompt, metadata)`, `step(action) -> BaseTextEnvStepOutput`).

A row of `quarry data rl` (verl's schema, which SkyRL's PromptDataset reads) reaches the environment as `extras`:
`extra_info` (db_id, db_path, question, protocol, max_turns, evidence?, history?) and `reward_model.ground_truth`.
`init` opens an episode on the service and returns its opening messages (the same ones `quarry data rl` wrote);
`step` sends the model's turn and returns the service's observation, and when the episode ends the reward of the
panel (`env_config.panel` or `extras["panel"]`, default the protocol's own), scored on the whole trajectory.
The service URL and token come from `env_config.url`/`token`, else QUARRY_ENV_URL/QUARRY_ENV_TOKEN.
verl's and TRL's reward functions replay a whole response into the same kind of episode (quarry_trainer/replay.py), so
a rollout gets the same total on every engine (trainer/tests/test_reward_parity.py), with one exception: `step` gets
the text alone (no finish reason), and the service closes an action block left open at the end of a turn as a stop
string the backend stripped, so an answer cut inside its block at the token limit is scored here as if it were closed.
"""

from __future__ import annotations

from typing import Any

from skyrl_gym.envs.base_text_env import BaseTextEnv, BaseTextEnvStepOutput

from quarry_trainer.env import EnvClient


def _get(obj: Any, key: str, default: Any = None) -> Any:
    if obj is None:
        return default
    if isinstance(obj, dict):
        return obj.get(key, default)
    return getattr(obj, key, default)


class QuarryTextToSqlEnv(BaseTextEnv):
    def __init__(self, env_config: Any = None, extras: dict[str, Any] | None = None):
        super().__init__()
        extras = dict(extras or {})
        info = dict(extras.get("extra_info") or {})
        reward_model = extras.get("reward_model") or {}
        self.protocol = str(info.get("protocol") or extras.get("protocol") or "skyrl")
        db = info.get("db_id") or info.get("db_path") or extras.get("db_id")
        question = info.get("question") or extras.get("question")
        if not db or not question:
            raise ValueError(
                "the row needs extra_info.db_id (or db_path) and extra_info.question (quarry data rl writes them)"
            )
        self.db: str = str(db)
        self.question: str = str(question)
        self.gold = _get(reward_model, "ground_truth") or extras.get("gold_sql")
        self.max_turns = int(extras.get("max_turns") or info.get("max_turns") or 5)
        self.panel = _get(env_config, "panel") or extras.get("panel")
        self.evidence = info.get("evidence")
        self.history = info.get("history")
        self.client = EnvClient(_get(env_config, "url"), _get(env_config, "token"))
        self.episode_id: str | None = None
        self.last_terms: dict[str, float] | None = None

    def init(self, prompt: list[dict[str, str]]) -> tuple[list[dict[str, str]], dict[str, Any]]:
        ep = self.client.create_episode(
            protocol=self.protocol,
            db=self.db,
            question=self.question,
            gold_sql=self.gold,
            max_turns=self.max_turns,
            evidence=self.evidence,
            history=self.history,
            panel=self.panel,
        )
        self.episode_id = ep["id"]
        return ep["messages"], {"episode_id": ep["id"]}

    def step(self, action: str) -> BaseTextEnvStepOutput:
        if self.episode_id is None:
            raise RuntimeError("init() must be called before step()")
        self.turns += 1
        r = self.client.step(self.episode_id, action)
        observation = r.get("observation")
        reward = float(r["reward"]) if r.get("reward") is not None else 0.0
        self.last_terms = r.get("terms")
        if r["done"]:
            self.episode_id = None
        return BaseTextEnvStepOutput(
            observations=[] if r["done"] or observation is None else [{"role": "user", "content": observation}],
            reward=reward,
            done=bool(r["done"]),
            metadata={"terms": r.get("terms"), "end": r["info"].get("end"), "final_sql": r["info"].get("finalSql")},
        )

    def close(self) -> None:
        if self.episode_id is not None:
            self.client.end_episode(self.episode_id)
            self.episode_id = None

    def get_metrics(self) -> dict[str, Any]:
        return {f"quarry/{k}": v for k, v in (self.last_terms or {}).items()}
