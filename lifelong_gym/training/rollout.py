"""`collect_episodes`: play episodes with a policy, every active session in one batch per turn.

`envs` is one environment or a Gymnasium vector env. A vector env must autoreset in
`AutoresetMode.SAME_STEP` (an ended episode's last observation is in
`info["final_obs"]` and the next task's first one is returned at once, so every reply sent
is used by a live task) or `AutoresetMode.DISABLED` (the collector resets ended copies
itself, with `options={"reset_mask": ...}`). `NEXT_STEP`, Gymnasium's default, is refused:
the step after an episode ends would be a reset that discards the reply sent with it.

Only sessions whose episodes are returned are generated for. When fewer episodes remain to
start than there are copies, the spare copies are sent an empty reply (no generation),
which ends a DB, OS or KG task at once as a format error; those episodes are not returned.
"""

from __future__ import annotations

from abc import ABC, abstractmethod
from collections.abc import Sequence
from dataclasses import dataclass
from typing import Any

import gymnasium as gym
import numpy as np
from gymnasium.vector import AutoresetMode, VectorEnv

from lifelong_gym.decoding.policy import Generation, TransformersPolicy
from lifelong_gym.errors import RolloutConfigError

from .episode import TokenEpisode

FILLER_REPLY = ""


@dataclass
class _Step:
    """One copy's result of a step; `restart` is the next episode's (obs, info) after autoreset."""

    observation: str
    reward: float
    done: bool
    info: dict[str, Any]
    restart: tuple[str, dict[str, Any]] | None = None


@dataclass
class _Live:
    """An episode being recorded, with its conversation and its latest reply."""

    episode: TokenEpisode
    messages: list[dict[str, str]]
    last_reply: Generation | None = None


class _Copies(ABC):
    """The environments as numbered copies that are stepped together."""

    num: int
    resets_itself: bool = False

    @abstractmethod
    def reset(self, slots: Sequence[int], task: int | None, seed: int | None) -> list[tuple]:
        """Start new episodes in `slots` (on sample index `task` when given)."""

    @abstractmethod
    def step(self, actions: list[str]) -> list[_Step]:
        """Send one reply to every copy."""


class _SingleEnv(_Copies):
    """One environment: a single copy, reset by the collector."""

    def __init__(self, env: gym.Env):
        self.env, self.num = env, 1

    def reset(self, slots: Sequence[int], task: int | None, seed: int | None) -> list[tuple]:
        options = None if task is None else {"task_index": task}
        return [self.env.reset(seed=seed, options=options)]

    def step(self, actions: list[str]) -> list[_Step]:
        observation, reward, terminated, truncated, info = self.env.step(actions[0])
        return [_Step(observation, float(reward), bool(terminated or truncated), info)]


class _VectorEnv(_Copies):
    """A vector env's copies; SAME_STEP ones reset themselves, DISABLED ones are reset."""

    def __init__(self, envs: VectorEnv):
        mode = envs.metadata.get("autoreset_mode", AutoresetMode.NEXT_STEP)
        if mode not in (AutoresetMode.SAME_STEP, AutoresetMode.DISABLED):
            raise RolloutConfigError(
                f"the vector env autoresets in {mode}, where the reply sent on the step after "
                "an episode ends is thrown away; build it with "
                "autoreset_mode=gymnasium.vector.AutoresetMode.SAME_STEP (or DISABLED)"
            )
        self.envs, self.num = envs, envs.num_envs
        self.resets_itself = mode == AutoresetMode.SAME_STEP

    def reset(self, slots: Sequence[int], task: int | None, seed: int | None) -> list[tuple]:
        slots = list(slots)
        if task is None and len(slots) == self.num:
            observations, infos = self.envs.reset(seed=seed)
        else:
            mask = np.zeros(self.num, dtype=np.bool_)
            mask[slots] = True
            options: dict[str, Any] = {"reset_mask": mask}
            if task is not None:
                options["task_index"] = task
            seeds = [None if seed is None or not mask[i] else seed + i for i in range(self.num)]
            observations, infos = self.envs.reset(seed=seeds, options=options)
        return [(observations[i], _unbatch(infos, i)) for i in slots]

    def step(self, actions: list[str]) -> list[_Step]:
        observations, rewards, terminated, truncated, infos = self.envs.step(tuple(actions))
        steps = []
        for i in range(self.num):
            done = bool(terminated[i] or truncated[i])
            info = _unbatch(infos, i)
            if done and self.resets_itself:
                final = _unbatch(infos["final_info"], i)
                info.pop("final_info")
                step = _Step(info.pop("final_obs"), float(rewards[i]), True, final)
                step.restart = (observations[i], info)
            else:
                step = _Step(observations[i], float(rewards[i]), done, info)
            steps.append(step)
        return steps


