"""The probe measures on the worked example of docs/metrics.md, and their edge cases."""

from __future__ import annotations

import pytest

from lifelong_gym.results.probe_measures import ProbeRecord, accuracy_matrix, probe_measures

# docs/metrics.md: points 0, 2, 4, 6; two probe tasks of a, four of b, two of d
EXAMPLE = {
    0: {"a": 0.0, "b": 0.5, "d": 0.0},
    2: {"a": 1.0, "b": 0.75, "d": 0.0},
    4: {"a": 0.5, "b": 1.0, "d": 0.5},
    6: {"a": 0.5, "b": 1.0, "d": 0.5},
}
TASKS = {"a": 2, "b": 4, "d": 2}
STREAM = [["a"], ["a"], ["b"], ["b"], ["b"], ["b"]]


def records_of(matrix) -> list[ProbeRecord]:
    """Probe episodes that give `matrix`: of each skill's tasks, the first ones solved."""
    records, index = [], 0
    for point, row in matrix.items():
        for skill, accuracy in row.items():
            for number in range(TASKS[skill]):
                reward = float(number < accuracy * TASKS[skill])
                records.append(ProbeRecord(point=point, task_index=index, skills=[skill],
                                           status="completed", reward=reward))  # fmt: skip
                index += 1
    return records


def test_the_worked_example():
    measures = probe_measures(records_of(EXAMPLE), STREAM)
    assert measures.matrix == EXAMPLE
    assert measures.points == [0, 2, 4, 6]
    assert measures.forgetting == {"a": 0.5, "b": 0.0, "d": 0.0}
    assert measures.backward == {"a": -0.5, "b": 0.0}  # d is never in the stream
    assert measures.forward == {"a": 0.0, "b": 0.25}
    assert measures.aulc == 25 / 48
    assert measures.mean(measures.forgetting) == pytest.approx(1 / 6)
    assert measures.mean(measures.backward) == -0.25
    assert measures.mean(measures.forward) == 0.125


def test_forward_transfer_against_the_stateless_twin():
    twin = {point: dict(row) for point, row in EXAMPLE.items()}
    twin[2]["b"] = 0.25
    measures = probe_measures(records_of(EXAMPLE), STREAM, baseline=records_of(twin))
    assert measures.forward == {"a": 0.0, "b": 0.5}


def test_a_task_of_several_skills_counts_in_each():
    records = [
        ProbeRecord(point=0, task_index=0, skills=["a", "b"], status="completed", reward=1.0),
        ProbeRecord(point=0, task_index=1, skills=["b"], status="completed", reward=0.0),
    ]
    assert accuracy_matrix(records) == {0: {"a": 1.0, "b": 0.5}}


def test_one_point_has_no_forgetting_and_a_skill_still_in_play_no_backward_transfer():
    one = probe_measures(records_of({0: EXAMPLE[0]}), STREAM)
    assert one.forgetting == {} and one.backward == {} and one.aulc == 1 / 6
    # b's last stream task (position 5) comes after the last point (4): no BWT for b yet
    early = probe_measures(records_of({p: EXAMPLE[p] for p in (0, 2, 4)}), STREAM)
    assert set(early.backward) == {"a"}
    assert probe_measures([], STREAM).mean(probe_measures([], STREAM).forgetting) is None


def test_an_errored_probe_episode_is_left_out_not_counted_as_a_failure():
    records = records_of(EXAMPLE)
    crashed = [
        ProbeRecord(point=6, task_index=99, skills=["a"], status=status, reward=0.0)
        for status in ("task_environment_error", "agent_unknown_error", "task_unknown_error")
    ]
    measures = probe_measures(records + crashed, STREAM)
    assert measures.matrix == EXAMPLE
    assert measures.forgetting == {"a": 0.5, "b": 0.0, "d": 0.0}
