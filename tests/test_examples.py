"""The scripts in examples/ run as a newcomer would run them."""

from __future__ import annotations

import importlib.util
import json
import re
import subprocess
import sys
from pathlib import Path

import pytest

EXAMPLES = Path(__file__).resolve().parents[1] / "examples"


def run(script: str, *args: str) -> str:
    done = subprocess.run(
        [sys.executable, str(EXAMPLES / script), *args],
        capture_output=True,
        text=True,
        timeout=600,
    )
    assert done.returncode == 0, done.stderr[-2000:]
    return done.stdout


def test_replay_study(tmp_path):
    out = run("replay_study.py", "--output", str(tmp_path), "--sizes", "0", "2", "--max-tasks", "5")
    overall = [line.split() for line in out.splitlines() if line.startswith("overall")]
    assert overall[-1] == ["overall", "100.0%", "100.0%", "(+0.0)"]  # the oracle, twice
    assert (tmp_path / "comparison.png").is_file()
    assert (tmp_path / "replay-2" / "sessions.jsonl").read_text().count("\n") == 5


def test_ray_cluster():
    pytest.importorskip("ray", reason="needs Ray: pip install 'lifelong-gym[ray]'")
    out = run("ray_cluster.py", "--db-envs", "2", "--episodes", "1")
    assert "LifelongDB-v0: 2 actors on" in out
    assert "2 episodes, mean reward 1.00" in out


def test_skyrl_episodes():
    pytest.importorskip("skyrl_gym", reason="pip install 'lifelong-gym[skyrl]'")
    out = run("skyrl_episodes.py", "--episodes", "3", "--action-format", "tools")
    assert out.count("reward 1.0 completed correct") == 3
    assert "mean correct 1.00 over 3 episodes" in out


def test_trl_grpo(tmp_path):
    pytest.importorskip("trl", reason="pip install 'lifelong-gym[trl]'")
    out = run(
        "trl_grpo.py",
        "--tiny",
        "--steps",
        "2",
        "--max-completion-length",
        "12",
        "--output",
        str(tmp_path),
    )
    rewards = [line for line in out.splitlines() if line.startswith("step ")]
    assert [line.split(":")[0] for line in rewards] == ["step 1", "step 2"]


def test_grpo_train_measures_before_and_after_and_updates(tiny_model_dir):
    """The example end to end on the tiny model: held-out figures before and after, two updates."""
    pytest.importorskip("peft", reason="the GRPO example's LoRA needs peft")
    out = run(
        "grpo_train.py",
        *("--model", str(tiny_model_dir), "--steps", "2", "--pool-size", "40"),
        *("--num-envs", "2", "--tasks-per-step", "1", "--group-size", "2"),
        *("--max-new-tokens", "3", "--eval-episodes", "2", "--lora-rank", "2"),
    )
    figures = dict(re.findall(r"^(valid_action_rate|success_rate): (\S+ -> \S+)$", out, re.M))
    assert set(figures) == {"valid_action_rate", "success_rate"}
    step_line = r"^step +(\d+) .*policy_loss [-+]\d\.\d+ .*grad_norm \d+\.\d+ "
    steps = re.findall(step_line, out, re.M)
    assert [int(step) for step in steps] == [1, 2]  # each line follows optimizer.step()


