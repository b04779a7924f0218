"""verl agent loop `quarry_agent`: each rollout is a real episode of `quarry serve-env`, played turn by turn.

verl 0.9.1 builds one agent loop per rollout (verl/experimental/agent_loop/agent_loop.py: AgentLoopWorker reads
`actor_rollout_ref.rollout.agent.agent_loop_config_path` — here agent_loop.yaml, which names this class
`quarry_agent` — and instantiates the loop a row's `agent_name` names, else `agent.default_agent_loop`). `run` gets
the row's dataset fields (`raw_prompt`, `extra_info`, `reward_model`, as `quarry data rl` writes them) and:

  1. opens an episode of the row's protocol on the service (`EnvClient.create_episode`: db_id, question, gold, the turn
     budget, evidence, history; the panel of `reward.custom_reward_function.reward_kwargs.panel`, else the row's,
     else the protocol's own) and renders the row's prompt once (`ct_build_initial_tokens`);
  2. asks verl's server (`server_manager.generate`, verl/workers/rollout/llm_server.py LLMServerClient) for one turn
     with the stop strings the service gave (`stop` of the create and step replies, the protocol's own:
     core/training/protocolStops.ts) and `max_tokens` = what is left of `rollout.response_length`; vLLM and SGLang
     both read `stop` and `max_tokens` from the sampling params (verl/workers/rollout/vllm_rollout/
     vllm_async_server.py `SamplingParams(max_tokens=…, **sampling_params)`, sglang_rollout/async_sglang_server.py);
  3. keeps the sampled token ids and their logprobs exactly as sampled (`ct_merge_assistant_token`: mask 1) and sends
     the turn's text to the service (`step`). A turn that ended at a stop string is closed with the chat template's
     end-of-turn marker (mask 0), as the template would have closed the message; the observation (read with its role
     from the episode's record, GET /v1/episodes/{id}) is tokenized by verl's Continuous Token builder and appended
     (`ct_merge_context_msg`: mask 0). Nothing the model wrote is re-rendered;
  4. ends when the service says the episode is done; its step reply carries the panel's total and terms, scored on
     the trajectory the episode built (episodes.ts). A turn cut at the token limit (the response budget spent, no stop
     string, no end token) is kept as sampled, gets no end marker and ends the episode: it is not sent as a step (the
     service would close its open block as a stripped stop string); the record so far plus that turn, with finish
     reason `length` and end `budget`, is scored by POST /v1/reward — what `quarry reward --trajectory` prints. An
     observation that would not fit in the budget, or more generations than the budget and a final call, end the
     episode the same way (`budget`).

The score reaches verl's reward path without a second scoring: it is put in `extra_fields["reward_scores"]["quarry"]`
({"score": total, <term>: contribution, …}). verl's streaming reward loop (AgentLoopWorker._compute_score →
RewardLoopWorker → verl/experimental/reward_loop/reward_manager/naive.py) hands the loop's extra fields to the reward
function inside `extra_info` (`tool_extra_fields`), and the batch reward path (reward model colocated) hands the
`reward_scores` column as `extra_info["rollout_reward_scores"]`; quarry_trainer/verl/reward.py returns that dict as it
is in both cases, so the step's score is the panel's total.

Failures are recorded, never raised (an exception would end the whole batch): a service error ends the episode with
`end: error` and the error in `extra_fields["quarry"]`, scored by the panel on the record that ended in error. When
the service cannot score it either (it is down, or the episode never opened), the score is the panel's failure value
this worker learnt from the first episode of that panel (its total on a record that ended in error before any turn),
else agent_loop.yaml's `failure_score`.

MTIR-SQL keeps verl's own tool agent loop (`tool_agent`, with quarry_trainer/verl/tool.py) in Quarry's launch: its
action is a hermes `<tool_call>` that verl's tool parser reads, its observation is the chat template's own tool turn
(Qwen renders `role: tool` as the same `<tool_response>` user turn the protocol writes), and the tool is declared once,
by the template (`quarry data rl --tools-in-template`, which the pre-flight requires), as the paper's Qwen model saw it.
This loop has no template tool turn: its MTIR rows would declare the tool in the prompt, and the protocol's "rethink"
(App. B line 20: text appended to the model's own turn, role `assistant`) is appended here as context tokens right after
the sampled ones. It runs MTIR rows all the same when a row's `agent_name` asks for it.
"""

