"""Adapters to the training frameworks and serving protocols RL users already run; each
needs its own extra."""
