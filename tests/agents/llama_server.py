"""A real OpenAI-compatible server for the tests: llama-cpp-python serving a GGUF file."""

from __future__ import annotations

import json
import socket
import subprocess
import sys
import tempfile
import time
import urllib.request
from pathlib import Path

MODEL_NAME = "smollm2"
START_TIMEOUT = 300.0  # seconds; loading is a few seconds alone, far longer on a busy machine


def free_port() -> int:
    """A TCP port on loopback that nothing listens on now."""
    with socket.socket() as probe:
        probe.bind(("127.0.0.1", 0))
        return probe.getsockname()[1]


class LlamaServer:
    """`python -m llama_cpp.server` on a free loopback port, serving `model` as `smollm2`."""

    def __init__(
        self, model: Path, *, n_ctx: int = 4096, threads: int = 2, chat_format: str | None = None
    ):
        self.port = free_port()
        self.base_url = f"http://127.0.0.1:{self.port}/v1"
        self.log = tempfile.NamedTemporaryFile(prefix="llama-server-", suffix=".log")
        command = [
            sys.executable,
            "-m",
            "llama_cpp.server",
            "--model",
            str(model),
            "--model_alias",
            MODEL_NAME,
            "--host",
            "127.0.0.1",
            "--port",
            str(self.port),
            "--n_ctx",
            str(n_ctx),
            "--n_threads",
            str(threads),
            "--n_threads_batch",
            str(threads),
        ]
        if chat_format is not None:
            command += ["--chat_format", chat_format]
        self.process = subprocess.Popen(command, stdout=self.log, stderr=subprocess.STDOUT)
        try:
            self._wait_until_serving()
        except BaseException:
            self.close()
            raise

    def _wait_until_serving(self) -> None:
        deadline = time.monotonic() + START_TIMEOUT
        while time.monotonic() < deadline:
            if self.process.poll() is not None:
                raise RuntimeError(
                    f"llama_cpp.server exited ({self.process.returncode}):\n{self.output()}"
                )
            try:
                with urllib.request.urlopen(f"{self.base_url}/models", timeout=5) as response:
                    names = [m["id"] for m in json.load(response)["data"]]
                if MODEL_NAME in names:
                    return
            except OSError:
                pass
            time.sleep(0.5)
        raise RuntimeError(
            f"llama_cpp.server did not answer in {START_TIMEOUT} s:\n{self.output()}"
        )

    def output(self) -> str:
        """What the server printed so far (its last 4,000 characters)."""
        return Path(self.log.name).read_text(errors="replace")[-4000:]

    def close(self) -> None:
        """Stop the server (SIGTERM, then SIGKILL after 10 s) and drop its log."""
        if self.process.poll() is None:
            self.process.terminate()
            try:
                self.process.wait(timeout=10)
            except subprocess.TimeoutExpired:
                self.process.kill()
                self.process.wait()
        self.log.close()