from __future__ import annotations

import logging
import os
from typing import TYPE_CHECKING, Any, cast
from uuid import uuid4

from omegaconf import OmegaConf
from verl.experimental.agent_loop.agent_loop import AgentLoopBase, AgentLoopMetrics, AgentLoopOutput
from verl.utils.profiler import simple_timer
from verl.workers.rollout.replica import TokenOutput

from quarry_trainer.env import EnvClient, EnvServiceError
from quarry_trainer.replay import row_task, split_turn
from quarry_trainer.verl.reward import terms_of

if TYPE_CHECKING:
    from transformers import PreTrainedTokenizerBase

logger = logging.getLogger(__file__)
logger.setLevel(os.getenv("VERL_LOGGING_LEVEL", "WARN"))

AGENT_NAME = "quarry_agent"
# The panel's failure value, learnt once per (service, panel) in this worker process: {"score", <term>: …}.
_FAILURE_SCORES: dict[tuple[str, str], dict[str, float]] = {}
# The chat template's end-of-turn marker (the text after an assistant message's content), per tokenizer.
_END_MARKERS: dict[int, list[int]] = {}
_SENTINEL = "QUARRY-END-OF-CONTENT"


def end_marker_ids(tokenizer: Any) -> list[int]:
    """The tokens the chat template writes after an assistant message's content (Qwen: `<|im_end|>\\n`)."""
    key = id(tokenizer)
    if key not in _END_MARKERS:
        text = tokenizer.apply_chat_template(
            [{"role": "user", "content": "q"}, {"role": "assistant", "content": _SENTINEL}],
            tokenize=False,
            add_generation_prompt=False,
        )
        at = text.rfind(_SENTINEL)
        suffix = text[at + len(_SENTINEL) :] if at >= 0 else ""
        _END_MARKERS[key] = tokenizer.encode(suffix, add_special_tokens=False) if suffix else []
    return _END_MARKERS[key]


