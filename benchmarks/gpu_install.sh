#!/usr/bin/env bash
# Install the offline wheel bundle (built by benchmarks/gpu_wheels.py) and the project on the GPU image,
# which reaches no package index. Prints the image's versions first, so a failed install still says why.
# Usage, from the repository root: bash benchmarks/gpu_install.sh [BUNDLE_DIR]   (default .gpu-wheels)
# bitsandbytes is not installed: it travels as a folder, BUNDLE_DIR/bnb, which the caller puts on PYTHONPATH.
# Exit status: 0 installed; 1 the project or a required package could not be installed.
set -u
W=${1:-.gpu-wheels}
PY=${PYTHON:-python}
export PIP_BREAK_SYSTEM_PACKAGES=1 PIP_DISABLE_PIP_VERSION_CHECK=1 PIP_NO_INPUT=1 PIP_ROOT_USER_ACTION=ignore

echo "== image"
"$PY" - <<'EOF'
import importlib.metadata as md, platform, sys
print("python", sys.version.split()[0], platform.platform())
for name in ("torch", "transformers", "peft", "accelerate", "pyarrow", "pandas", "numpy", "huggingface_hub",
             "fsspec", "typer", "rich", "pyyaml", "setuptools", "pip", "trl", "datasets", "bitsandbytes"):
    try:
        print(f"{name} {md.version(name)}")
    except md.PackageNotFoundError:
        print(f"{name} MISSING")
EOF
nvidia-smi --query-gpu=name,memory.total,memory.used,driver_version --format=csv,noheader 2>&1 | head -2
df -h /tmp . 2>/dev/null | tail -2

echo "== bundle"
ls "$W/wheels" | wc -l
if "$PY" -m pip install --no-index --find-links "$W/wheels" -r "$W/requirements.txt"; then
  echo "bundle installed with dependency resolution"
else
  echo "resolution failed (the image's versions differ from the bundle's); installing the bundle without it"
  skip='/(pandas|python_dateutil|tzdata|six|typer|rich|click|shellingham|annotated_doc|pygments|markdown_it_py|mdurl|pydantic|pydantic_core|annotated_types|typing_inspection)-'
  wheels=$(ls "$W"/wheels/*.whl | grep -Ev "$skip")
  "$PY" -c "import pandas" 2>/dev/null || wheels="$wheels $(ls "$W"/wheels/*.whl | grep -E '/(pandas|python_dateutil|tzdata|six)-')"
  "$PY" -c "import typer, rich" 2>/dev/null || wheels="$wheels $(ls "$W"/wheels/*.whl | grep -E "$skip" | grep -Ev '/(pandas|python_dateutil|tzdata|six)-')"
  # shellcheck disable=SC2086
  "$PY" -m pip install --no-index --no-deps $wheels || exit 1
fi

echo "== project"
if ! "$PY" -m pip install --no-index --no-deps --no-build-isolation . >/tmp/evaluator-install.log 2>&1; then
  tail -5 /tmp/evaluator-install.log
  # Fallback without a build backend: each top-level package folder as evaluator.<folder> (a namespace package).
  mkdir -p /tmp/evpkg/evaluator
  for d in */; do
    [ -f "$d/__init__.py" ] && ln -sfn "$PWD/${d%/}" "/tmp/evpkg/evaluator/${d%/}"
  done
  echo "pip could not build the project; linked it under /tmp/evpkg (put that on PYTHONPATH)"
fi
"$PY" -m pip check 2>&1 | head -12
echo "== imports"
"$PY" -c "import trl, datasets, bitsandbytes, evaluator.training.grpo as g; print('trl', trl.__version__, 'datasets', datasets.__version__, 'bitsandbytes', bitsandbytes.__version__, bitsandbytes.__file__)" || exit 1
