"""Pre-flight for `quarry train`: does the engine itself accept the launch?

Reads one JSON request on stdin and prints one JSON line:

    {"engine": "verl" | "skyrl" | "trl", "overrides": ["key=value", "+key=value", ...], "skyrl_config": PATH?}

- verl: composes verl's own Hydra config (verl/trainer/config/ppo_trainer.yaml, the config `python3 -m
  verl.trainer.main_ppo` composes) with the overrides, runs verl's startup validation (verl/utils/config.py
  `validate_config`, with `need_reference_policy` / `need_critic` as main_ppo calls it), and loads Quarry's plug-ins
  the way verl will: the reward function (verl/trainer/ppo/reward.py `get_custom_reward_fn`), when the launch
  names one, the multi-turn tool config (verl/tools/tool_registry.py `initialize_tools_from_config`), and the agent
  loops: verl's own and those of `rollout.agent.agent_loop_config_path` (read as AgentLoopWorker.__init__ reads it,
  verl/experimental/agent_loop/agent_loop.py; each class imported), which must include `agent.default_agent_loop`
  and every `agent_name` the training rows (data.train_files) carry.
- skyrl: composes skyrl-train's ppo_base_config.yaml (what skyrl_train.entrypoints.main_base composes) from the
  installed skyrl_train, else from `skyrl_config` or QUARRY_SKYRL_CONFIG: its config folder, a folder holding
  skyrl_train/config, or the skyrl-train wheel (its config folder is extracted to a temporary directory). skyrl-train
  needs Python 3.12 and is rarely installed beside verl; its `validate_cfg` imports the trainer, so only the compose
  runs here (quarry train checks SkyRL's batch rules itself).
- trl: reads the arguments the way `python -m quarry_trainer.train.grpo` will (its `quarry.*` keys and TRL's
  GRPOConfig fields) and constructs TRL's own `GRPOConfig` with them, so its `__post_init__` checks (batch
  divisibility, loss and sampling options) run here.

Every override whose key the config does not have is reported (Hydra stops at the first; this composes again without
it until the rest compose). `${QUARRY_TRAINER_DIR}` in an override is this package's folder, as the launch script
resolves it on the training host. The reply:

    {"ok", "engine", "engine_version", "config", "config_from", "composed", "unknown_keys": [...],
     "errors": [{"kind", "message"}], "values": {key: composed value}, "validated": bool | null,
     "checks": [names of engine checks that passed]}
"""

from __future__ import annotations

import hashlib
import io
import json
import os
import re
import sys
import tempfile
import zipfile
from contextlib import redirect_stdout
from pathlib import Path
from typing import Any

PACKAGE_DIR = Path(__file__).resolve().parent
SKYRL_HOWTO = (
    "skyrl-train needs Python 3.12 and is not installed here; give its config with --skyrl-config PATH (or "
    "QUARRY_SKYRL_CONFIG): the wheel from `python -m pip download --no-deps --python-version 3.12 "
    "--only-binary=:all: skyrl-train -d DIR` (DIR/skyrl_train-*.whl), or the skyrl_train/config folder inside it"
)
_UNKNOWN = re.compile(r"Could not override '([^']+)'|Key '([^']+)' is not in struct")


def _error(kind: str, message: str) -> dict[str, str]:
    return {"kind": kind, "message": message}


def _jsonable(value: Any) -> Any:
    from omegaconf import DictConfig, ListConfig, OmegaConf

    if isinstance(value, (DictConfig, ListConfig)):
        return OmegaConf.to_container(value, resolve=False)
    return value


def _installed_version(dist: str) -> str | None:
    from importlib.metadata import PackageNotFoundError, version

    try:
        return version(dist)
    except PackageNotFoundError:
        return None


def verl_config_dir() -> Path:
    import verl

    return Path(verl.__file__).resolve().parent / "trainer" / "config"


