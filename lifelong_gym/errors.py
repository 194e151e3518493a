"""Every public error of lifelong-gym, under one base class.

Catch `LifelongGymError` to catch them all (the command line does, and prints its message
as one line). The messages say what to change. Three families:

- user errors (`ConfigError` and its children): a setting, a spec, a path or a file that
  cannot be used, found before or at the start of a run;
- back-end errors (`BackendError`): a server, engine or store that cannot serve the
  environment (unreachable, refused, missing image);
- run errors: a run that stopped (`RunAbortedError`), one whose sessions errored
  (`RunErrorsError`), a user's callback that raised (`CallbackError`) or an agent that
  could not reply (`AgentError`, whose `status` is what the session ends with).
- observations: a store that would not finish the agent's query (`QueryRefused`).

Errors that come from an agent's reply (`ActionError`) never leave an environment: they
become the agent's observation.
"""

from __future__ import annotations


class LifelongGymError(Exception):
    """The base of every error that lifelong-gym raises on purpose."""


# -- user errors ---------------------------------------------------------------------------


class ConfigError(LifelongGymError, ValueError):
    """A setting that cannot be used; the message names it and what to give instead."""


class EnvArgumentError(ConfigError):
    """An environment keyword argument of the wrong value or type."""


class GraphMismatchError(EnvArgumentError):
    """A KG task set given a graph other than the one it was generated on."""


class ResetOptionError(EnvArgumentError):
    """A `reset()` option that is unknown, or of the wrong type."""


class TaskIndexError(ResetOptionError, KeyError):
    """A `task_index` the task set does not hold (a KeyError too, as a lookup by index)."""

    __str__ = Exception.__str__  # the message as written, not quoted as a KeyError's key


class TaskFileError(ConfigError):
    """A task file or task-set name that cannot be used; the message says what to fix."""


class RunConfigError(ConfigError):
    """A run config that cannot be used; the message names the setting to fix."""


class RunDirectoryError(ConfigError):
    """An output folder that cannot be used as it is; the message says what to do."""


class CallbackSpecError(ConfigError):
    """A `--callback` spec that names no callback, or a callback that cannot work here."""


class BudgetError(CallbackSpecError):
    """A context budget that cannot be applied; the message says what to change."""


class PluginError(ConfigError):
    """A plugin module (`--plugin`, or the `lifelong_gym.plugins` entry points) that does
    not import."""


class AgentSpecError(ConfigError):
    """An agent spec that names no known kind of agent, or a model that cannot be used."""


class ModelConfigError(ConfigError):
    """A model configuration that cannot be used; the message says what to fix."""


class ChatTemplateError(ModelConfigError):
    """A chat template that an episode cannot be built on turn by turn; the message says why."""


class MissingExtraError(ConfigError):
    """An optional package a feature needs is not installed; the message names the extra."""


class RolloutConfigError(ConfigError):
    """Environments or settings that episodes cannot be collected from; the message says why."""


class SExprError(ConfigError):
    """Text that is not a well-formed S-expression or action list."""


# -- back-end errors -------------------------------------------------------------------------


class BackendError(LifelongGymError, RuntimeError):
    """A back-end that cannot serve the environment (bad URL, server down, missing driver)."""


class SandboxError(BackendError):
    """The container engine or image cannot give a sandbox; the message says what to fix."""


class ImageBuildError(BackendError):
    """An image could not be built; the message says what is missing."""


class SessionLostError(BackendError):
    """A server closed a client's session mid-episode (the episode is lost; reset starts again)."""


# -- errors of a run, an agent, a reply ------------------------------------------------------


class RunAbortedError(LifelongGymError, RuntimeError):
    """The run stopped: too many sessions in a row failed, or a callback cannot resume."""


class CallbackError(LifelongGymError, RuntimeError):
    """A user's callback raised in one of the hooks the run calls outside a session
    (`__init__`, `setup`, `load_state`, `state`); the message names the callback, the hook,
    the exception and the log file that holds its traceback."""


class RunErrorsError(LifelongGymError, RuntimeError):
    """A run finished, but some of its sessions errored: its success leaves them out.

    The command line exits with `exit_code` (3), apart from the user errors' 1.
    """

    exit_code = 3


class AgentError(LifelongGymError):
    """An agent could not produce a reply; `status` is what the session ends with.

    The status is a `SessionStatus` value, written as text so that this module imports
    nothing of the package.
    """

    status = "agent_unknown_error"


class AgentContextLimitError(AgentError):
    """The history no longer fits the model's context window."""

    status = "agent_context_limit"


class AgentOutOfMemoryError(AgentError):
    """The model ran out of accelerator memory."""

    status = "agent_out_of_memory"


class QueryRefused(LifelongGymError):
    """The store would not finish the agent's query (a limit of time, memory or size).

    The query came from the agent's actions, so this is an observation: the task goes on.
    """


class QueryTimeout(QueryRefused):
    """A query ran past its time limit (the agent's query, so the task goes on)."""


class ActionError(LifelongGymError, ValueError):
    """A reply that cannot be executed as written; the message is the agent's observation."""
