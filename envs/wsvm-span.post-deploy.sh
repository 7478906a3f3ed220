#!/usr/bin/env bash
# Installs this package and its pinned dependencies into the conda env of envs/wsvm-span.yaml
# (Snakemake runs this in the new env after creating it; see the comment there).
set -euo pipefail
root="${WSVM_PROJECT_ROOT:-$PWD}"
if [ ! -f "$root/requirements.lock" ] || [ ! -f "$root/pyproject.toml" ]; then
    echo "wsvm-span post-deploy: $root is not the project root; set WSVM_PROJECT_ROOT" >&2
    exit 1
fi
python -m pip install --disable-pip-version-check -r "$root/requirements.lock"
python -m pip install --disable-pip-version-check --no-deps -e "$root"
