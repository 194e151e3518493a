#!/usr/bin/env bash
# verifiers 0.4.0 for lifelong_gym.integrations.verifiers (tests/integrations/test_verifiers.py),
# in a venv of its own: verifiers 0.4.0 pins openai<3 (the main environment has openai 3.x)
# and pulls mcp 2.0 (openenv's fastmcp pins mcp<2). The venv sees the main environment's
# packages, lifelong_gym included (installed editable by 10-python), and holds verifiers, its
# own requirements over them, and uv, which verifiers' harnesses run their chat program with.
# The null harness's program gets its uv environment here once, so tests do not build it.
set -euo pipefail
VENV=/opt/venvs/verifiers
if ! "$VENV/bin/python" -c "import importlib.metadata as m; assert m.version('verifiers') == '0.4.0'" \
    2>/dev/null || [ ! -x "$VENV/bin/uv" ]; then
    python -m venv --system-site-packages "$VENV"
    "$VENV/bin/python" -m pip install -q --disable-pip-version-check verifiers==0.4.0 uv
fi
PATH="$VENV/bin:$PATH" "$VENV/bin/python" - <<'PYTHON'
import asyncio

from verifiers.v1.harnesses.utils.launch import CHAT_PROGRAM_SOURCE
from verifiers.v1.runtimes.subprocess import SubprocessConfig, SubprocessRuntime


async def prepare() -> None:
    runtime = SubprocessRuntime(SubprocessConfig())
    await runtime.start()
    try:
        await runtime.prepare_uv_script(CHAT_PROGRAM_SOURCE)
    finally:
        await runtime.stop()


asyncio.run(prepare())
PYTHON
