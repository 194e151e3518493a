"""The knowledge-graph environment: seven actions over Freebase-style SPARQL stores."""

from lifelong_gym.envs.kg.env import LifelongKGEnv, load_kg_tasks
from lifelong_gym.envs.kg.tasks import KGTask, kg_task_from_record

__all__ = ["KGTask", "LifelongKGEnv", "kg_task_from_record", "load_kg_tasks"]
