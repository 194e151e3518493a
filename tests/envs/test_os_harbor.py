"""Harbor task folders: `lifelong-gym export harbor`, and the folders read back as OS tasks.

The folders' files are checked without Docker; the round trip (export, then
`gym.make("LifelongOS-v0", tasks=DIR)` with the oracle and with hostile agents) runs on the
real Docker engine and the OS image. Harbor's own loader and runner:
tests/integrations/test_harbor.py.
"""

from __future__ import annotations

import io
import json
import tarfile
import textwrap
import tomllib
from pathlib import Path

import gymnasium as gym
import pytest
from click.testing import CliRunner

import lifelong_gym  # noqa: F401 (registers the ids)
from lifelong_gym.agents import OracleAgent
from lifelong_gym.cli import main
from lifelong_gym.envs.os.harbor.export import task_folder_name
from lifelong_gym.envs.os.harbor.tasks import load_harbor_tasks
from lifelong_gym.envs.os.image import DEFAULT_IMAGE
from lifelong_gym.envs.os.tasks import load_os_tasks
from lifelong_gym.errors import EnvArgumentError, TaskFileError

# a task of ours with python scripts, and an AgentBench-style answer task (left out)
PYTHON_TASK = {
    "index": 7,
    "skills": ["echo"],
    "instruction": "Write the word ready into /srv/flag.txt.",
    "initialization": {"language": "python", "script": "import os\nos.makedirs('/srv')"},
    "evaluation": {
        "language": "python",
        "script": "import sys\nsys.exit(open('/srv/flag.txt').read().strip() != 'ready')",
    },
    "ground_truth": {"language": "python", "script": "open('/srv/flag.txt', 'w').write('ready')"},
}
ANSWER_TASK = {"index": 8, "instruction": "How many?", "answer_check": {"match": "3"}}


def export(*args: str) -> tuple[int, str]:
    result = CliRunner().invoke(main, ["export", "harbor", *args])
    return result.exit_code, result.output


@pytest.fixture(scope="module")
def shipped(tmp_path_factory: pytest.TempPathFactory) -> Path:
    """The 300 shipped OS tasks as Harbor task folders."""
    out = tmp_path_factory.mktemp("harbor") / "default"
    code, output = export("--env", "LifelongOS-v0", "--out", str(out))
    assert code == 0, output
    assert output.strip() == f"wrote 300 Harbor task folders to {out}"
    return out


def test_every_task_is_a_folder_with_harbors_files(shipped: Path):
    tasks = load_os_tasks()
    assert sorted(p.name for p in shipped.iterdir()) == [
        task_folder_name(t.index) for t in sorted(tasks, key=lambda t: t.index)
    ]
    for task in tasks:
        folder = shipped / task_folder_name(task.index)
        assert (folder / "instruction.md").read_text() == task.instruction + "\n"
        config = tomllib.loads((folder / "task.toml").read_text())
        assert config["metadata"]["sample_index"] == task.index
        assert config["metadata"]["skills"] == list(task.skills)
        assert config["environment"] == {
            "cpus": 1, "memory_mb": 512, "storage_mb": 2048, "network_mode": "no-network"
        }  # fmt: skip
        assert config["verifier"]["timeout_sec"] == 60.0
        dockerfile = (folder / "environment" / "Dockerfile").read_text()
        assert f"FROM {DEFAULT_IMAGE}\n" in dockerfile
        setup = (folder / "environment" / "setup.sh").read_text()
        assert setup == task.initialization.script
        # the judge is in tests/ alone: nothing of it is in the image's build context
        assert (folder / "tests" / "evaluate.sh").read_text() == task.evaluation.script
        assert "reward.txt" in (folder / "tests" / "test.sh").read_text()
        for path in (folder / "environment").iterdir():
            assert task.evaluation.script not in path.read_text() or (
                task.evaluation.script in task.initialization.script
            )
        assert task.ground_truth.script in (folder / "solution" / "solve.sh").read_text()


def test_folders_read_back_as_the_same_tasks(shipped: Path):
    tasks = load_harbor_tasks(shipped)
    assert tasks.indices == load_os_tasks().indices
    for task in load_os_tasks():
        read = tasks[task.index]
        assert (read.instruction, read.skills) == (task.instruction, task.skills)
        assert read.image == DEFAULT_IMAGE and read.source == "harbor"


def test_bad_input_is_one_line(tmp_path: Path):
    for args, expected in [
        (["--env", "LifelongDB-v0"], "Harbor tasks are shell tasks; use LifelongOS-v0"),
        (["--tasks", str(tmp_path / "missing.jsonl")], "is neither a file nor a shipped"),
    ]:
        code, output = export(*args, "--out", str(tmp_path / "out"))
        assert code == 1 and output.count("\n") == 1 and expected in output, output
    tasks = tmp_path / "answers.jsonl"
    tasks.write_text(json.dumps(ANSWER_TASK) + "\n")
    code, output = export("--tasks", str(tasks), "--out", str(tmp_path / "out"))
    assert code == 1 and output.count("\n") == 1 and "judged by the agent's answer" in output
    not_harbor = tmp_path / "plain"
    (not_harbor / "sub").mkdir(parents=True)
    with pytest.raises(TaskFileError, match="holds no Harbor task folder"):
        load_harbor_tasks(not_harbor)
    result = CliRunner().invoke(
        main, ["run", "--env", "LifelongOS-v0", "--env-arg", f"tasks={not_harbor}",
               "--agent", "oracle", "--output", str(tmp_path / "run")],
    )  # fmt: skip
    assert result.exit_code == 1 and "holds no Harbor task folder" in result.output
    assert result.output.count("\n") == 1, result.output