class QuarryAgentLoop(AgentLoopBase):
    def __init__(self, *args: Any, failure_score: float = -1.0, name: str | None = None, **kwargs: Any):
        super().__init__(*args, **kwargs)
        # verl annotates AgentLoopBase.tokenizer as AutoTokenizer (verl/experimental/agent_loop/agent_loop.py), the
        # factory class; what it holds is the model's tokenizer.
        self.text_tokenizer = cast("PreTrainedTokenizerBase", self.tokenizer)
        self.response_length = int(self.rollout_config.response_length)
        self.max_assistant_turns = self.rollout_config.multi_turn.max_assistant_turns
        self.failure_score = float(failure_score)
        self.panel = OmegaConf.select(self.config, "reward.custom_reward_function.reward_kwargs.panel", default=None)

    async def _call(self, fn: Any, *args: Any, **kwargs: Any) -> Any:
        """A (blocking) EnvClient call, off the event loop the worker's rollouts share."""
        return await self.loop.run_in_executor(None, lambda: fn(*args, **kwargs))

    async def run(self, sampling_params: dict[str, Any], priority: int = 0, **kwargs: Any) -> AgentLoopOutput:
        messages = [dict(m) for m in kwargs["raw_prompt"]]
        info = dict(kwargs.get("extra_info") or {})
        gold = (kwargs.get("reward_model") or {}).get("ground_truth")
        ep = _Episode(self, info, gold)
        metrics: dict[str, Any] = {}
        prompt_ids = await self.ct_build_initial_tokens(messages)
        runtime = list(prompt_ids)
        mask: list[int] = []
        logprobs: list[float] | None = []
        extra: dict[str, Any] = {}
        assistant_turns = user_turns = 0
        request_id = f"det-{int(priority)}" if self.rollout_config.full_determinism else uuid4().hex

        await ep.open()
        while ep.end is None:
            room = self.response_length - len(mask)
            if room < 1 or (ep.cap is not None and assistant_turns >= ep.cap):
                await ep.finish("budget")
                break
            params = {**sampling_params, "stop": list(ep.stops), "max_tokens": room}
            with simple_timer("generate_sequences", metrics):
                out: TokenOutput = await self.server_manager.generate(
                    request_id=request_id, prompt_ids=runtime, sampling_params=params, priority=int(priority)
                )
            preempted = out.num_preempted if out.num_preempted is not None else 0
            metrics["num_preempted"] = metrics.get("num_preempted", 0) + preempted
            extra.setdefault("max_global_steps", out.extra_fields.get("max_global_steps"))
            extra.setdefault("min_global_steps", out.extra_fields.get("min_global_steps"))
            if out.stop_reason == "aborted":
                await ep.fail("the rollout server aborted the generation")
                break
            sampled_logprobs = out.log_probs or None
            merged, mask, logprobs = await self.ct_merge_assistant_token(
                runtime, out.token_ids, mask, logprobs if sampled_logprobs else None, sampled_logprobs
            )
            runtime = merged.token_ids
            assistant_turns += 1
            text = self._decode(out.token_ids)
            if self._cut(out.token_ids, text, ep.stops):
                await ep.finish_cut(text, len(out.token_ids))
                break
            turn, _ = split_turn(text, ep.stops)
            observations = await ep.step(turn)
            if ep.end is not None:
                break
            added = await self._append(messages, text, observations, runtime, mask, logprobs, out.token_ids)
            if added is None:
                await ep.finish("budget")
                break
            runtime, mask, logprobs = added
            user_turns += 1

        response_ids = runtime[len(runtime) - len(mask) :] if mask else []
        prompt_part = runtime[: len(runtime) - len(mask)]
        extra.update(ep.fields())
        extra.update({"turn_scores": [], "tool_rewards": []})
        return AgentLoopOutput(
            prompt_ids=prompt_part,
            response_ids=response_ids[: self.response_length],
            response_mask=mask[: self.response_length],
            response_logprobs=logprobs[: self.response_length] if logprobs else None,
            num_turns=assistant_turns + user_turns + 1,
            metrics=AgentLoopMetrics(**metrics),
            extra_fields=extra,
        )

    def _decode(self, ids: list[int]) -> str:
        """The text of one sequence (decode's `str | list[str]` is for a batch, which this never passes)."""
        text = self.text_tokenizer.decode(ids, skip_special_tokens=True)
        assert isinstance(text, str)
        return text

    def _ended_by_token(self, ids: list[int]) -> bool:
        """The generation's last token is a special one (the end-of-turn or EOS token the server stopped at)."""
        return bool(ids) and ids[-1] in set(self.text_tokenizer.all_special_ids)

    def _cut(self, ids: list[int], text: str, stops: list[str]) -> bool:
        """Cut at the token limit: neither a stop string nor an end token ended the generation, so `max_tokens` (or
        the server's context bound below it) did."""
        return not any(s and s in text for s in stops) and not self._ended_by_token(ids)

    async def _append(
        self,
        messages: list[dict],
        text: str,
        observations: list[dict],
        runtime: list[int],
        mask: list[int],
        logprobs: list[float] | None,
        sampled: list[int],
    ) -> tuple[list[int], list[int], list[float] | None] | None:
        """The end of the turn, the observations and the next generation prompt appended as context (mask 0); None
        when they leave no room to generate within the response budget.

        The turn is closed as the chat template closes an assistant message: with its whole end marker after a stop
        string, with the rest of it after an end token (Qwen: the newline after a sampled `<|im_end|>`). A turn the
        protocol continues (an `assistant` observation) is not closed."""
        continues = bool(observations) and observations[0]["role"] == "assistant"
        marker = [] if continues else end_marker_ids(self.tokenizer)
        done = next((j for j in range(len(marker), 0, -1) if sampled[-j:] == marker[:j]), 0)
        closing = marker[done:]
        runtime = runtime + closing
        mask = mask + [0] * len(closing)
        logprobs = logprobs + [0.0] * len(closing) if logprobs is not None else None
        messages.append({"role": "assistant", "content": text})
        for obs in observations:
            if obs["role"] == "assistant":
                # The protocol continues the model's own turn (MTIR-SQL's rethink): its text follows the sampled tokens.
                ids = self.text_tokenizer.encode("\n" + obs["content"], add_special_tokens=False)
                runtime, mask = runtime + ids, mask + [0] * len(ids)
                logprobs = logprobs + [0.0] * len(ids) if logprobs is not None else None
                messages[-1] = {**messages[-1], "content": messages[-1]["content"] + "\n" + obs["content"]}
                continue
            before = list(messages)
            messages.append({"role": obs["role"], "content": obs["content"]})
            merged, mask, logprobs = await self.ct_merge_context_msg(before, messages, runtime, mask, logprobs)
            runtime = merged.token_ids
        if not continues and not any(o["role"] != "assistant" for o in observations):
            # No observation (SQL-Trail's turn without an action): the next turn is a new assistant message.
            prompt = self.continuous_token_builder.render_delta_token_id(messages, [], add_generation_prompt=True)
            runtime, mask = runtime + prompt, mask + [0] * len(prompt)
            logprobs = logprobs + [0.0] * len(prompt) if logprobs is not None else None
        if len(mask) >= self.response_length:
            return None
        return runtime, mask, logprobs


