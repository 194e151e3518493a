#!/usr/bin/env bash
# The mcp SDK 2.3 for `lifelong-gym serve --mcp` (tests/integrations/test_mcp.py), in a venv
# of its own: openenv (05-torch) pulls fastmcp, which pins mcp<2, so mcp 2.3 cannot join the
# main environment. The venv sees the main environment's packages, lifelong_gym included
# (installed editable by 10-python), and holds only mcp 2.3.0 and mcp-types over them.
set -euo pipefail
VENV=/opt/venvs/mcp
if ! "$VENV/bin/python" -c "import importlib.metadata as m; assert m.version('mcp') == '2.3.0'" \
    2>/dev/null; then
    python -m venv --system-site-packages "$VENV"
    "$VENV/bin/python" -m pip install -q --disable-pip-version-check mcp==2.3.0
fi
