#!/bin/bash
# Experiment 6 at d = 20, l <= 4096 (reproduced/paper-exp6-d20/reproduced-exp6-d20.yaml, 198 jobs) run again to commit its rows:
# the whole workflow (rows, tables, figures, MLflow summary), one job at a time, niced
cd "$(git rev-parse --show-toplevel)"
export PATH="$PWD/.venv/bin:$PATH"
echo "=== start $(date -u +%FT%TZ)"
/usr/bin/time -v -o ${TIMES:-/tmp}/time-all.txt nice -n 10 snakemake --cores ${CORES:-1} --configfile reproduced/paper-exp6-d20/reproduced-exp6-d20.yaml || { echo "=== FAILED $(date -u +%FT%TZ)"; exit 1; }
echo "=== done $(date -u +%FT%TZ)"
