#!/usr/bin/env bash
# Docker for the OS environment: Debian's docker.io and debootstrap, a running dockerd,
# and the OS image built offline (debootstrap + docker import: no registry is reachable).
# Idempotent: each part is skipped when it is already there.
set -euo pipefail
export DEBIAN_FRONTEND=noninteractive

if ! command -v dockerd >/dev/null || ! command -v debootstrap >/dev/null; then
    apt-get update -q
    apt-get install -y -q --no-install-recommends docker.io debootstrap
fi

if ! docker info >/dev/null 2>&1; then
    mkdir -p /var/log
    # started in the background, detached from this step; it logs to a file
    setsid dockerd --storage-driver=overlay2 >/var/log/lifelong-gym-dockerd.log 2>&1 </dev/null &
    for _ in $(seq 60); do
        docker info >/dev/null 2>&1 && break
        sleep 1
    done
    if ! docker info >/dev/null 2>&1; then
        echo "dockerd did not start; its log:" >&2
        tail -n 30 /var/log/lifelong-gym-dockerd.log >&2
        exit 1
    fi
fi

# builds only when the image is absent (about 2.5 minutes on 2 cores)
# through the interpreter: a console script may not be on PATH yet (pyenv shims)
python -m lifelong_gym build-image os
