"""An agent loop for verl's multi-turn rollouts: one lifelong-gym episode per sample.

verl (`pip install 'lifelong-gym[verl]'`; its rollout servers need a GPU) runs an agent
loop per dataset row. `LifelongAgentLoop`, registered as `lifelong_gym`, plays one
episode: it builds the row's environment, resets it on the row's task, asks verl's
rollout server for each reply as token ids, steps the environment with the decoded reply
and appends the observation as the chat template's tokens (`EpisodeTokenizer`, as
`TransformersPolicy` does). It returns verl's `AgentLoopOutput`: `prompt_ids`,
`response_ids` (replies as generated, observations as template tokens), `response_mask`
(1 on generated tokens), `response_logprobs`, and `reward_score` (the environment's
reward, so verl's reward manager is not called); status and outcome are in
`extra_fields`.

Dataset rows name the episode in `extra_info` (see `dataset_row`): `env_id`,
`env_kwargs` and `task_index`, with `agent_name="lifelong_gym"`.
"""

from __future__ import annotations

import asyncio
import json
from collections.abc import Mapping
from typing import Any
from uuid import uuid4

import gymnasium as gym

from lifelong_gym.decoding.chat_tokens import EpisodeTokenizer
from lifelong_gym.errors import RolloutConfigError
from lifelong_gym.extras import import_extra
from lifelong_gym.registration import make_env
from lifelong_gym.session import SessionStatus
from lifelong_gym.training.episode import TokenEpisode

_loop = import_extra("verl.experimental.agent_loop.agent_loop", "verl", "the verl agent loop")

AGENT_NAME = "lifelong_gym"


def dataset_row(env_id: str, task_index: int, **env_kwargs: Any) -> dict[str, Any]:
    """One row of a verl RL dataset that plays `env_id`'s task `task_index`.

    The prompt column is a placeholder that verl's dataset needs; the episode's real
    prompt is the environment's first observation. `env_kwargs` is kept as JSON text, so
    rows of different environments fit one parquet column.
    """
    return {
        "prompt": [{"role": "user", "content": f"{env_id} task {task_index}"}],
        "agent_name": AGENT_NAME,
        "data_source": env_id,
        "extra_info": {
            "env_id": env_id,
            "env_kwargs": json.dumps(env_kwargs),
            "task_index": task_index,
        },
    }


@_loop.register(AGENT_NAME)
class LifelongAgentLoop(_loop.AgentLoopBase):
    """Plays one episode of the row's environment with verl's rollout server."""

    def __init__(self, *args: Any, **kwargs: Any):
        super().__init__(*args, **kwargs)
        self.response_length = int(self.rollout_config.response_length)
        self.tokens = EpisodeTokenizer(self.tokenizer)
        self.stop_ids = self.tokens.turn_end_ids()
        self._logprobs = True  # whether the server sent logprobs with every reply

    async def run(self, sampling_params: dict[str, Any], **kwargs: Any) -> _loop.AgentLoopOutput:
        """Play the episode that the row's `extra_info` names; return its token record."""
        spec = _episode_spec(kwargs.get("extra_info"))
        env = await self._call(make_env, spec["env_id"], spec["env_kwargs"])
        try:
            episode = await self._play(env, spec["task_index"], sampling_params)
        finally:
            await self._call(env.close)
        limit = self.response_length
        return _loop.AgentLoopOutput(
            prompt_ids=episode.prompt_ids,
            response_ids=episode.completion_ids[:limit],
            response_mask=episode.loss_mask[:limit],
            # a server that sends no logprobs: verl recomputes them from the ids
            response_logprobs=episode.logprobs[:limit] if self._logprobs else None,
            reward_score=episode.reward,
            num_turns=2 * episode.turns,  # the prompt, each reply, each observation read
            metrics=_loop.AgentLoopMetrics(),
            extra_fields={
                "status": episode.status,
                "outcome": episode.outcome,
                "task_index": episode.task_index,
                "turn_scores": [],
                "tool_rewards": [],
            },
        )

    async def _play(self, env: gym.Env, task_index: int | None, sampling: dict) -> TokenEpisode:
        options = None if task_index is None else {"task_index": task_index}
        observation, info = await self._call(env.reset, options=options)
        episode = TokenEpisode(
            prompt_ids=self.tokens.prompt_ids(observation),
            task_index=int(info.get("task_index", -1)),
            skills=[str(s) for s in info.get("skills", [])],
        )
        request_id = uuid4().hex  # one id per episode: the server may keep its prefix cache
        while True:
            output = await self.server_manager.generate(
                request_id=request_id, prompt_ids=episode.input_ids, sampling_params=sampling
            )
            ids = list(output.token_ids)
            stop = ids[-1] if ids and ids[-1] in self.stop_ids else None
            self._logprobs = self._logprobs and output.log_probs is not None
            episode.add_generated(ids, list(output.log_probs or [0.0] * len(ids)))
            episode.turns += 1
            content = ids[:-1] if stop is not None else ids
            reply = self.tokens.reply_text(content)
            observation, reward, terminated, truncated, info = await self._call(env.step, reply)
            episode.reward += float(reward)
            if not (terminated or truncated):
                episode.add_environment(self.tokens.observation_ids(stop, observation))
                if len(episode.completion_ids) < self.response_length:
                    continue
                # no room left for another reply: the task ends at the limit, scored as is
                session = env.unwrapped.end_task(SessionStatus.TASK_LIMIT_REACHED)
                episode.reward += session.reward
                info = env.unwrapped.task_info()
            else:
                episode.add_environment(self.tokens.end_ids(stop))
            episode.status = str(info.get("status", ""))
            episode.outcome = str(info.get("outcome", ""))
            return episode

    async def _call(self, function: Any, *args: Any, **kwargs: Any) -> Any:
        """Run a blocking environment call off the event loop that verl's rollouts share."""
        return await asyncio.get_running_loop().run_in_executor(
            None, lambda: function(*args, **kwargs)
        )


def _episode_spec(extra_info: Any) -> dict[str, Any]:
    """The row's environment and task, or an error naming what the row lacks."""
    if not isinstance(extra_info, Mapping) or not isinstance(extra_info.get("env_id"), str):
        raise RolloutConfigError(
            "a lifelong_gym row needs extra_info={'env_id': ..., 'env_kwargs': ..., "
            "'task_index': ...}: build rows with lifelong_gym.integrations.verl.dataset_row"
        )
    task = extra_info.get("task_index")
    env_kwargs = extra_info.get("env_kwargs") or {}
    return {
        "env_id": extra_info["env_id"],
        "env_kwargs": json.loads(env_kwargs) if isinstance(env_kwargs, str) else dict(env_kwargs),
        "task_index": None if task is None else int(task),
    }
