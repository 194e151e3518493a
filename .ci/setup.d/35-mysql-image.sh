#!/usr/bin/env bash
# The image of the MySQL server that `backend="mysql"` without a url starts: Debian's
# MariaDB built offline (debootstrap + docker import), after 30-docker.sh started dockerd.
# Idempotent: builds only when the image is absent.
set -euo pipefail
# through the interpreter: a console script may not be on PATH yet (pyenv shims)
python -m lifelong_gym build-image mysql
