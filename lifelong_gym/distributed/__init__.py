"""The suite on a Ray cluster: environments as Ray actors, and a vector env over them.

Needs the `ray` extra (`pip install 'lifelong-gym[ray]'`); `import lifelong_gym` does not
import this package. See docs/distributed.md.
"""

from __future__ import annotations

from lifelong_gym.errors import BackendError

try:
    import ray  # noqa: F401 - fail here, with the fix, rather than deep in a call
except ImportError:
    raise BackendError(
        "lifelong_gym.distributed needs Ray: pip install 'lifelong-gym[ray]'"
    ) from None

from lifelong_gym.distributed.actor import EnvActor, EnvServer, start_env_actor
from lifelong_gym.distributed.actor_env import ActorEnv, connect
from lifelong_gym.distributed.vector import RayVectorEnv

__all__ = ["ActorEnv", "EnvActor", "EnvServer", "RayVectorEnv", "connect", "start_env_actor"]
