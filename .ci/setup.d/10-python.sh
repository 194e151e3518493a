#!/usr/bin/env bash
# Python packages: the CPU build of torch first (a plain resolve would pull a CUDA build),
# then the project with its test extras.
set -euo pipefail
python -m pip install -q -e ".[dev]"
