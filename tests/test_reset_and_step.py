"""What `reset` and `step` take from a caller: the task order, reset options, the action's
type, and how much of an agent's own text an observation repeats (lifelong_gym/core.py)."""

from __future__ import annotations

import json

import gymnasium as gym
import numpy as np
import pytest
from gymnasium.utils.env_checker import check_env

import lifelong_gym  # noqa: F401 - registers the ids
from lifelong_gym.agents import OracleAgent
from lifelong_gym.core import MAX_ECHO_LENGTH
from lifelong_gym.errors import (
    EnvArgumentError,
    LifelongGymError,
    ResetOptionError,
    TaskIndexError,
)
from lifelong_gym.session import ChatMessage, to_messages

# the Error: prefix and the note saying how much was cut
BOUNDED = MAX_ECHO_LENGTH + len("Error: ")


def task_indices(env, resets: int, seed: int | None = None) -> list[int]:
    first = [env.reset(seed=seed)[1]["task_index"]]
    return first + [env.reset()[1]["task_index"] for _ in range(resets - 1)]


def test_each_pass_over_the_task_set_plays_every_task_once():
    env = gym.make("LifelongDB-v0")
    everything = sorted(env.unwrapped.tasks.indices)
    played = task_indices(env, 2 * len(everything) + 3, seed=0)
    first, second = played[: len(everything)], played[len(everything) : 2 * len(everything)]
    assert sorted(first) == everything and sorted(second) == everything
    assert first != second  # each pass in an order of its own
    env.close()


def test_a_seed_starts_the_same_pass_again():
    env, other = gym.make("LifelongDB-v0"), gym.make("LifelongDB-v0")
    played = task_indices(env, 7, seed=3)
    task_indices(other, 40, seed=11)  # midway through a pass of another seed
    assert task_indices(other, 7, seed=3) == played
    assert task_indices(env, 7, seed=4) != played
    env.close(), other.close()


def test_uniform_sampling_draws_with_replacement():
    env = gym.make("LifelongDB-v0", task_sampling="uniform")
    played = task_indices(env, len(env.unwrapped.tasks), seed=0)
    assert len(set(played)) < len(played)
    assert task_indices(env, 20, seed=5) == task_indices(env, 20, seed=5)
    env.close()


def test_task_sampling_is_checked_in_one_line():
    with pytest.raises(EnvArgumentError, match="task_sampling must be one of 'epoch', 'uniform'"):
        gym.make("LifelongDB-v0", task_sampling="shuffle")


@pytest.mark.parametrize("task_sampling", ["epoch", "uniform"])
def test_check_env_passes_with_either_sampling(task_sampling):
    env = gym.make("LifelongDB-v0", task_sampling=task_sampling)
    check_env(env.unwrapped, skip_render_check=True)
    env.close()


def test_each_sub_environment_of_a_vector_env_plays_its_own_pass():
    envs = gym.vector.SyncVectorEnv([lambda: gym.make("LifelongDB-v0")] * 2)
    count = len(envs.envs[0].unwrapped.tasks)
    played = [envs.reset(seed=1)[1]["task_index"]]
    played += [envs.reset()[1]["task_index"] for _ in range(count - 1)]
    first, second = ([int(row[i]) for row in played] for i in (0, 1))
    assert sorted(first) == sorted(second) == sorted(envs.envs[0].unwrapped.tasks.indices)
    assert first != second  # seeded 1 and 2
    envs.close()


@pytest.mark.parametrize(
    ("options", "error", "message"),
    [
        ({"task_idx": 3}, ResetOptionError, "'task_idx' are unknown; the options are 'task_index'"),
        ({"task_index": "3"}, ResetOptionError, "must be an int"),
        ({"task_index": 3.0}, ResetOptionError, "must be an int"),
        ({"task_index": True}, ResetOptionError, "must be an int"),
        ({"task_index": 99_999}, TaskIndexError, "no task with sample index 99999"),
    ],
)
def test_a_reset_option_that_cannot_be_used_is_refused_in_one_line(options, error, message):
    env = gym.make("LifelongDB-v0")
    with pytest.raises(error, match=message) as raised:
        env.reset(options=options)
    assert isinstance(raised.value, LifelongGymError) and "\n" not in str(raised.value)
    env.close()


def test_a_task_index_may_be_a_numpy_integer_and_none_means_none_given():
    env = gym.make("LifelongDB-v0")
    assert env.reset(options={"task_index": np.int64(11)})[1]["task_index"] == 11
    assert env.reset(seed=0, options={"task_index": None})[1] == env.reset(seed=0)[1]
    env.close()


def play(env, index: int, as_dict: bool) -> tuple[list, list[ChatMessage]]:
    """The oracle's episode in the tools format, its replies sent as text or as dicts."""
    oracle = OracleAgent(env.unwrapped.tasks, action_format="tools")
    env.reset(options={"task_index": index})
    steps, done = [], False
    while not done:
        reply = oracle.act(env.unwrapped.session)
        action = {**json.loads(reply), "refusal": None, "audio": None} if as_dict else reply
        observation, reward, terminated, truncated, info = env.step(action)
        steps.append((observation, reward, terminated, truncated, info))
        done = terminated or truncated
    return steps, list(env.unwrapped.session.chat_history)


