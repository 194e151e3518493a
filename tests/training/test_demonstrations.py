"""Demonstrations: replayed, they are what the environment showed and scored; exported, they
are a dataset TRL reads; SmolLM2's marked template puts the loss on the oracle's replies."""

from __future__ import annotations

import json
import re
from pathlib import Path

import gymnasium as gym
import pytest
from click.testing import CliRunner

import lifelong_gym
from lifelong_gym.cli import main
from lifelong_gym.training import demonstrations

pytest.importorskip(
    "datasets", reason="the SFT export needs datasets: pip install 'lifelong-gym[train]'"
)

ROOT = Path(__file__).resolve().parents[2]
TASK_LINE = re.compile(r"^Task: (.*)$", re.MULTILINE)


def replay(env_id: str, row: dict, **env_kwargs) -> None:
    """Plays a row's assistant messages in a fresh environment: the same observations, reward 1."""
    env = gym.make(env_id, **env_kwargs)
    try:
        first, _ = env.reset(options={"task_index": row["task_index"]})
        messages = [m for m in row["messages"] if m["role"] != "system"]
        assert messages[0] == {"role": "user", "content": first}
        reward, done = 0.0, False
        for position, message in enumerate(messages[1:], start=1):
            if message["role"] != "assistant":
                continue
            assert not done
            sent = json.dumps(message) if message.get("tool_calls") else message["content"]
            observation, reward, terminated, truncated, _ = env.step(sent)
            done = terminated or truncated
            if position + 1 < len(messages):  # the next message is the observation, as shown
                assert messages[position + 1]["content"] == observation
                assert messages[position + 1]["role"] == (
                    "tool" if "tool_calls" in message else "user"
                )
        assert done and reward == 1.0
        assert messages[-1]["role"] == "assistant"  # the observation after the end is left out
    finally:
        env.close()


@pytest.mark.parametrize("action_format", ["text", "tools"])
def test_every_db_row_replays_to_the_same_observations_and_reward_1(action_format):
    rows = [d.row() for d in demonstrations("LifelongDB-v0", action_format=action_format)]
    assert len(rows) == 500  # every shipped task, solved
    skills = {skill for row in rows for skill in row["skills"]}
    assert len(skills) == 22
    for row in rows:
        assert row["reward"] == 1.0 and row["status"] == "completed"
        replay("LifelongDB-v0", row, action_format=action_format)
    if action_format == "tools":
        names = [tool["function"]["name"] for tool in rows[0]["tools"]]
        assert names == ["execute_sql", "commit_final_answer"]
        call = next(m for m in rows[0]["messages"] if m.get("tool_calls"))
        assert isinstance(call["tool_calls"][0]["function"]["arguments"], dict)
    else:
        assert "tools" not in rows[0]


@pytest.mark.parametrize("action_format", ["text", "tools"])
def test_kg_rows_replay_to_the_same_observations_and_reward_1(action_format):
    chosen = list(range(0, 416, 13))
    rows = [
        d.row()
        for d in demonstrations("LifelongKG-v0", action_format=action_format, task_indices=chosen)
    ]
    assert [row["task_index"] for row in rows] == chosen
    for row in rows:
        replay("LifelongKG-v0", row, action_format=action_format)


def test_os_rows_replay_to_the_same_observations_and_reward_1(os_image):
    chosen = [0, 1, 2]
    played = demonstrations("LifelongOS-v0", task_indices=chosen, image=os_image, pool_size=1)
    rows = [d.row() for d in played]
    assert [row["task_index"] for row in rows] == chosen
    for row in rows:
        replay("LifelongOS-v0", row, image=os_image, pool_size=1)


def test_a_system_prompt_opens_each_conversation():
    demo = next(iter(demonstrations("LifelongDB-v0", task_indices=[3], system_prompt="Be exact.")))
    assert demo.messages[0] == {"role": "system", "content": "Be exact."}
    assert [m["role"] for m in demo.messages[1:3]] == ["user", "assistant"]


def test_unsolved_episodes_are_left_out_and_counted(tmp_path, caplog):
    # a task whose stored answer is wrong: the oracle's replay does not solve it
    record = json.loads((ROOT / "lifelong_gym/data/db/default.jsonl").read_text().splitlines()[0])
    record["answer_info"]["md5"] = None
    record["answer_info"]["direct"] = [[-1]]
    record["answer_info"]["sql"] = "SELECT -1"
    path = tmp_path / "broken.jsonl"
    path.write_text(json.dumps(record) + "\n")
    with caplog.at_level("WARNING"):
        assert list(demonstrations("LifelongDB-v0", str(path))) == []
    assert "did not solve 1 of 1 tasks" in caplog.text
    kept = list(demonstrations("LifelongDB-v0", str(path), solved_only=False))
    assert [d.reward for d in kept] == [0.0]