def test_an_existing_folder_needs_overwrite(tmp_path: Path):
    tasks = tmp_path / "one.jsonl"
    tasks.write_text(json.dumps(PYTHON_TASK) + "\n" + json.dumps(ANSWER_TASK) + "\n")
    out = tmp_path / "out"
    code, output = export("--tasks", str(tasks), "--out", str(out))
    assert code == 0 and "wrote 1 Harbor task folders" in output
    assert "left out task 8: judged by the agent's answer" in output
    code, output = export("--tasks", str(tasks), "--out", str(out))
    assert code == 1 and "exists; pass --overwrite" in output
    assert export("--tasks", str(tasks), "--out", str(out), "--overwrite")[0] == 0
    folder = out / task_folder_name(7)
    assert (folder / "environment" / "setup.py").is_file()
    assert "python3 /tests/evaluate.py" in (folder / "tests" / "test.sh").read_text()


def write_folder(root: Path, name: str, dockerfile: str, **files: str) -> Path:
    """A Harbor task folder as another tool would write it."""
    folder = root / name
    contents = {
        "instruction.md": "Append the line done to notes.txt in the working directory.\n",
        "task.toml": 'version = "1.0"\n[metadata]\ntags = ["echo"]\n',  # the older key
        "environment/Dockerfile": textwrap.dedent(dockerfile),
        **files,
    }
    for relative, text in contents.items():
        path = folder / relative
        path.parent.mkdir(parents=True, exist_ok=True)
        path.write_text(text)
    return folder


FOREIGN_DOCKERFILE = f"""\
    # syntax=docker/dockerfile:1
    FROM {DEFAULT_IMAGE}
    LABEL purpose=test
    WORKDIR /app
    COPY notes.txt ./
    COPY --chmod=755 data/ /opt/data/
    RUN test -x /opt/data/run.sh && \\
        echo first >> notes.txt
    CMD ["sleep", "infinity"]
"""
FOREIGN_FILES = {
    "environment/notes.txt": "zero\n",
    "environment/data/run.sh": "#!/bin/sh\necho hi\n",
    "tests/test.sh": (
        "#!/bin/bash\nmkdir -p /logs/verifier\n"
        'if [ "$(cat notes.txt)" = "$(cat /tests/expected.txt)" ]; then r=1; else r=0; fi\n'
        'echo "{\\"reward\\": $r}" > /logs/verifier/reward.json\n'
    ),
    "tests/expected.txt": "zero\nfirst\ndone\n",
    "solution/solve.sh": "#!/bin/bash\necho done >> notes.txt\n",
}


def test_folders_of_other_tools_are_read_or_skipped_with_the_reason(tmp_path: Path, caplog):
    write_folder(tmp_path, "a-good", FOREIGN_DOCKERFILE, **FOREIGN_FILES)
    write_folder(tmp_path, "b-env", f"FROM {DEFAULT_IMAGE}\nENV A=1\n", **FOREIGN_FILES)
    write_folder(tmp_path, "c-stages", f"FROM x AS b\nRUN true\nFROM {DEFAULT_IMAGE}\n")
    write_folder(tmp_path, "d-outside", f"FROM {DEFAULT_IMAGE}\nCOPY ../a-good /x\n",
                 **FOREIGN_FILES)  # fmt: skip
    tasks = load_harbor_tasks(tmp_path)
    assert [t.index for t in tasks] == [0] and tasks[0].skills == ("echo",)
    reasons = {s.key: s.reason for s in tasks.skipped}
    assert reasons == {
        "b-env": "ENV in the Dockerfile is not supported (RUN, COPY, WORKDIR are)",
        "c-stages": "no tests/test.sh",
        "d-outside": "COPY ../a-good: not a file in environment/",
    }
    assert "skipped 3 of 4 records" in caplog.text
    assert load_harbor_tasks(tmp_path / "a-good")[0].instruction.startswith("Append")
    other = write_folder(tmp_path / "other", "x", "FROM ubuntu:24.04\n", **FOREIGN_FILES)
    with pytest.raises(EnvArgumentError, match="set up on the image ubuntu:24.04"):
        gym.make("LifelongOS-v0", tasks=str(other.parent))
    # no Dockerfile: a prebuilt image named in task.toml
    (other / "environment" / "Dockerfile").unlink()
    with pytest.raises(TaskFileError, match="x: neither environment/Dockerfile nor"):
        load_harbor_tasks(other)
    toml = f'version = "1.0"\n[environment]\ndocker_image = "{DEFAULT_IMAGE}"\n'
    (other / "task.toml").write_text(toml)
    assert load_harbor_tasks(other)[0].image == DEFAULT_IMAGE


