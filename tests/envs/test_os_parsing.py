"""The OS environment's reply parser, task converters and output capture."""

from __future__ import annotations

import pytest

from lifelong_gym.actions import InvalidReply
from lifelong_gym.envs.os.actions import parse_action
from lifelong_gym.envs.os.backends.shell import _Capture, ansi_c_quote
from lifelong_gym.envs.os.judge import compare_answer
from lifelong_gym.envs.os.tasks import convert_record, from_agentbench, from_benchmark
from lifelong_gym.session import ChatMessage, Role


def test_bash_blocks_are_joined_into_one_script():
    reply = "Think: look.\nAct: bash\n\n```bash\nls\n```\nand\n```bash\npwd\n```"
    assert parse_action(reply).content == "ls\npwd"


@pytest.mark.parametrize(
    ("reply", "kind", "content"),
    [
        ("Act: finish", "finish", ""),
        ("Think: done\nAct: answer(42)", "answer", "42"),
        ("Act: answer(a (b) c)", "answer", "a (b) c"),
        ("act: Answer(\n12\n)", "answer", "12"),
    ],
)
def test_finish_and_answer(reply, kind, content):
    action = parse_action(reply)
    assert (action.kind, action.content) == (kind, content)


@pytest.mark.parametrize(
    "reply", ["", "ls -l", "Act: bash\nls", "Act: bash\n```bash\n\n```", "Act: answer(open"]
)
def test_replies_without_a_valid_action_are_refused(reply):
    parsed = parse_action(reply)
    assert isinstance(parsed, InvalidReply) and parsed.reason


def test_ansi_c_quote_round_trips_every_byte():
    import subprocess

    text = "a'b\"c$(x)`y`\\n\n\t\u00e9 %s {} !"
    word = ansi_c_quote(text)
    out = subprocess.run(["bash", "-c", f"printf %s {word}"], capture_output=True, text=True)
    assert out.stdout == text


def test_capture_keeps_head_and_tail_and_counts_the_middle():
    capture = _Capture(budget=100)
    for number in range(10_000):
        capture.add(f"{number}\n".encode())
    text = capture.text(100)
    assert text.startswith("0\n1\n2\n") and text.endswith("\n9999\n")
    start, end = text.index("\n[... "), text.index(" characters truncated ...]\n")
    note = text[start : end + len(" characters truncated ...]\n")]
    total = sum(len(f"{n}\n") for n in range(10_000))
    assert int(text[start + len("\n[... ") : end]) == total - (len(text) - len(note))


def test_benchmark_record_converts():
    record = {
        "instruction": "Make a file.",
        "initialization_command_item": {"command_name": "bash", "script": "mkdir /x"},
        "evaluation_info": {
            "evaluation_command_item": {"command_name": "bash", "script": "[ -f /x/f ]"},
            "ground_truth_command_item": {"command_name": "bash", "script": "touch /x/f"},
        },
        "skill_list": ["touch"],
        "raw_entry_hash": "abc",
    }
    task = convert_record("7", record)
    assert task == from_benchmark("7", record)
    assert (task.index, task.skills, task.ground_truth.script) == (7, ("touch",), "touch /x/f")
    assert task.oracle_reply([]).startswith("Act: bash\n\n```bash\ntouch /x/f")
    history = [ChatMessage(role=Role.AGENT, content="x")]
    assert task.oracle_reply(history) == "Act: finish"
    record["evaluation_info"]["evaluation_command_item"]["command_name"] = "cpp"
    with pytest.raises(ValueError, match="compiler"):
        convert_record("7", record)


def test_agentbench_records_and_their_skip_reasons():
    base = {"description": "How many?", "create": {"local": "default", "init": {"code": "true"}}}
    task = from_agentbench("0", {**base, "evaluation": {"match": "3"}})
    assert task.answer_check.match == "3" and task.oracle_reply([]) == "Act: answer(3)"
    checked = {
        **base,
        "evaluation": {
            "check": [None, {"language": "python", "file": "check/integer-match.py"}],
            "example": {"code": "ls | wc -l"},
        },
    }
    kinds = [c.kind for c in from_agentbench("1", checked).answer_check.checkers]
    assert kinds == ["example", "integer-match"]


BASE = {"description": "How many?", "create": {"init": {"code": "true"}}}


@pytest.mark.parametrize(
    ("create", "reason"),
    [
        ({"init": {"file": "init/x.sh"}}, "we do not have"),
        ({"init": {"code": "useradd j && su - j"}}, "su"),
        ({"init": "apt update"}, "network"),
        ({"local": "packages"}, "image"),
    ],
)
def test_agentbench_records_out_of_scope_say_why(create, reason):
    with pytest.raises(ValueError, match=reason):
        from_agentbench("2", {**BASE, "create": create, "evaluation": {"match": "1"}})


@pytest.mark.parametrize(
    ("kind", "answer", "expected", "verdict"),
    [
        ("integer-match", " 12", "12\n", True),
        ("integer-match", "twelve", "12", False),
        ("string-match", "a b", "a b\n", True),
        ("size-match", "1.5K", "1536", True),
        ("size-match", "2M", "2K", False),
        ("containing", "the answer is 7", "7", True),
        ("in", "b", "a b c", True),
    ],
)
def test_agentbench_checker_kinds(kind, answer, expected, verdict):
    assert compare_answer(kind, answer, expected) is verdict


def test_the_shipped_set_is_what_the_seeded_generator_draws():
    from lifelong_gym.envs.os.generator import generate_tasks
    from lifelong_gym.envs.os.tasks import load_os_tasks

    shipped = load_os_tasks()
    drawn = generate_tasks(300, seed=0)
    assert [t.index for t in drawn] == shipped.indices
    assert all(shipped[t.index] == t for t in drawn)
    assert generate_tasks(300, seed=1) != drawn