@pytest.mark.parametrize("index", [10, 11])  # a query task, a write task
def test_an_assistant_message_as_a_dict_scores_as_its_text(index):
    env = gym.make("LifelongDB-v0", action_format="tools")
    as_text, text_history = play(env, index, as_dict=False)
    as_dict, dict_history = play(env, index, as_dict=True)
    assert as_dict == as_text and as_text[-1][1] == 1.0
    assert [m.role for m in dict_history] == [m.role for m in text_history]
    for ours, theirs in zip(dict_history, text_history, strict=True):
        if ours.role == "user":
            assert ours.content == theirs.content
        else:  # the message's JSON, without the fields left empty
            sent = {k: v for k, v in json.loads(theirs.content).items() if v is not None}
            assert json.loads(ours.content) == sent
    env.close()


def test_an_openai_sdk_message_dumped_to_a_dict_is_a_tool_call():
    chat = pytest.importorskip("openai.types.chat")
    env = gym.make("LifelongDB-v0", action_format="tools")
    env.reset(options={"task_index": 10})
    call = {"id": "c7", "type": "function"}
    call["function"] = {"name": "execute_sql", "arguments": json.dumps({"sql": "SELECT 1"})}
    message = chat.ChatCompletionMessage(
        role="assistant", content="Let me look.", tool_calls=[call]
    )
    observation, _, terminated, _, _ = env.step(message.model_dump())
    assert (observation, terminated) == ("[(1,)]", False)
    turn = to_messages(env.unwrapped.session.chat_history, tool_calls=True)[1]
    assert turn["content"] == "Let me look." and turn["tool_calls"][0]["id"] == "c7"
    env.close()


@pytest.mark.parametrize(
    ("action_format", "action"),
    [
        ("tools", b'{"role": "assistant"}'),
        ("tools", None),
        ("tools", ["Action: Answer"]),
        ("text", {"role": "assistant", "content": "Action: Answer\nFinal Answer: 1"}),
        ("text", 7),
    ],
)
def test_an_action_of_another_type_is_the_callers_error(action_format, action):
    env = gym.make("LifelongDB-v0", action_format=action_format)
    env.reset(options={"task_index": 10})
    with pytest.raises(TypeError, match="step\\(\\) takes a str") as raised:
        env.step(action)
    assert "\n" not in str(raised.value)
    session = env.unwrapped.session
    assert not session.finished and session.agent_turns == 0  # the task goes on
    env.close()


def test_an_assistant_message_that_is_not_json_is_the_callers_error():
    env = gym.make("LifelongDB-v0", action_format="tools")
    env.reset(options={"task_index": 10})
    with pytest.raises(TypeError, match="JSON values only"):
        env.step({"role": "assistant", "tool_calls": [object()]})
    env.close()


HUGE = "x" * 1_000_000


@pytest.mark.parametrize(
    ("env_id", "reply", "said"),
    [
        ("LifelongKG-v0", f"Action: get_relations({HUGE})", "is not an entity id"),
        ("LifelongKG-v0", f"Action: get_neighbors(m.0abc, {HUGE})", "is not a relation name"),
        ("LifelongKG-v0", f"Action: count(#{HUGE})", "is not a variable"),
        ("LifelongDB-v0", f"Action: Operation\n```sql\nSELECT {HUGE[:90_000]}\n```", "column"),
    ],
    ids=["kg-entity", "kg-relation", "kg-variable", "db-column"],
)
def test_an_error_repeats_a_bounded_part_of_a_huge_argument(env_id, reply, said):
    if env_id == "LifelongKG-v0":
        pytest.importorskip("pyoxigraph")
    env = gym.make(env_id)
    env.reset(options={"task_index": env.unwrapped.tasks.order[0]})
    observation, _, terminated, _, _ = env.step(reply)
    assert not terminated and observation.startswith("Error: ")
    assert len(observation) <= BOUNDED and said in observation and "truncated" in observation
    env.close()


def test_an_invalid_reply_repeats_a_bounded_part_of_a_huge_tool_name():
    env = gym.make("LifelongKG-v0", action_format="tools")
    env.reset(options={"task_index": env.unwrapped.tasks.order[0]})
    call = {"function": {"name": HUGE[:150_000]}}
    reply = json.dumps({"role": "assistant", "tool_calls": [call]})
    observation, _, terminated, _, info = env.step(reply)
    assert terminated and info["status"] == "agent_validation_failed"
    assert len(observation) <= BOUNDED + len("Invalid reply") and "there is no tool" in observation
    env.close()


@pytest.mark.parametrize(
    "reply",
    [
        "Action: get_relations(m.0\ud800)",
        "Action: get_neighbors(#0, film.\ud800)",
        "Final Answer: #\ud800",
    ],
)
def test_a_lone_surrogate_in_a_kg_action_is_an_observation(reply):
    pytest.importorskip("pyoxigraph")
    env = gym.make("LifelongKG-v0")
    env.reset(options={"task_index": env.unwrapped.tasks.order[0]})
    observation, _, terminated, _, info = env.step(reply)
    assert observation.startswith("Error: ") and not terminated
    env.close()