def export(*args: str) -> tuple[int, str]:
    result = CliRunner().invoke(main, ["export", "sft", "--no-progress", *args])
    return result.exit_code, result.output


def test_export_writes_a_dataset_that_datasets_and_trl_read(tmp_path):
    from datasets import load_dataset
    from trl.data_utils import is_conversational

    code, out = export("--out", str(tmp_path / "text"))
    assert code == 0, out
    assert out.strip() == f"wrote 500 demonstrations to {tmp_path / 'text'}"
    dataset = load_dataset(str(tmp_path / "text"), split="train")
    assert len(dataset) == 500 and is_conversational(dataset[0])
    columns = {"messages", "task_index", "skills", "reward", "status", "kind"}
    assert set(dataset.column_names) == columns and set(dataset["kind"]) == {"task"}
    metadata = json.loads((tmp_path / "text" / "metadata.json").read_text())
    assert metadata["rows"] == 500 and metadata["action_format"] == "text"
    assert metadata["rows_by_kind"] == {"task": 500}

    code, out = export("--out", str(tmp_path / "tools"), "--action-format", "tools")
    assert code == 0, out
    tools = load_dataset(str(tmp_path / "tools"), split="train")
    first = tools[0]
    assert [t["function"]["name"] for t in first["tools"]] == ["execute_sql", "commit_final_answer"]
    calls = [m for m in first["messages"] if m.get("tool_calls")]
    # stored as JSON values: each call keeps its own arguments, no other call's as None
    assert [set(c["tool_calls"][0]["function"]["arguments"]) for c in calls] == [
        {"sql"},
        {"answer"},
    ]
    replay("LifelongDB-v0", first, action_format="tools")


def test_export_refuses_bad_input_in_one_line(tmp_path):
    assert export("--out", str(tmp_path), "--env-arg", "max_turns=1")[0] == 0
    code, out = export("--out", str(tmp_path))
    assert code == 1 and out.count("\n") == 1
    assert "exists; pass --overwrite or another --out" in out
    code, out = export("--out", str(tmp_path / "x"), "--env", "LifelongNope-v0")
    assert code == 1 and out.startswith("Error: ") and out.count("\n") == 1
    code, out = export("--out", str(tmp_path / "y"), "--tasks", str(tmp_path / "missing.jsonl"))
    assert code == 1 and out.startswith("Error: ") and out.count("\n") == 1


def test_train_and_validation_exports_share_no_task_text(tmp_path):
    from datasets import load_dataset

    runner = CliRunner()
    for split, count, extra in (
        ("train", "60", []),
        ("validation", "30", ["--exclude", str(tmp_path / "tasks" / "train.jsonl")]),
    ):
        done = runner.invoke(
            main,
            ["generate", "db", "--split", split, "--count", count, "--mysql", ""]
            + ["--output", str(tmp_path / "tasks"), "--name", split, *extra],
        )
        assert done.exit_code == 0, done.output
        tasks = str(tmp_path / "tasks" / f"{split}.jsonl")
        code, out = export("--tasks", tasks, "--out", str(tmp_path / split))
        assert code == 0, out

    def texts(split: str) -> set[str]:
        rows = load_dataset(str(tmp_path / split), split="train")
        return {TASK_LINE.findall(row["messages"][0]["content"])[-1] for row in rows}

    train, validation = texts("train"), texts("validation")
    assert len(train) == 60 and len(validation) == 30
    assert train.isdisjoint(validation)


