#!/bin/bash
# Experiments 1-5 without MNIST (reproduced/paper-exp1-exp2/reproduced.yaml, 298 jobs) run again to commit their rows:
# the whole workflow (rows, tables, figures, MLflow summary), one job at a time, niced
cd "$(git rev-parse --show-toplevel)"
export PATH="$PWD/.venv/bin:$PATH"
echo "=== start $(date -u +%FT%TZ)"
/usr/bin/time -v -o ${TIMES:-/tmp}/time-all.txt nice -n 10 snakemake --cores ${CORES:-1} --configfile reproduced/paper-exp1-exp2/reproduced.yaml || { echo "=== FAILED $(date -u +%FT%TZ)"; exit 1; }
echo "=== done $(date -u +%FT%TZ)"
