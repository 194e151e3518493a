"""Adapters to the training frameworks RL users already run; each needs its own extra."""
