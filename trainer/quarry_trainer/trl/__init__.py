"""Quarry inside TRL's GRPOTrainer: a multi-turn `rollout_func` whose episodes run on `quarry serve-env`
(rollout.py) and the reward function that reads the panel's score each episode ended with (rewards.py). TRL is
imported lazily (install the `trl` extra)."""