def test_sft_warmstart_measures_and_saves_a_folder_that_plays_as_an_hf_agent(
    sft_checkpoint, tiny_model_dir, tmp_path
):
    """The warm start end to end on the tiny model: figures before and after, a saved folder
    that the command line runs as `hf:FOLDER`, weights that moved."""
    import torch
    from click.testing import CliRunner
    from transformers import AutoModelForCausalLM

    from lifelong_gym.cli import main

    out, folder = sft_checkpoint.output, sft_checkpoint.folder
    figure = r"success \d\.\d{3} \(\d/2, 95% CI \d\.\d{3}-\d\.\d{3}\)  valid actions"
    assert re.search(rf"^before training: {figure}", out, re.M), out
    assert re.search(rf"^after training: {figure}", out, re.M), out
    assert re.search(r"^trained \d+ steps in .* tokens/s$", out, re.M), out
    assert "per skill (solved/episodes):" in out
    summary = json.loads((folder / "warmstart.json").read_text())
    assert summary["steps"] == 1 and summary["input_tokens"] > 0
    assert set(summary["after"]) == {
        "success_rate", "solved", "episodes", "interval", "valid_action_rate", "per_skill",
        "statuses", "episodes_file",
    }  # fmt: skip
    assert summary["after"]["episodes"] == 2
    base = AutoModelForCausalLM.from_pretrained(tiny_model_dir).state_dict()
    trained = AutoModelForCausalLM.from_pretrained(folder).state_dict()
    assert any(not torch.equal(base[name], trained[name]) for name in base)

    result = CliRunner().invoke(
        main,
        ["run", "--agent", f"hf:{folder}?max_new_tokens=8", "--max-tasks", "2"]
        + ["--output", str(tmp_path / "run"), "--no-progress"],
    )
    assert result.exit_code == 0, result.output
    sessions = (tmp_path / "run" / "sessions.jsonl").read_text().splitlines()
    assert len(sessions) == 2
    assert all(json.loads(line)["status"] for line in sessions)


def test_sft_warmstart_measures_the_saved_folder_as_users_load_it(sft_checkpoint, tmp_path):
    """The figure after training is the saved folder's: replayed with --eval-only, every
    episode says the same; and the folder keeps the KV cache on (the trainer turns it off)."""
    folder = sft_checkpoint.folder
    assert json.loads((folder / "config.json").read_text())["use_cache"] is True
    run(
        "sft_warmstart.py",
        *("--model", str(folder), "--env-id", "LifelongDB-v0", "--eval-only"),
        *("--output", str(tmp_path / "again"), "--eval-tasks", "default"),
        *("--eval-episodes", "2", "--eval-envs", "2", "--max-new-tokens", "4"),
    )
    trained = (folder / "episodes" / "after.jsonl").read_text().splitlines()
    replayed = (tmp_path / "again" / "episodes" / "after.jsonl").read_text().splitlines()
    assert [json.loads(line) for line in replayed] == [json.loads(line) for line in trained]


def test_sft_warmstart_decodes_after_training_without_the_trainers_autocast(
    tiny_model_dir, tmp_path, monkeypatch
):
    """bf16 training leaves accelerate's autocast wrapped around the trained model's forward;
    the evaluation after training decodes with the model class's own forward, in float32."""
    pytest.importorskip("trl", reason="the SFT example needs TRL: pip install 'lifelong-gym[trl]'")
    import torch

    from lifelong_gym.training.sft_export import export_sft

    spec = importlib.util.spec_from_file_location("sft_warmstart", EXAMPLES / "sft_warmstart.py")
    script = importlib.util.module_from_spec(spec)
    monkeypatch.setitem(sys.modules, "sft_warmstart", script)  # its dataclasses look it up
    spec.loader.exec_module(script)
    measured, real = [], script.evaluate_policy

    def recording(policy, *args, **kwargs):
        measured.append(policy.model)
        return real(policy, *args, **kwargs)

    monkeypatch.setattr(script, "evaluate_policy", recording)
    export_sft("LifelongDB-v0", tmp_path / "data", progress=False)
    script.train(
        script.Config(
            model=str(tiny_model_dir), data=[str(tmp_path / "data")], demonstrations=2,
            output=str(tmp_path / "model"), max_length=4096, warmup_ratio=0, bf16=True,
            threads=torch.get_num_threads(), eval_tasks=["default"], eval_episodes=1,
            eval_envs=1, max_new_tokens=2,
        )
    )  # fmt: skip
    (model,) = measured
    assert model.forward.__func__ is type(model).forward
    assert {parameter.dtype for parameter in model.parameters()} == {torch.float32}


