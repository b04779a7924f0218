"""SkyRL's PPO entry point with Quarry's environment: `python -m quarry_trainer.skyrl.main <hydra overrides>`.

skyrl-gym keeps its registry per process, and SkyRL builds the generator (and with it every environment) inside the
Ray task that runs the experiment (skyrl_train/entrypoints/main_base.py: `skyrl_entrypoint` → `BasePPOExp`). So the
environment `quarry-text2sql` is registered in that task, before the experiment is built; the rest is skyrl-train's
own: its Hydra config (skyrl_train/config/ppo_base_config.yaml), `validate_cfg`, `initialize_ray` and `BasePPOExp`.
The service URL and token (QUARRY_ENV_URL, QUARRY_ENV_TOKEN, set by the launch script `quarry train` writes) are
handed to the task as arguments, so they reach it on any cluster and never enter the logged config. With
QUARRY_METRICS_PATH set (the launch sets it), every step's metrics are also appended there (skyrl/metrics.py).
Needs skyrl-train (Python 3.12: the `skyrl-train` extra, on the training hosts).
"""

from __future__ import annotations

import os
import sys

from quarry_trainer.skyrl import register
from quarry_trainer.skyrl.metrics import PATH_VAR, install_from_env

ENV_VARS = ("QUARRY_ENV_URL", "QUARRY_ENV_TOKEN", PATH_VAR)

try:
    import hydra
    import ray
    from omegaconf import DictConfig
    from skyrl_train.entrypoints.main_base import BasePPOExp, config_dir
    from skyrl_train.utils import validate_cfg
    from skyrl_train.utils.utils import initialize_ray
except ImportError as exc:  # pragma: no cover - exercised where skyrl-train is missing
    sys.stderr.write(
        f"quarry_trainer.skyrl.main needs skyrl-train ({exc}); it requires Python 3.12: install quarry-trainer's "
        "`skyrl-train` extra in the training hosts' environment (docs/python.md)\n"
    )
    raise SystemExit(2) from exc


@ray.remote(num_cpus=1)
def quarry_skyrl_entrypoint(cfg: DictConfig, env: dict[str, str]) -> None:
    os.environ.update(env)
    register()
    install_from_env()
    BasePPOExp(cfg).run()


@hydra.main(config_path=config_dir, config_name="ppo_base_config", version_base=None)
def main(cfg: DictConfig) -> None:
    validate_cfg(cfg)
    if not os.environ.get("QUARRY_ENV_URL"):
        raise SystemExit("QUARRY_ENV_URL is not set: start `quarry serve-env` first (the launch script does)")
    initialize_ray(cfg)
    env = {name: os.environ[name] for name in ENV_VARS if os.environ.get(name)}
    ray.get(quarry_skyrl_entrypoint.remote(cfg, env))


if __name__ == "__main__":
    main()
