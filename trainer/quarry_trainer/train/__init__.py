"""Training runs on one machine with TRL: SFT on `quarry data sft` conversations (sft.py), the run record and the
callbacks every run uses (run.py, callbacks.py: metrics.jsonl, run.json, a clean stop on SIGTERM), and the loss masks
(masks.py)."""