def test_sft_warmstart_on_kg_evaluates_in_the_env_of_its_demonstrations(tiny_model_dir, tmp_path):
    """KG demonstrations of a generated graph: the held-out evaluation plays KG tasks on that
    graph (the env read from the export, its argument from --eval-env-arg)."""
    pytest.importorskip("trl", reason="the SFT example needs TRL: pip install 'lifelong-gym[trl]'")
    from click.testing import CliRunner

    from lifelong_gym.cli import main
    from lifelong_gym.training.sft_export import export_sft

    tasks = tmp_path / "tasks"
    generated = CliRunner().invoke(
        main, ["generate", "kg", "--count", "8", "--scale", "0.2", "--output", str(tasks)]
    )
    assert generated.exit_code == 0, generated.output
    graph = f"graph={tasks / 'graph.nt.gz'}"
    export_sft(
        "LifelongKG-v0",
        tmp_path / "data",
        tasks=str(tasks / "default.jsonl"),
        env_kwargs={"graph": str(tasks / "graph.nt.gz")},
        progress=False,
    )
    out = run(
        "sft_warmstart.py",
        *("--model", str(tiny_model_dir), "--data", str(tmp_path / "data")),
        *("--output", str(tmp_path / "model"), "--demonstrations", "2", "--warmup-ratio", "0"),
        *("--eval-tasks", str(tasks / "default.jsonl"), "--eval-env-arg", graph),
        *("--eval-episodes", "2", "--eval-envs", "2", "--max-new-tokens", "4"),
    )
    assert re.search(r"^after training: success \d\.\d{3} \(\d/2, ", out, re.M), out
    summary = json.loads((tmp_path / "model" / "warmstart.json").read_text())
    assert summary["config"]["env_id"] == "LifelongKG-v0"
    kg_actions = {"get_relations", "get_neighbors", "intersection", "get_attributes"}
    assert set(summary["after"]["per_skill"]) & kg_actions, summary["after"]["per_skill"]


def test_sft_warmstart_refuses_an_env_other_than_its_demonstrations(sft_checkpoint, tmp_path):
    """--env-id that contradicts the export is one line, before any model is loaded."""
    (data,) = json.loads((sft_checkpoint.folder / "warmstart.json").read_text())["config"]["data"]
    done = subprocess.run(
        [sys.executable, str(EXAMPLES / "sft_warmstart.py"), "--data", str(data)]
        + ["--env-id", "LifelongOS-v0", "--output", str(tmp_path / "model")],
        capture_output=True,
        text=True,
        timeout=600,
    )
    assert done.returncode == 1
    assert done.stderr.strip() == "--env-id LifelongOS-v0: the demonstrations are of LifelongDB-v0"


def test_grpo_train_continues_from_a_warm_start_in_the_standard_environment(
    sft_checkpoint, tmp_path
):
    """GRPO from the warm start's folder: the benchmark's prompt, 3 turns, success alone."""
    pytest.importorskip("peft", reason="the GRPO example's LoRA needs peft")
    out = run(
        "grpo_train.py",
        *("--model", str(sft_checkpoint.folder), "--prompt", "standard", "--max-turns", "3"),
        *("--format-bonus", "0", "--train-tasks", "default", "--eval-tasks", "default"),
        *("--steps", "1", "--num-envs", "2", "--tasks-per-step", "1", "--group-size", "2"),
        *("--max-new-tokens", "3", "--eval-episodes", "2", "--eval-temperature", "0"),
        *("--lora-rank", "2", "--output", str(tmp_path / "grpo"), "--skip-equal-groups"),
        *("--task-sampling", "skill"),
    )
    assert re.search(r"^500 training tasks, 500 held-out tasks$", out, re.M), out
    assert len(re.findall(r"^  success \d\.\d{3} \(\d/2, 95% CI", out, re.M)) == 2
    step = re.search(r"^step +1 +reward (\S+) .* solved (\S+) .* updated (\d)/2 ", out, re.M)
    assert step and step.group(1) == step.group(2)  # no format bonus: the reward is success
    # a group of two is left out of the update when both episodes got the same reward
    mixed = step.group(1) == "0.500"
    assert int(step.group(3)) == (2 if mixed else 0)
    assert (tmp_path / "grpo" / "config.json").is_file()


