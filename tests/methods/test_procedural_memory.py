"""Procedural memory with update (Memp): what a solved task builds, what a failed one
revises (with a scripted model) or demotes and drops (by the rule), what a success
reinforces, and junk revisions.

Tasks are played straight through the method (`_play` of the reasoning memory tests):
an opening prompt, one reply, a verdict.
"""

from __future__ import annotations

from lifelong_gym.methods import ProceduralMemoryMethod
from lifelong_gym.methods.procedural_memory import HEADING
from lifelong_gym.session import EvaluationOutcome

from .test_reasoning_memory import ScriptedModel, _opening, _play

CORRECT, INCORRECT = EvaluationOutcome.CORRECT, EvaluationOutcome.INCORRECT
MARCH = "How many invoices were paid in March?"
APRIL = "How many invoices were paid in April?"
QUERY = "SELECT COUNT(*) FROM invoices WHERE month = 'March';"
BUILT = "Title: Count paid invoices\nSteps:\n1. Count the {table} rows of {month}.\n2. Answer."
REVISED = "Title: Count paid invoices\nSteps:\n1. Filter on paid = 1 too.\n2. Count them."


def scripted(revision: str = REVISED) -> ScriptedModel:
    """A model that writes BUILT when asked to build and `revision` when asked to correct."""
    return ScriptedModel(lambda prompt: revision if "Correct it" in prompt else BUILT)


def test_a_solved_task_builds_a_procedure_of_its_trajectory_and_the_models_steps():
    model = scripted()
    method = ProceduralMemoryMethod(model=model)
    built = _play(method, 0, MARCH, QUERY, CORRECT).details["procedural_memory"]["update"]
    assert built["built"] == 1 and built["learnt_by"] == "model" and built["reinforced"] == []
    (procedure,) = method.items
    assert procedure.task == MARCH and procedure.actions == [QUERY]  # the trajectory
    assert procedure.title == "Count paid invoices"
    assert procedure.steps == ["Count the {table} rows of {month}.", "Answer."]
    assert (procedure.successes, procedure.failures, procedure.revisions) == (1, 0, 0)
    assert "procedure you followed" in model.prompts[0] and QUERY in model.prompts[0]
    # the next similar task is given it: its task, its actions and its steps
    session = _opening(1, APRIL)
    method.start(session)
    (inserted,) = session.inserted_memory()
    assert inserted["items"] == ["procedure 1"]
    assert inserted["text"].startswith(HEADING)
    assert MARCH in inserted["text"] and QUERY in inserted["text"]
    assert "1. Count the {table} rows of {month}." in inserted["text"]


def test_a_procedure_given_to_a_failed_task_is_revised_by_the_model():
    model = scripted()
    method = ProceduralMemoryMethod(model=model)
    _play(method, 0, MARCH, QUERY, CORRECT)
    record = _play(method, 1, APRIL, "SELECT 1;", INCORRECT).details["procedural_memory"]
    assert record["retrieved"] == [1]
    update = record["update"]
    assert update["revised"] == [1] and update["demoted"] == [] and update["dropped"] == []
    assert update["learnt_by"] == "model" and update["model_calls"] == 1
    (procedure,) = method.items  # a failure builds nothing
    assert procedure.steps == ["Filter on paid = 1 too.", "Count them."]
    assert (procedure.revisions, procedure.failures) == (1, 0)
    asked = model.prompts[-1]  # the failure and the procedure as it was
    assert "wrong" in asked and "SELECT 1;" in asked and "Count the {table} rows" in asked
    assert method.totals["revised"] == 1 and method.totals["model_calls"] == 2


def test_a_junk_revision_demotes_the_procedure_and_says_why():
    method = ProceduralMemoryMethod(model=scripted(revision="I cannot say."))
    _play(method, 0, MARCH, QUERY, CORRECT)
    update = _play(method, 1, APRIL, "SELECT 1;", INCORRECT).details["procedural_memory"]["update"]
    assert update["revised"] == [] and update["demoted"] == [1]
    assert update["rejected"].startswith("no title, no steps")
    (procedure,) = method.items
    assert procedure.steps == ["Count the {table} rows of {month}.", "Answer."]
    assert procedure.failures == 1


def test_a_success_reinforces_the_procedures_it_was_given():
    method = ProceduralMemoryMethod(k=1)  # no model: the rule builds
    _play(method, 0, MARCH, QUERY, CORRECT)
    update = _play(method, 1, APRIL, QUERY, CORRECT).details["procedural_memory"]["update"]
    assert update["reinforced"] == [1] and update["built"] == 2
    assert update["learnt_by"] == "rule" and update["model_calls"] == 0
    assert [p.successes for p in method.items] == [2, 1]
    assert method.items[0].steps == ["SELECT COUNT(*) FROM invoices WHERE month = {text};"]


def test_without_a_model_a_procedure_is_demoted_and_dropped_past_patience():
    method = ProceduralMemoryMethod(k=1, patience=2)
    _play(method, 0, MARCH, QUERY, CORRECT)
    updates = [
        _play(method, index, APRIL, "SELECT 1;", INCORRECT).details["procedural_memory"]
        for index in (1, 2, 3)
    ]
    assert [u["retrieved"] for u in updates] == [[1], [1], [1]]
    assert [u["update"]["demoted"] for u in updates] == [[1], [1], [1]]
    # 1 success, then 3 failures: 2 more failures than successes, its patience, drop it
    assert [u["update"]["dropped"] for u in updates] == [[], [], [1]]
    assert method.items == []
    assert (method.totals["demoted"], method.totals["dropped"]) == (3, 1)
    record = _play(method, 4, APRIL, "SELECT 1;", INCORRECT).details["procedural_memory"]
    assert record["retrieved"] == [] and "memory" not in record


def test_at_most_max_items_are_kept_dropping_the_one_that_helped_least():
    method = ProceduralMemoryMethod(k=1, max_items=2, patience=5)
    _play(method, 0, MARCH, QUERY, CORRECT)  # procedure 1
    _play(method, 1, APRIL, "SELECT 1;", INCORRECT)  # procedure 1 demoted
    _play(method, 2, "List the employees hired after 2020.", "SELECT name FROM e;", CORRECT)
    _play(method, 3, "Which customer placed most orders?", "SELECT c FROM o;", CORRECT)
    assert [p.number for p in method.items] == [2, 3]
