#!/usr/bin/env bash
# Makes the project's Python environment (.venv/ at the repository root) from trainer/uv.lock: `npm run setup:python`.
# Idempotent (uv sync only changes what differs from the lock) and reuses uv's package cache. Needs a Python >= 3.10
# on the machine (QUARRY_PYTHON names one; default python3) and PyPI; uv itself is installed from PyPI into
# .cache/uv/ the first time. QUARRY_PY_EXTRAS chooses the engines (default: every extra that installs on this Python).
set -euo pipefail
root="$(cd "$(dirname "$0")/../.." && pwd)"
cd "$root"
UV_VERSION=0.13.9
py="${QUARRY_PYTHON:-python3}"
extras="${QUARRY_PY_EXTRAS:-trl verl skyrl ray export serve dev}"
t0=$SECONDS

if ! command -v "$py" >/dev/null 2>&1; then
  echo "setup:python: no '$py' on PATH; install Python 3.10 or newer, or set QUARRY_PYTHON to one" >&2
  exit 2
fi
if ! "$py" -c 'import sys; sys.exit(0 if sys.version_info >= (3, 10) else 1)'; then
  echo "setup:python: $("$py" --version 2>&1) is too old; quarry-trainer needs Python 3.10 or newer (QUARRY_PYTHON)" >&2
  exit 2
fi

# uv, pinned, in its own small environment (never the machine's site-packages).
uv="$root/.cache/uv/bin/uv"
if [ ! -x "$uv" ] || [ "$("$uv" --version 2>/dev/null | cut -d' ' -f2)" != "$UV_VERSION" ]; then
  echo "== setup:python: installing uv $UV_VERSION into .cache/uv"
  rm -rf "$root/.cache/uv"
  "$py" -m venv "$root/.cache/uv"
  "$root/.cache/uv/bin/python" -m pip install --quiet --disable-pip-version-check "uv==$UV_VERSION"
fi

args=()
for e in $extras; do args+=(--extra "$e"); done
echo "== setup:python: uv sync (extras: $extras) into .venv with $("$py" --version 2>&1)"
UV_PROJECT_ENVIRONMENT="$root/.venv" UV_PYTHON_DOWNLOADS=never \
  "$uv" sync --project trainer --frozen --python "$py" "${args[@]}"

"$root/.venv/bin/python" - <<'PY'
import importlib, sys
names = ["quarry_trainer", "torch", "transformers", "trl", "peft", "verl", "skyrl_gym", "ray", "onnx", "onnxruntime"]
parts = []
for name in names:
    try:
        mod = importlib.import_module(name)
        parts.append(f"{name} {getattr(mod, '__version__', '?')}")
    except Exception as e:  # report, do not fail: the extras chosen may leave some out
        parts.append(f"{name} missing ({type(e).__name__})")
print("== setup:python: " + ", ".join(parts))
print(f"== setup:python: {sys.executable}")
PY
echo "== setup:python took $((SECONDS - t0)) s; the environment is .venv/ (quarry doctor checks it)"