def play(env, index: int, replies: list[str] | None = None) -> float:
    """A task played by the oracle, or by `replies`; its reward."""
    env.reset(options={"task_index": index})
    oracle = OracleAgent(env.unwrapped.tasks)
    for reply in replies or []:
        env.step(reply)
    while not env.unwrapped.session.finished:
        env.step(oracle.act(env.unwrapped.session))
    return env.unwrapped.session.reward


def bash(script: str) -> str:
    return f"Act: bash\n```bash\n{script}\n```"


def test_exported_and_foreign_folders_play_in_the_environment(shipped: Path, os_image, tmp_path):
    indices = load_os_tasks().indices[:4]
    mixed = tmp_path / "mixed"
    mixed.mkdir()
    for index in indices:
        (mixed / task_folder_name(index)).symlink_to(shipped / task_folder_name(index))
    write_folder(mixed, "zz-foreign", FOREIGN_DOCKERFILE, **FOREIGN_FILES)
    tasks = tmp_path / "python.jsonl"
    tasks.write_text(json.dumps(PYTHON_TASK) + "\n")
    assert export("--tasks", str(tasks), "--out", str(mixed))[0] == 0
    env = gym.make("LifelongOS-v0", tasks=str(mixed), pool_size=1)
    try:
        indices = env.unwrapped.tasks.indices
        assert len(indices) == 6
        assert [play(env, i) for i in indices] == [1.0] * 6
        # the judge is out of the agent's reach until its turn ends, and a reward file
        # written by the agent counts for nothing
        env.reset(options={"task_index": indices[0]})
        observation, *_ = env.step(bash("ls /tests /solution; ls -A /logs/verifier | wc -l"))
        assert observation.count("No such file or directory") == 2
        assert observation.rstrip().endswith("\n0"), observation
        env.step(bash("mkdir -p /logs/verifier; echo 1 > /logs/verifier/reward.txt"))
        *_, info = env.step("Act: finish")
        assert info["outcome"] == "incorrect"
        assert play(env, indices[-1], [bash("echo wrong > notes.txt"), "Act: finish"]) == 0.0
    finally:
        env.close()


def _tar(folder: Path, name: str) -> bytes:
    """`folder` as a tar archive holding it under `name`, for `put_archive` into /."""
    buffer = io.BytesIO()
    with tarfile.open(fileobj=buffer, mode="w") as archive:
        archive.add(folder, arcname=name)
    return buffer.getvalue()


def _copied_out(container, path: str) -> str:
    """The text of the file at `path` in `container`, copied out (not read by a command in it).

    Not `exec_run(["cat", path])`: the docker SDK reads an exec's output from the socket
    under the HTTP reader, so output that arrives with the response's headers is lost and a
    short, fast command can yield b"" on a busy machine (docker/docker-py#3332)."""
    chunks, _ = container.get_archive(path)
    with tarfile.open(fileobj=io.BytesIO(b"".join(chunks))) as archive:
        member = archive.extractfile(archive.next())
        assert member is not None, f"{path} is not a file"
        return member.read().decode()


def _judged(client, image: str, folder: Path, *, solve: bool) -> str:
    """Harbor's steps by hand on a fresh container of `image`: the solution (when `solve`),
    then tests/ copied to /tests and test.sh run; what it wrote to the reward file."""
    container = client.containers.run(
        image, ["sleep", "infinity"], detach=True, network_disabled=True, labels={"test": "harbor"}
    )
    try:
        if solve:
            container.put_archive("/", _tar(folder / "solution", "solution"))
            assert container.exec_run(["bash", "/solution/solve.sh"]).exit_code == 0
        container.put_archive("/", _tar(folder / "tests", "tests"))
        container.exec_run(["bash", "/tests/test.sh"])
        return _copied_out(container, "/logs/verifier/reward.txt")
    finally:
        container.remove(force=True)


def test_exported_dockerfiles_build_offline_and_the_judge_scores_the_solution(
    shipped: Path, os_image, docker_engine
):
    """Not Harbor's runner (it needs Docker's Compose V2 plugin, absent here: see
    tests/integrations/test_harbor.py), but its steps: build environment/ with the engine
    (no registry), run the solution, copy tests/ in, run test.sh, read the reward file."""
    for task in list(load_os_tasks())[:3]:
        folder = shipped / task_folder_name(task.index)
        tag = f"lifelong-gym-harbor-test:{task.index}"
        image, _ = docker_engine.images.build(path=str(folder / "environment"), tag=tag, rm=True)
        try:
            assert _judged(docker_engine, image.id, folder, solve=False) == "0\n"
            assert _judged(docker_engine, image.id, folder, solve=True) == "1\n"
        finally:
            docker_engine.images.remove(image.id, force=True)