def test_smollm2_marked_template_masks_exactly_the_oracles_replies(smollm2_path):
    from transformers import AutoTokenizer

    from lifelong_gym.training.chat_templates import training_chat_template

    tokenizer = AutoTokenizer.from_pretrained(smollm2_path.parent, gguf_file=smollm2_path.name)
    marked = training_chat_template(tokenizer)
    assert marked != tokenizer.chat_template
    for demo in demonstrations("LifelongDB-v0", task_indices=range(0, 500, 25)):
        own = tokenizer.apply_chat_template(demo.messages, tokenize=False)
        assert (
            tokenizer.apply_chat_template(demo.messages, tokenize=False, chat_template=marked)
            == own
        )
        encoded = tokenizer.apply_chat_template(
            demo.messages,
            tokenize=True,
            return_dict=True,
            return_assistant_tokens_mask=True,
            chat_template=marked,
        )
        ids, mask = encoded["input_ids"], encoded["assistant_masks"]
        spans, current = [], []
        for token, inside in zip(ids, mask, strict=True):
            if inside:
                current.append(token)
            elif current:
                spans.append(current)
                current = []
        if current:
            spans.append(current)
        replies = [m["content"] for m in demo.messages if m["role"] == "assistant"]
        assert [tokenizer.decode(span) for span in spans] == [r + "<|im_end|>" for r in replies]


def test_an_unknown_template_is_refused_with_the_fix(tiny_model_dir):
    from transformers import AutoTokenizer

    from lifelong_gym.errors import ChatTemplateError
    from lifelong_gym.training.chat_templates import training_chat_template

    tokenizer = AutoTokenizer.from_pretrained(tiny_model_dir)
    assert training_chat_template(tokenizer) == tokenizer.chat_template  # marked already
    tokenizer.chat_template = "{% for m in messages %}{{ m['content'] }}\n{% endfor %}"
    with pytest.raises(ChatTemplateError, match="generation"):
        training_chat_template(tokenizer)


def test_import_lifelong_gym_training_needs_no_torch_for_demonstrations():
    import subprocess
    import sys

    code = (
        "import sys; sys.modules['torch'] = None\n"
        "from lifelong_gym.training import demonstrations\n"
        "print(sum(1 for _ in demonstrations('LifelongDB-v0', task_indices=[0, 1])))"
    )
    done = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True)
    assert done.returncode == 0, done.stderr[-2000:]
    assert done.stdout.strip() == "2"


assert lifelong_gym  # registers the ids the tests make


def test_a_method_export_shows_the_prompts_a_run_of_the_method_shows(tmp_path):
    """`demonstrations(method=...)` plays the tasks as a stream through the method: each
    opening prompt is the one a run with that callback and the oracle shows."""
    from lifelong_gym.agents import OracleAgent
    from lifelong_gym.methods import ExperienceReplayMethod
    from lifelong_gym.run import ExperienceReplayCallback, Runner
    from lifelong_gym.session import Session

    env = gym.make("LifelongDB-v0")
    agent = OracleAgent(env.unwrapped.tasks)
    Runner(env, agent, [ExperienceReplayCallback(n=2)], output=tmp_path / "run", max_tasks=6,
           progress=False, plots=False).run()  # fmt: skip
    env.close()
    lines = (tmp_path / "run" / "sessions.jsonl").read_bytes().splitlines()
    sessions = [Session.model_validate_json(line) for line in lines]
    order = [s.task_index for s in sessions]
    rows = list(
        demonstrations("LifelongDB-v0", task_indices=order, method=ExperienceReplayMethod(n=2))
    )
    assert [row.task_index for row in rows] == order
    openings = [row.messages[0]["content"] for row in rows]
    assert openings == [s.chat_history[0].content for s in sessions]
    assert sum("### Earlier task" in opening for opening in openings) >= 4  # replay shows


def test_export_through_a_method_names_it_and_refuses_a_callback_that_is_none(tmp_path):
    from datasets import load_dataset

    shipped = ROOT / "lifelong_gym" / "data" / "db" / "default.jsonl"
    tasks = tmp_path / "few.jsonl"
    tasks.write_text("".join(shipped.read_text().splitlines(keepends=True)[:5]))
    code, out = export("--tasks", str(tasks), "--out", str(tmp_path / "replay"),
                       "--method", "experience_replay:n=2")  # fmt: skip
    assert code == 0, out
    metadata = json.loads((tmp_path / "replay" / "metadata.json").read_text())
    assert metadata["method"] == "experience_replay:n=2"
    rows = load_dataset(str(tmp_path / "replay"), split="train")
    assert "### Earlier task" in rows[-1]["messages"][0]["content"]
    code, out = export("--tasks", str(tasks), "--out", str(tmp_path / "x"),
                       "--method", "online_training")  # fmt: skip
    assert code == 1 and out.count("\n") == 1 and "not a method" in out
    code, out = export("--tasks", str(tasks), "--out", str(tmp_path / "y"),
                       "--method", "reasoning_memory")  # fmt: skip
    assert code == 1 and out.count("\n") == 1 and "no agent plays here" in out
