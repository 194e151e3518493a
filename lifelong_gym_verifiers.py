"""The verifiers taskset `lifelong-gym-verifiers` (`vf-eval lifelong-gym-verifiers ...`).

verifiers imports a taskset id as a top-level module and takes the `Taskset` and `Env`
classes it exports; the adapter itself is `lifelong_gym.integrations.verifiers`.
"""

from lifelong_gym.integrations.verifiers import (
    LifelongEpisodeEnv,
    LifelongTaskset,
    load_environment,
)

__all__ = ["LifelongEpisodeEnv", "LifelongTaskset", "load_environment"]
