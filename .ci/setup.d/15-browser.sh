#!/usr/bin/env bash
# A real browser for the HTML report's tests: Debian's chromium, driven by playwright.
# playwright cannot download its own browsers here, so the tests give it the system's
# chromium. Idempotent: each part is skipped when it is already there.
set -euo pipefail
export DEBIAN_FRONTEND=noninteractive

if ! command -v chromium >/dev/null; then
    apt-get update -q
    apt-get install -y -q --no-install-recommends chromium
fi
# also in the dev extra (10-python); installed here so this step stands on its own
python -c "import playwright" 2>/dev/null || python -m pip install -q "playwright>=1.40"