def collect_episodes(
    envs: gym.Env | VectorEnv,
    policy: TransformersPolicy,
    num_episodes: int,
    *,
    task_indices: Sequence[int] | None = None,
    seed: int | None = None,
) -> list[TokenEpisode]:
    """Play `num_episodes` episodes and return them as token episodes, in the order they end.

    With `task_indices` (one sample index per episode, in the order episodes start) the
    collector chooses each task, so the environments must not reset themselves: one
    environment or a vector env in `AutoresetMode.DISABLED`. `seed` seeds the first reset.
    """
    copies = _VectorEnv(envs) if isinstance(envs, VectorEnv) else _SingleEnv(envs)
    if task_indices is not None:
        if copies.resets_itself:
            raise RolloutConfigError(
                "task_indices needs environments that the collector resets: one environment "
                "or a vector env with autoreset_mode=AutoresetMode.DISABLED"
            )
        if len(task_indices) != num_episodes:
            raise RolloutConfigError(
                f"{len(task_indices)} task_indices for {num_episodes} episodes; give one each"
            )
    collector = _Collector(copies, policy, num_episodes, task_indices)
    collector.first_reset(seed)
    while len(collector.finished) < num_episodes:
        collector.turn()
    return collector.finished


class _Collector:
    """The state of one `collect_episodes` call: which copy records which episode."""

    def __init__(self, copies, policy, num_episodes, tasks):
        self.copies, self.policy, self.num_episodes = copies, policy, num_episodes
        self.tasks = list(tasks) if tasks is not None else None
        self.live: list[_Live | None] = [None] * copies.num
        self.finished: list[TokenEpisode] = []
        self.started = 0

    def first_reset(self, seed: int | None) -> None:
        """Start every copy: recorded episodes first, fillers on the copies left over."""
        slots = range(self.copies.num)
        if self.tasks is None:
            for slot, (observation, info) in enumerate(self.copies.reset(slots, None, seed)):
                if self.started < self.num_episodes:
                    self.begin(slot, observation, info)
            return
        self.reset(list(slots), seed)

    def reset(self, slots: list[int], seed: int | None = None) -> None:
        """Reset ended copies: on the next chosen tasks while episodes are due, else fillers."""
        due = slots[: max(0, self.num_episodes - self.started)]
        for slot in due:
            task = self.tasks[self.started] if self.tasks is not None else None
            ((observation, info),) = self.copies.reset([slot], task, seed)
            self.begin(slot, observation, info)
        fillers = slots[len(due) :]
        if fillers and self.copies.num > 1:  # a vector env steps every copy, so start them
            self.copies.reset(fillers, None, seed)

    def begin(self, slot: int, observation: str, info: dict[str, Any]) -> None:
        """Record the episode that `observation` opens on copy `slot`."""
        self.started += 1
        self.live[slot] = _start(self.policy, observation, info)

    def turn(self) -> None:
        """One reply from every recorded session (one batch), one step of every copy."""
        policy = self.policy
        recording = [slot for slot, state in enumerate(self.live) if state is not None]
        replies = policy.generate([self.live[slot].episode.input_ids for slot in recording])
        actions = [FILLER_REPLY] * self.copies.num
        for slot, reply in zip(recording, replies, strict=True):
            state = self.live[slot]
            actions[slot] = policy.reply_text(reply)
            state.episode.add_generated(reply.token_ids, reply.logprobs)
            state.episode.turns += 1
            state.messages.append({"role": "assistant", "content": actions[slot]})
            state.last_reply = reply
        ended: list[int] = []
        for slot, step in enumerate(self.copies.step(actions)):
            state = self.live[slot]
            if state is not None:
                self.advance(slot, state, step)
            if step.done and step.restart is not None:
                if self.started < self.num_episodes:  # autoreset already began the next task
                    self.begin(slot, *step.restart)
            elif step.done:
                ended.append(slot)
        self.reset(ended)

    def advance(self, slot: int, state: _Live, step: _Step) -> None:
        """Add a step's result to the recorded episode on `slot`; finish it if it ended."""
        episode, reply = state.episode, state.last_reply
        episode.reward += step.reward
        if not step.done:
            episode.add_environment(self.policy.observation_ids(reply, step.observation))
            state.messages.append({"role": "user", "content": step.observation})
            return
        episode.add_environment(self.policy.end_ids(reply))
        episode.status = str(step.info.get("status", ""))
        episode.outcome = str(step.info.get("outcome", ""))
        episode.messages = state.messages
        self.finished.append(episode)
        self.live[slot] = None


def _start(policy: TransformersPolicy, observation: str, info: dict[str, Any]) -> _Live:
    """A new recorded episode opened by `observation`."""
    head = [{"role": "system", "content": policy.system_prompt}] if policy.system_prompt else []
    episode = TokenEpisode(
        prompt_ids=policy.prompt_ids(observation),
        task_index=int(info.get("task_index", -1)),
        skills=[str(s) for s in info.get("skills", [])],
    )
    return _Live(episode, head + [{"role": "user", "content": observation}])


def _unbatch(infos: dict[str, Any], index: int) -> dict[str, Any]:
    """Copy `index`'s entries of a vector env's batched info dict."""
    found: dict[str, Any] = {}
    for key, values in infos.items():
        if key.startswith("_"):
            continue
        present = infos.get("_" + key)
        if present is not None and not present[index]:
            continue
        value = values[index] if not isinstance(values, dict) else values
        found[key] = value.item() if isinstance(value, np.generic) else value
    return found