def _extract_wheel_config(wheel: Path) -> Path:
    """skyrl_train/config from the wheel, extracted once per wheel (by its sha256) under the temporary directory."""
    digest = hashlib.sha256(wheel.read_bytes()).hexdigest()[:16]
    root = Path(tempfile.gettempdir()) / f"quarry-skyrl-config-{digest}"
    config = root / "skyrl_train" / "config"
    if not (config / "ppo_base_config.yaml").exists():
        with zipfile.ZipFile(wheel) as z:
            members = [m for m in z.namelist() if m.startswith("skyrl_train/config/") and m.endswith(".yaml")]
            if not members:
                raise FileNotFoundError(f"{wheel} holds no skyrl_train/config/*.yaml")
            staging = Path(tempfile.mkdtemp(prefix="quarry-skyrl-", dir=tempfile.gettempdir()))
            z.extractall(staging, members)
            root.mkdir(parents=True, exist_ok=True)
            target = root / "skyrl_train"
            if not target.exists():
                os.replace(staging / "skyrl_train", target)
    return config


def skyrl_config_dir(given: str | None) -> tuple[Path | None, str]:
    """SkyRL's config folder and where it came from, or (None, how to get it)."""
    try:
        import skyrl_train

        return Path(skyrl_train.__file__).resolve().parent / "config", "the installed skyrl_train"
    except ImportError:
        pass
    raw = given or os.environ.get("QUARRY_SKYRL_CONFIG")
    if not raw:
        return None, SKYRL_HOWTO
    path = Path(raw).expanduser().resolve()
    if path.is_file() and path.suffix == ".whl":
        return _extract_wheel_config(path), f"the wheel {path.name}"
    for candidate in (path, path / "skyrl_train" / "config", path / "config"):
        if (candidate / "ppo_base_config.yaml").is_file():
            return candidate, str(candidate)
    if path.is_dir():
        wheels = sorted(path.glob("skyrl_train-*.whl"))
        if wheels:
            return _extract_wheel_config(wheels[-1]), f"the wheel {wheels[-1].name}"
    return None, f"{raw}: no ppo_base_config.yaml there (nor a skyrl_train wheel). {SKYRL_HOWTO}"


def _compose(config_dir: Path, name: str, overrides: list[str]) -> Any:
    from hydra import compose, initialize_config_dir
    from hydra.core.global_hydra import GlobalHydra

    GlobalHydra.instance().clear()
    with initialize_config_dir(config_dir=str(config_dir), version_base=None):
        return compose(config_name=name, overrides=overrides)


def compose_reporting_unknown(config_dir: Path, name: str, overrides: list[str]) -> tuple[Any, list[str], list[dict]]:
    """Composes; each override whose key the config lacks is dropped and named, until the rest compose."""
    unknown: list[str] = []
    remaining = list(overrides)
    for _ in range(len(overrides) + 1):
        try:
            return _compose(config_dir, name, remaining), unknown, []
        except Exception as exc:  # Hydra raises several types; the message names the key
            text = str(exc)
            match = _UNKNOWN.search(text)
            key = next((g for g in match.groups() if g), None) if match else None
            dropped = [o for o in remaining if o.lstrip("+~").split("=", 1)[0] == key] if key else []
            if key is None or not dropped:
                return None, unknown, [_error("compose", f"{type(exc).__name__}: {text.strip()}")]
            unknown.append(key)
            remaining = [o for o in remaining if o not in dropped]
    return None, unknown, [_error("compose", "composition did not settle")]


def _key(override: str) -> str:
    return override.lstrip("+~").split("=", 1)[0]


def _values(cfg: Any, overrides: list[str]) -> dict[str, Any]:
    from omegaconf import OmegaConf

    out: dict[str, Any] = {}
    for o in overrides:
        key = _key(o)
        try:
            out[key] = _jsonable(OmegaConf.select(cfg, key, throw_on_missing=False))
        except Exception as exc:  # an interpolation that cannot resolve here (${oc.env:HOME} …)
            out[key] = f"<{type(exc).__name__}>"
    return out


