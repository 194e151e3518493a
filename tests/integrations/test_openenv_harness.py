"""TRL's OpenEnv path: harness sessions driven by OpenEnv's own MCP harness and rollout function.

TRL's `HarnessRolloutWorker` samples through a vLLM server, which this CPU machine cannot
run; what it calls of ours is the session factory, driven here by OpenEnv's
`MCPHarnessAdapter` (the white-box harness TRL is given) and `build_harness_rollout_func`
(OpenEnv's TRL-shaped rollout function), with the oracle or a scripted model as the step.
"""

from __future__ import annotations

import gymnasium as gym
import pytest

pytest.importorskip("openenv", reason="pip install 'lifelong-gym[openenv]'")
pytest.importorskip("trl", reason="pip install 'lifelong-gym[trl]'")

from openenv.core.harness import (  # noqa: E402
    HarnessRunLimits,
    MCPHarnessAdapter,
    ModelStepResult,
    build_harness_rollout_func,
)
from openenv.core.llm_client import LLMResponse  # noqa: E402
from openenv.core.llm_client import ToolCall as HarnessCall  # noqa: E402

from lifelong_gym.agents import OracleAgent  # noqa: E402
from lifelong_gym.integrations.openenv_harness import (  # noqa: E402
    HarnessSessionFactory,
    ServedSessionFactory,
)
from lifelong_gym.tool_calls import ToolCall, parse_tool_call  # noqa: E402

LIMITS = HarnessRunLimits(max_turns=10)


def oracle_step(session, *, wrong: bool = False):
    """A model step that answers as the oracle does (or commits a wrong final answer)."""
    environment = session.environment
    oracle = OracleAgent(environment._env.unwrapped.tasks, action_format="tools")

    def step(messages, tools, sampling) -> ModelStepResult:
        assert {tool.name for tool in tools} == {"execute_sql", "commit_final_answer"}
        call = parse_tool_call(oracle.act(environment.session))
        assert isinstance(call, ToolCall)
        if wrong and call.name == "commit_final_answer":
            call = ToolCall("commit_final_answer", {"answer": "[('nothing like it',)]"})
        harness_call = HarnessCall(id=f"call_{len(messages)}", name=call.name, args=call.arguments)
        return ModelStepResult(response=LLMResponse(content="", tool_calls=[harness_call]))

    return step


def test_the_oracle_through_openenvs_harness_scores_the_environments_reward():
    factory = HarnessSessionFactory("LifelongDB-v0")
    for index in (0, 1, 2):
        session = factory.create({"task_index": index})
        try:
            assert session.initial_messages()[0]["content"].count("execute_sql") >= 1
            result = MCPHarnessAdapter().run_white_box(oracle_step(session), session, LIMITS)
            assert result.done and result.tool_trace[-1].result.done
            assert [m["role"] for m in result.messages][:3] == ["user", "assistant", "tool"]
            verify = session.verify(result.messages)
            assert verify.env_reward == 1.0 == session.environment.session.reward
            assert verify.metrics["status"] == "completed"
            assert verify.metrics["task_index"] == index
        finally:
            session.close()


def test_openenvs_rollout_function_forwards_right_and_wrong_rewards():
    factory = HarnessSessionFactory("LifelongDB-v0")
    tasks = gym.make("LifelongDB-v0").unwrapped.tasks
    select = [i for i in tasks.indices if "select" in tasks[i].skills][:3]  # final answers
    for wrong, expected in ((False, 1.0), (True, 0.0)):
        rollout = build_harness_rollout_func(
            session_factory=factory,
            harness_adapter=MCPHarnessAdapter(),
            model_step_builder=lambda trainer, session, w=wrong: oracle_step(session, wrong=w),
            limits=LIMITS,
        )
        out = rollout([{"task_index": i} for i in select], None)
        assert out["env_reward"] == [expected] * len(select)
        assert [m["status"] for m in out["verify_metrics"]] == ["completed"] * len(select)


def test_a_model_that_stops_calling_tools_is_scored_as_it_stands():
    session = HarnessSessionFactory("LifelongDB-v0").create({"task_index": 0})
    try:

        def prose(messages, tools, sampling) -> ModelStepResult:
            return ModelStepResult(response=LLMResponse(content="I would count the rows."))

        result = MCPHarnessAdapter().run_white_box(prose, session, LIMITS)
        assert result.done and not result.tool_trace
        verify = session.verify(result.messages)
        assert verify.env_reward == 0.0
        assert verify.metrics["status"] == "agent_validation_failed"
        # a call after the end is refused, not run
        assert session.call_tool("execute_sql", {"sql": "SELECT 1"}).done
    finally:
        session.close()


def test_a_group_shares_its_task_through_the_seed():
    factory = HarnessSessionFactory("LifelongDB-v0")
    sessions = [factory.create("a prompt without an index", seed=7) for _ in range(2)]
    other = factory.create("a prompt without an index", seed=8)
    try:
        first, second = (s.initial_messages()[0]["content"] for s in sessions)
        assert first == second != other.initial_messages()[0]["content"]
    finally:
        for session in (*sessions, other):
            session.close()


def replay_step(calls):
    """A model step that sends `calls` (name, arguments) one per turn, then prose."""
    pending = list(calls)

    def step(messages, tools, sampling) -> ModelStepResult:
        if not pending:
            return ModelStepResult(response=LLMResponse(content="done"))
        name, arguments = pending.pop(0)
        call = HarnessCall(id=f"call_{len(messages)}", name=name, args=arguments)
        return ModelStepResult(response=LLMResponse(content="", tool_calls=[call]))

    return step


def test_the_served_environment_through_openenvs_harness_gives_the_local_rewards():
    from .openenv_server import served

    local = HarnessSessionFactory("LifelongDB-v0")
    with served("LifelongDB-v0", "action_format=tools") as (_, url):
        remote = ServedSessionFactory(url, "LifelongDB-v0")
        for index, wrong in ((0, False), (1, False), (0, True)):
            session = local.create({"task_index": index})
            played = MCPHarnessAdapter().run_white_box(
                oracle_step(session, wrong=wrong), session, LIMITS
            )
            expected = session.verify(played.messages).env_reward
            assert expected == (0.0 if wrong else 1.0)
            session.close()
            calls = [(entry.tool_name, entry.arguments) for entry in played.tool_trace]
            served_session = remote.create({"task_index": index})
            try:
                assert [t.name for t in served_session.list_tools()] == [
                    t.name for t in session.list_tools()
                ]
                result = MCPHarnessAdapter().run_white_box(
                    replay_step(calls), served_session, LIMITS
                )
                verify = served_session.verify(result.messages)
            finally:
                served_session.close()
            assert verify.env_reward == expected
            assert verify.metrics["task_index"] == index
        # a model that stops before the task ends: the server ends it, unsolved
        served_session = remote.create({"task_index": 0})
        try:
            verify = served_session.verify([])
            assert verify.env_reward == 0.0
            assert verify.metrics["status"] == "agent_validation_failed"
        finally:
            served_session.close()
        # a call to a tool the environment lacks is the model's fault, in both places
        for session in (local.create({"task_index": 0}), remote.create({"task_index": 0})):
            try:
                result = MCPHarnessAdapter().run_white_box(
                    replay_step([("drop_everything", {"sql": "SELECT 1"})]), session, LIMITS
                )
                assert result.done and result.tool_trace[-1].result.done
                verify = session.verify(result.messages)
                assert (verify.env_reward, verify.metrics["status"]) == (
                    0.0,
                    "agent_validation_failed",
                )
            finally:
                session.close()