def test_sft_warmstart_mixes_exports_and_measures_every_eval_set(tiny_model_dir, tmp_path):
    """Two exports (plain and through experience replay) shuffled together; the first eval
    set before and after, the second after, each with its own figure and per-skill table."""
    pytest.importorskip("trl", reason="the SFT example needs TRL: pip install 'lifelong-gym[trl]'")
    from lifelong_gym.methods import ExperienceReplayMethod
    from lifelong_gym.training.sft_export import export_sft

    shipped = EXAMPLES.parent / "lifelong_gym" / "data" / "db" / "default.jsonl"
    few = tmp_path / "few.jsonl"
    few.write_text("".join(shipped.read_text().splitlines(keepends=True)[:4]))
    export_sft("LifelongDB-v0", tmp_path / "plain", tasks=str(few), progress=False)
    export_sft("LifelongDB-v0", tmp_path / "replay", tasks=str(few), progress=False,
               method=ExperienceReplayMethod(n=2), method_spec="experience_replay:n=2")  # fmt: skip
    out = run(
        "sft_warmstart.py",
        *(
            "--model",
            str(tiny_model_dir),
            "--data",
            str(tmp_path / "plain"),
            str(tmp_path / "replay"),
        ),
        *("--output", str(tmp_path / "model"), "--warmup-ratio", "0", "--max-length", "4096"),
        *("--eval-tasks", "default", str(few), "--eval-before"),
        *("--eval-episodes", "2", "--eval-envs", "2", "--max-new-tokens", "4"),
    )
    assert re.search(r"^8 demonstrations; ", out, re.M), out
    figure = r"success \d\.\d{3} \(\d/2, 95% CI"
    assert re.search(rf"^before training: {figure}", out, re.M), out
    assert re.search(rf"^after training: {figure}", out, re.M), out
    assert re.search(rf"^after training, on {re.escape(str(few))}: {figure}", out, re.M), out
    summary = json.loads((tmp_path / "model" / "warmstart.json").read_text())
    assert set(summary) >= {"before", "after", f"after on {few}"}
    assert summary[f"after on {few}"]["episodes_file"] == "episodes/after-on-few.jsonl"


def test_sft_warmstart_eval_only_measures_a_saved_model_on_every_task(sft_checkpoint, tmp_path):
    """--eval-only: the saved folder measured on each set, every task with --eval-episodes
    0, no training, each set's episodes in a file of its own (two of one file name too);
    without --eval-tasks one line says what is missing."""
    shipped = EXAMPLES.parent / "lifelong_gym" / "data" / "db" / "default.jsonl"
    few, one, other = (
        tmp_path / "few.jsonl",
        tmp_path / "a" / "dev.jsonl",
        tmp_path / "b" / "dev.jsonl",
    )
    few.write_text("".join(shipped.read_text().splitlines(keepends=True)[:3]))
    for path, line in ((one, 3), (other, 4)):
        path.parent.mkdir()
        path.write_text(shipped.read_text().splitlines(keepends=True)[line])
    model = sft_checkpoint.folder
    common = ("--model", str(model), "--env-id", "LifelongDB-v0", "--eval-only")
    out = run(
        "sft_warmstart.py",
        *common,
        *("--output", str(tmp_path / "eval"), "--eval-tasks", str(few), str(one), str(other)),
        *("--eval-episodes", "0", "--eval-envs", "2", "--max-new-tokens", "4"),
    )
    assert "trained" not in out and re.search(r"\(\d/3, 95% CI", out), out
    summary = json.loads((tmp_path / "eval" / "warmstart.json").read_text())
    assert summary["trained"] is False and summary["after"]["episodes"] == 3
    assert summary["after"]["episodes_file"] == "episodes/after.jsonl"
    played = (tmp_path / "eval" / "episodes" / "after.jsonl").read_text().splitlines()
    rows = [json.loads(line) for line in played]
    assert sorted(r["task_index"] for r in rows) == [0, 1, 2]
    assert all(r["messages"][0]["role"] in ("system", "user") and r["status"] for r in rows)
    for path, file, index in ((one, "after-on-dev", 3), (other, "after-on-dev-2", 4)):
        assert summary[f"after on {path}"]["episodes_file"] == f"episodes/{file}.jsonl"
        (row,) = (tmp_path / "eval" / "episodes" / f"{file}.jsonl").read_text().splitlines()
        assert json.loads(row)["task_index"] == index
    done = subprocess.run(
        [sys.executable, str(EXAMPLES / "sft_warmstart.py"), *common],
        capture_output=True,
        text=True,
        timeout=600,
    )
    assert done.returncode == 1
    assert done.stderr.strip().splitlines()[-1] == (
        "--eval-only: name the task files to measure with --eval-tasks"
    )