def _verl_checks(cfg: Any, reply: dict[str, Any]) -> None:
    """verl's own startup checks and Quarry's plug-ins, loaded as verl loads them."""
    from verl.trainer.ppo.utils import need_critic, need_reference_policy
    from verl.utils.config import validate_config

    captured = io.StringIO()
    try:
        with redirect_stdout(captured):
            validate_config(config=cfg, use_reference_policy=need_reference_policy(cfg), use_critic=need_critic(cfg))
        reply["validated"] = True
        reply["checks"].append("verl/utils/config.py validate_config")
    except Exception as exc:
        reply["validated"] = False
        reply["errors"].append(_error("validate", f"verl/utils/config.py validate_config: {type(exc).__name__}: {exc}"))
    # The plug-ins build EnvClient objects, which need a URL (never contacted here).
    os.environ.setdefault("QUARRY_ENV_URL", "http://127.0.0.1:9")
    try:
        from verl.trainer.ppo.reward import get_custom_reward_fn

        if get_custom_reward_fn(cfg) is not None:
            reply["checks"].append("reward function loads (verl/trainer/ppo/reward.py get_custom_reward_fn)")
    except Exception as exc:
        reply["errors"].append(
            _error("plugin", f"the reward function does not load in verl: {type(exc).__name__}: {exc}")
        )
    tool_config = cfg.actor_rollout_ref.rollout.multi_turn.get("tool_config_path")
    if tool_config:
        try:
            from verl.tools.tool_registry import initialize_tools_from_config

            tools = initialize_tools_from_config(tool_config)
            names = ", ".join(t.name for t in tools)
            reply["checks"].append(f"tool config loads: {names} (verl/tools/tool_registry.py)")
        except Exception as exc:
            reply["errors"].append(
                _error("plugin", f"the tool config does not load in verl: {type(exc).__name__}: {exc}")
            )
    _agent_loop_checks(cfg, reply)


def _agent_loops(cfg: Any) -> set[str]:
    """The agent loop names a worker of this launch can instantiate: verl's registered ones and the config file's."""
    from hydra.utils import get_class
    from omegaconf import ListConfig, OmegaConf
    from verl.experimental.agent_loop import AgentLoopBase
    from verl.experimental.agent_loop.agent_loop import _agent_loop_registry
    from verl.utils.import_utils import resolve_config_path

    names = set(_agent_loop_registry)
    path = cfg.actor_rollout_ref.rollout.agent.get("agent_loop_config_path")
    if path:
        # A list of {name, _target_} entries, as verl reads it (verl/experimental/agent_loop/agent_loop.py).
        entries = OmegaConf.load(resolve_config_path(path))
        if not isinstance(entries, ListConfig):
            raise TypeError(f"{path} holds no list of agent loops (name, _target_)")
        for entry in entries:
            cls = get_class(entry["_target_"])
            if not issubclass(cls, AgentLoopBase):
                raise TypeError(f"{entry['_target_']} is not a verl AgentLoopBase")
            names.add(str(entry["name"]))
    return names


def _row_agent_names(cfg: Any) -> set[str]:
    """The `agent_name` values of the training rows that exist here (a row without one takes the default)."""
    import pyarrow.parquet as pq
    from omegaconf import ListConfig

    files = cfg.data.get("train_files")
    files = list(files) if isinstance(files, (list, ListConfig)) else [files] if files else []
    names: set[str] = set()
    for f in files:
        if not (isinstance(f, str) and f.endswith(".parquet") and Path(f).is_file()):
            continue
        if "agent_name" in pq.read_schema(f).names:
            column = pq.read_table(f, columns=["agent_name"]).column("agent_name").to_pylist()
            names.update(str(n) for n in column if n is not None)
    return names


def _agent_loop_checks(cfg: Any, reply: dict[str, Any]) -> None:
    try:
        names = _agent_loops(cfg)
    except Exception as exc:
        reply["errors"].append(
            _error("plugin", f"the agent loop config does not load in verl: {type(exc).__name__}: {exc}")
        )
        return
    default = cfg.actor_rollout_ref.rollout.agent.get("default_agent_loop")
    wanted = {str(default)} if default else set()
    try:
        rows = _row_agent_names(cfg)
    except Exception as exc:
        reply["errors"].append(_error("agent-loop", f"the rows' agent_name could not be read: {exc}"))
        rows = set()
    missing = sorted((wanted | rows) - names)
    if missing:
        reply["errors"].append(
            _error(
                "agent-loop",
                f"no agent loop named {', '.join(missing)} is registered (the default_agent_loop or the rows' "
                f"agent_name); registered: {', '.join(sorted(names))} (verl/experimental/agent_loop/agent_loop.py)",
            )
        )
        return
    reply["checks"].append(f"agent loops registered: {', '.join(sorted(wanted | rows))} (AgentLoopWorker)")


