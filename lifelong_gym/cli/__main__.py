"""`python -m lifelong_gym.cli`: the `lifelong-gym` command."""

from lifelong_gym.cli import main

main()
