#!/usr/bin/env bash
# The CPU build of torch first (a plain resolve would pull a CUDA build), then the model
# back-ends' extras (transformers, tokenizers, openai; SmolLM2's GGUF file with gguf and
# accelerate, which transformers needs to load it; peft for training; ray for the cluster
# tests; TRL and skyrl-gym for lifelong_gym.integrations), before 10-python resolves the rest.
set -euo pipefail
python -m pip install -q torch==2.13.0
python -m pip install -q -e ".[hf,openai,smollm2,train,ray,trl,skyrl]"
