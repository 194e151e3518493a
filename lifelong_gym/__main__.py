"""`python -m lifelong_gym ...`: the `lifelong-gym` command, where its script is not on PATH."""

from lifelong_gym.cli import main

main()
