#!/usr/bin/env bash
# The GPU benchmark (benchmarks/gpu.py) on this machine's own Python and torch, from a copy of the repository,
# without `make setup`: src and plugins/*/src go on PYTHONPATH, and the plugins register themselves in the
# process. Nothing is downloaded. Writes docs/benchmarks/gpu.md and benchmarks/results/gpu.json (or where
# --docs-dir and --results-dir say). Arguments go to `python -m benchmarks gpu`:
#
#   scripts/gpu-bench.sh --quick                      # well within 10 minutes on a GPU machine (not yet timed)
#   scripts/gpu-bench.sh                              # the full workloads
#   scripts/gpu-bench.sh --device cpu --quick --tiny  # a dry run of every step without a GPU (figures mean nothing)
#
# PYTHON (default python3): the interpreter whose torch is measured.
set -euo pipefail
cd "$(dirname "$0")/.."
PYTHON=${PYTHON:-python3}
paths=("$PWD" "$PWD/src")
for plugin in plugins/*/src; do paths+=("$PWD/$plugin"); done
PYTHONPATH="$(IFS=:; echo "${paths[*]}")${PYTHONPATH:+:$PYTHONPATH}"
export PYTHONPATH HF_HUB_OFFLINE=1 TRANSFORMERS_OFFLINE=1 PYTHONUNBUFFERED=1
exec "$PYTHON" -m benchmarks gpu "$@"
