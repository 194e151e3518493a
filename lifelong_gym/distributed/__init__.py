"""The suite on a Ray cluster: environments as Ray actors, and a vector env over them.

Needs the `ray` extra (`pip install 'lifelong-gym[ray]'`); `import lifelong_gym` does not
import this package. See docs/distributed.md.
"""

from __future__ import annotations

from lifelong_gym.extras import import_extra

import_extra("ray", "ray", "lifelong_gym.distributed")  # here, with the fix, not deep in a call

from lifelong_gym.distributed.actor import EnvActor, EnvServer, start_env_actor  # noqa: E402
from lifelong_gym.distributed.actor_env import ActorEnv, connect  # noqa: E402
from lifelong_gym.distributed.vector import RayVectorEnv  # noqa: E402

__all__ = ["ActorEnv", "EnvActor", "EnvServer", "RayVectorEnv", "connect", "start_env_actor"]