class _Episode:
    """One rollout's episode on the service: its id, stop strings, end, and the score it gets."""

    def __init__(self, agent: QuarryAgentLoop, info: dict[str, Any], gold: str | None):
        self.agent = agent
        self.info = info
        self.gold = gold
        self.id: str | None = None
        self.stops: list[str] = []
        self.end: str | None = None
        self.error: str | None = None
        self.scores: dict[str, float] | None = None
        self.cut = False
        self.client: EnvClient | None = None
        self.task: dict[str, Any] = {}
        self.panel = "skyrl"
        self.cap: int | None = None

    async def open(self) -> None:
        try:
            self.task = row_task(self.info)
            budget = self.agent.max_assistant_turns or self.task["max_turns"]
            self.task["max_turns"] = int(budget) if budget else None
            self.panel = str(self.agent.panel or self.info.get("panel") or self.task["protocol"])
            # A protocol may grant one last generation after its budget (SQL-Trail's final call); the service ends it.
            self.cap = self.task["max_turns"] + 1 if self.task["max_turns"] else None
            client = self.client = EnvClient()
            ep = await self.agent._call(
                client.create_episode,
                gold_sql=self.gold,
                panel=self.agent.panel or self.info.get("panel"),
                **self.task,
            )
        except (EnvServiceError, ValueError, KeyError, TypeError) as err:
            await self.fail(f"the episode did not open: {err}")
            return
        self.id = ep["id"]
        self.stops = list(ep.get("stop") or [])
        await self._learn_failure_value(client)

    async def step(self, turn: str) -> list[dict]:
        """Sends the turn; the observations (with their roles) when the episode goes on, [] when it ended."""
        client = self.client
        if client is None:  # open() failed and said so; the loop stops at a failed episode
            return []
        try:
            reply = await self.agent._call(client.step, self.id, turn)
            if reply["done"]:
                self.id = None
                self.end = (reply.get("info") or {}).get("end") or "answer"
                if reply.get("reward") is not None:
                    self.scores = {"score": float(reply["reward"])}
                    self.scores.update({k: float(v) for k, v in (reply.get("terms") or {}).items()})
                else:
                    self.error = "the episode has no gold SQL to score"
                    self.scores = self._failure_value()
                return []
            record = await self.agent._call(client.request, "GET", f"/v1/episodes/{self.id}")
            self.stops = list(reply.get("stop") or self.stops)
            return [
                {"role": o["role"], "content": o["content"]}
                for o in record["turns"][-1]["observations"]
                if isinstance(o.get("content"), str)
            ]
        except (EnvServiceError, KeyError, TypeError, IndexError) as err:
            await self.fail(f"the step failed: {err}")
            return []

    async def finish(self, end: str) -> None:
        """Ends the episode here (`budget`): the record so far scored by the panel."""
        await self._score_record(end, None)

    async def finish_cut(self, text: str, tokens: int) -> None:
        """Ends the episode at a turn cut by the token limit: that turn joins the record as written, unstepped."""
        self.cut = True
        turn: dict[str, Any] = {
            "assistant": text,
            "action": {
                "kind": "invalid",
                "sql": None,
                "thought": None,
                "mdp": [],
                "problems": ["cut at the token limit (the response length budget) before the turn ended"],
            },
            "observations": [],
            "exec": None,
            "finishReason": "length",
            "usage": {"promptTokens": 0, "completionTokens": tokens},
            "timings": {"modelMs": 0, "envMs": 0},
        }
        await self._score_record("budget", None, turn)

    async def fail(self, why: str) -> None:
        logger.warning("quarry_agent: %s", why)
        await self._score_record("error", why)

    async def _score_record(self, end: str, error: str | None, last_turn: dict | None = None) -> None:
        self.end = end
        if error is not None:
            self.error = error
        record = None
        client = self.client
        if self.id is not None and client is not None:
            try:
                record = await self.agent._call(client.request, "GET", f"/v1/episodes/{self.id}")
            except EnvServiceError as err:
                self.error = self.error or f"the episode's record could not be read: {err}"
        if record is not None and client is not None:
            if last_turn is not None:
                record["turns"].append({"index": len(record["turns"]), **last_turn})
            record.update({"end": end, "error": error, "finalSql": None})
            try:
                self.scores = terms_of(await self.agent._call(client.reward, self._reward_request(record)))
            except EnvServiceError as err:
                self.error = self.error or f"the panel could not score the episode: {err}"
        if self.scores is None:
            self.scores = self._failure_value()
        if self.id is not None and client is not None:
            await self.agent._call(client.end_episode, self.id)
            self.id = None

    def _reward_request(self, record: dict) -> dict:
        return {"panel": self.panel, "db": self.task["db"], "goldSql": self.gold, "trajectory": record}

    async def _learn_failure_value(self, client: EnvClient) -> None:
        """The panel's total on this episode's record ended in error before its first turn, once per panel."""
        key = (f"{client.host}:{client.port}", self.panel)
        if key in _FAILURE_SCORES or not self.gold:
            return
        try:
            record = await self.agent._call(client.request, "GET", f"/v1/episodes/{self.id}")
            record.update({"turns": [], "end": "error", "error": "failure value", "finalSql": None})
            _FAILURE_SCORES[key] = terms_of(await self.agent._call(client.reward, self._reward_request(record)))
        except EnvServiceError as err:
            logger.warning("quarry_agent: the %s panel's failure value is unknown: %s", self.panel, err)

    def _failure_value(self) -> dict[str, float]:
        client = self.client
        key = (f"{client.host}:{client.port}", self.panel) if client is not None else None
        known = _FAILURE_SCORES.get(key) if key else None
        return dict(known) if known else {"score": self.agent.failure_score}

    def fields(self) -> dict[str, Any]:
        """The loop's extra fields: the score where verl's reward function finds it, and what happened."""
        return {
            "reward_scores": {"quarry": dict(self.scores or self._failure_value())},
            "quarry": {"end": self.end, "error": self.error, "cut": self.cut, "panel": self.panel},
        }


__all__ = ["AGENT_NAME", "QuarryAgentLoop", "end_marker_ids"]
