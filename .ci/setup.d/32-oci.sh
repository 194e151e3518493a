#!/usr/bin/env bash
# OCI runtimes for the OS environment's sandbox="oci": Debian's crun and runc (about 15 s
# with the package lists' update). The root file system is exported from the OS image by
# the first test that needs it, and cached under /var/tmp. Skipped when both are there.
set -euo pipefail
export DEBIAN_FRONTEND=noninteractive

if ! command -v crun >/dev/null || ! command -v runc >/dev/null; then
    apt-get update -q
    apt-get install -y -q --no-install-recommends crun runc
fi
