#!/usr/bin/env bash
# harbor 0.25.0 for tests/integrations/test_harbor.py (its loader and oracle on the folders of
# `lifelong-gym export harbor`), in a venv of its own: harbor needs Python 3.12 or later, while
# the project's environment is 3.11. The tests run harbor as a program there, on folders the
# project wrote, so the venv needs nothing of the main environment.
set -euo pipefail
VENV=/opt/venvs/harbor
if ! "$VENV/bin/python" -c "import importlib.metadata as m; assert m.version('harbor') == '0.25.0'" \
    2>/dev/null; then
    PYTHON=""
    for candidate in python3.13 python3.12 /root/.pyenv/versions/3.1[23].*/bin/python3; do
        if command -v "$candidate" >/dev/null 2>&1 \
            && "$candidate" -c "import sys; assert sys.version_info >= (3, 12)" 2>/dev/null; then
            PYTHON=$(command -v "$candidate")
            break
        fi
    done
    if [ -z "$PYTHON" ]; then
        echo "55-harbor: no Python 3.12+ for harbor 0.25.0 (pyenv install 3.12)" >&2
        exit 1
    fi
    rm -rf "$VENV"
    "$PYTHON" -m venv "$VENV"
    "$VENV/bin/python" -m pip install -q --disable-pip-version-check harbor==0.25.0
fi
