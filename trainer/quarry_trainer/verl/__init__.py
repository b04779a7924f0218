"""Quarry inside verl: a reward function for `reward.custom_reward_function` (reward.py) scoring through `quarry
serve-env` with a Quarry reward panel. verl is imported lazily (install the `verl` extra)."""
