#!/usr/bin/env bash
# The project with its test extras (torch and the model extras came first, in 05-torch).
set -euo pipefail
python -m pip install -q -e ".[dev]"
