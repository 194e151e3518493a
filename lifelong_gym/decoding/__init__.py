"""Decoding with a local transformers model: token ids in, sampled token ids and their
logprobs out, batched, with the key/value states of earlier prompts read again.

`policy.TransformersPolicy` (public as `lifelong_gym.training.TransformersPolicy`) is what
the training loops and the agents' `hf:` models generate with; `chat_tokens` finds the
chat template's text around each turn, `kv_cache` keeps the states, `sampling` the sampling
distribution, `precision` the float type this CPU computes fastest, and `gguf_file` finds a
GGUF model file.
"""