def _trl(overrides: list[str], reply: dict[str, Any]) -> dict[str, Any]:
    try:
        import trl
        from trl import GRPOConfig

        from quarry_trainer.train import grpo
    except ImportError as exc:
        reply["errors"].append(_error("engine-missing", f"TRL does not import here ({exc}): install the trl extra"))
        return reply
    reply["engine_version"] = trl.__version__
    reply["config"] = "trl/trainer/grpo_config.py GRPOConfig"
    reply["config_from"] = "the installed trl"
    quarry, fields, unknown, problems = grpo.split_args(overrides)
    reply["unknown_keys"] = unknown
    reply["errors"].extend(_error("arguments", p) for p in problems if not any(k in p for k in unknown))
    if reply["errors"]:
        return reply
    try:
        config = GRPOConfig(**{"report_to": "none", **fields})
    except (ValueError, TypeError) as exc:
        reply["errors"].append(_error("config", f"TRL's GRPOConfig refuses the launch: {exc}"))
        return reply
    reply["composed"] = not reply["unknown_keys"]
    values = {k: getattr(config, k) for k in fields}
    values.update({f"quarry.{k}": v for k, v in quarry.items()})
    reply["values"] = {k: v for k, v in values.items() if k != "report_to" and any(_key(o) == k for o in overrides)}
    reply["checks"].append("GRPOConfig.__post_init__")
    reply["ok"] = reply["composed"] and not reply["errors"]
    return reply


def run(request: dict[str, Any]) -> dict[str, Any]:
    engine = request.get("engine")
    reply: dict[str, Any] = {
        "ok": False,
        "engine": engine,
        "engine_version": None,
        "config": None,
        "config_from": None,
        "composed": False,
        "unknown_keys": [],
        "errors": [],
        "values": {},
        "validated": None,
        "checks": [],
        "python": sys.version.split()[0],
    }
    trainer_dir = str(PACKAGE_DIR)
    overrides = [str(o).replace("${QUARRY_TRAINER_DIR}", trainer_dir) for o in request.get("overrides", [])]
    if engine == "trl":
        return _trl(overrides, reply)
    if engine == "verl":
        try:
            import verl

            reply["engine_version"] = getattr(verl, "__version__", None)
            config_dir, name = verl_config_dir(), "ppo_trainer"
            reply["config_from"] = "the installed verl"
        except ImportError as exc:
            reply["errors"].append(
                _error("engine-missing", f"verl does not import here ({exc}): install the verl extra")
            )
            return reply
    elif engine == "skyrl":
        found, where = skyrl_config_dir(request.get("skyrl_config"))
        if found is None:
            reply["errors"].append(_error("engine-config-missing", where))
            return reply
        config_dir, name = found, "ppo_base_config"
        reply["config_from"] = where
        version = re.search(r"skyrl_train-([^-]+)-", where)
        reply["engine_version"] = version.group(1) if version else _installed_version("skyrl-train")
    else:
        reply["errors"].append(_error("request", f"engine must be verl, skyrl or trl, got {engine!r}"))
        return reply
    reply["config"] = str(config_dir / f"{name}.yaml")
    cfg, unknown, errors = compose_reporting_unknown(config_dir, name, overrides)
    reply["unknown_keys"] = unknown
    reply["errors"].extend(errors)
    if cfg is None:
        return reply
    reply["composed"] = not unknown
    reply["values"] = _values(cfg, [o for o in overrides if _key(o) not in unknown])
    if engine == "verl" and not unknown:
        _verl_checks(cfg, reply)
    reply["ok"] = reply["composed"] and not reply["errors"]
    return reply


def main() -> int:
    try:
        request = json.loads(sys.stdin.read() or "{}")
    except json.JSONDecodeError as exc:
        print(json.dumps({"ok": False, "errors": [_error("request", f"not JSON: {exc}")]}))
        return 2
    # Engines print while importing and validating; stdout carries only the reply.
    noise = io.StringIO()
    with redirect_stdout(noise):
        reply = run(request)
    print(json.dumps(reply, default=str))
    return 0


if __name__ == "__main__":
    sys.exit(main())
