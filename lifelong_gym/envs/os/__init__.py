"""The operating-system environment: Linux shell tasks in fresh Docker containers."""

from lifelong_gym.envs.os.env import LifelongOSEnv
from lifelong_gym.envs.os.tasks import OSTask, load_os_tasks

__all__ = ["LifelongOSEnv", "OSTask", "load_os_tasks"]
