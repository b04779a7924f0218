"""Quarry inside SkyRL: a skyrl-gym text environment forwarding to `quarry serve-env` (env.py), registered under the
id "quarry-text2sql" by `register()` (SkyRL's generator builds it with `skyrl_gym.make(env_class, env_config=…,
extras=…)`: skyrl_train/generators/skyrl_gym_generator.py). skyrl-gym is imported lazily (install the `skyrl` extra)."""

ENV_ID = "quarry-text2sql"


def register() -> None:
    """Registers the environment with skyrl-gym (idempotent)."""
    from skyrl_gym.envs import register as gym_register
    from skyrl_gym.envs.registration import registry

    if ENV_ID not in registry:
        gym_register(id=ENV_ID, entry_point="quarry_trainer.skyrl.env:QuarryTextToSqlEnv")
