"""The planted learner (`--agent planted`): its rule over what the prompt shows, and that a
replay method beats its stateless twin with it, while no method gains nothing."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from lifelong_gym.agents import AgentSpecError, make_agent
from lifelong_gym.agents.planted import NO_ACTION, PlantedAgent
from lifelong_gym.envs.db.tasks import load_db_tasks
from lifelong_gym.session import ChatMessage, Role, Session
from tests.command_line import invoke_run

TASKS = load_db_tasks()


def sharing(index: int) -> list[int]:
    """Other tasks of the set that share a skill with task `index`."""
    skills = set(TASKS[index].skills)
    return [t.index for t in TASKS if t.index != index and skills & set(t.skills)]


def strangers(index: int) -> list[int]:
    """Tasks of the set that share no skill with task `index`."""
    skills = set(TASKS[index].skills)
    return [t.index for t in TASKS if not skills & set(t.skills)]


def session(index: int, shown: list[int], probe: bool = False) -> Session:
    """A session of task `index` whose opening prompt shows the tasks `shown`, in order."""
    blocks = [f"### Earlier task\n\nTask: {TASKS[i].instruction}" for i in shown]
    prompt = "\n\n".join(["Instructions.", *blocks, f"Task: {TASKS[index].instruction}"])
    return Session(
        task_index=index,
        skills=list(TASKS[index].skills),
        chat_history=[ChatMessage(role=Role.USER, content=prompt)],
        probe=probe,
    )


def solves(agent: PlantedAgent, task: Session) -> bool:
    return agent.act(task) != NO_ACTION


def test_it_solves_a_task_when_the_prompt_shows_k_earlier_tasks_of_its_skill():
    agent = PlantedAgent(TASKS, k=2, m=3, base=0.0)
    index = 0
    near, far = sharing(index), strangers(index)
    assert not solves(agent, session(index, []))
    assert not solves(agent, session(index, near[:1] + far[:3]))  # one is not k
    assert solves(agent, session(index, near[:2]))
    assert agent.act(session(index, near[:2])) == TASKS[index].oracle_reply([])
    assert solves(agent, session(index, [far[0], near[0], near[1]]))  # within the first m
    assert not solves(agent, session(index, far[:2] + near[:2]))  # past the first m: forgotten
    assert not solves(agent, session(index, [index, near[0]]))  # its own text does not count


def test_without_the_skill_it_solves_at_the_base_rate_the_same_every_time():
    assert all(solves(PlantedAgent(TASKS, base=1.0), session(i, [])) for i in range(20))
    agent = PlantedAgent(TASKS, base=0.5, seed=3)
    first = [solves(agent, session(i, [])) for i in range(200)]
    assert first == [solves(agent, session(i, [])) for i in range(200)]
    assert 60 < sum(first) < 140
    other_seed = PlantedAgent(TASKS, base=0.5, seed=4)
    assert first != [solves(other_seed, session(i, [])) for i in range(200)]


@pytest.mark.parametrize(
    ("spec", "message"),
    [
        ("planted:k=two", "k must be an integer"),
        ("planted:n=3", "takes no argument 'n'"),
        ("planted:k=0", "k and m must be 1 or more"),
        ("planted:base=1.5", "base is a rate from 0 to 1"),
    ],
)
def test_a_bad_planted_spec_is_one_clear_error(spec: str, message: str):
    with pytest.raises(AgentSpecError, match=message):
        make_agent(spec, TASKS)


def overall_gain(output: str) -> tuple[float, float, float]:
    """The overall gain of a run over its twin and its interval, as printed."""
    line = next(line for line in output.splitlines() if line.startswith("overall"))
    gain, low, high = line.split()[4:7]
    return float(gain), float(low.strip("[,")), float(high.strip("]"))


def outcomes(folder: Path) -> list[tuple[int, str]]:
    return [(s["task_index"], s["outcome"]) for s in map(json.loads, folder.open())]


def test_experience_replay_beats_the_stateless_twin_of_a_planted_learner(tmp_path: Path):
    args = ["--agent", "planted", "--max-tasks", "60", "--stateless-baseline"]
    result = invoke_run(*args, "--callback", "experience_replay:n=4", "--output", str(tmp_path))
    assert result.exit_code == 0, result.output
    gain, low, _ = overall_gain(result.output)
    assert gain > 0 and low > 0, result.output


def test_a_planted_learner_with_no_method_is_its_own_stateless_twin(tmp_path: Path):
    args = ["--agent", "planted", "--max-tasks", "60", "--stateless-baseline"]
    result = invoke_run(*args, "--output", str(tmp_path))
    assert result.exit_code == 0, result.output
    assert overall_gain(result.output) == (0.0, 0.0, 0.0)
    played = outcomes(tmp_path / "sessions.jsonl")
    assert played == outcomes(tmp_path / "stateless" / "sessions.jsonl")
    assert any(o == "correct" for _, o in played) and any(o != "correct" for _, o in played)
