#!/bin/bash
# Experiment 6 at d = 80, l <= 4096 (reproduced/paper-exp6-d80/reproduced-exp6-d20.yaml, 198 jobs) run again by smo
# (issue 43: one trainer at every l, as l = 8192 and 16384 ran): the whole workflow (rows, tables, figures, MLflow
# summary), one job at a time, at nice 0 beside a clean-clone test run on the other core
cd "$(git rev-parse --show-toplevel)"
export PATH="$PWD/.venv/bin:$PATH"
echo "=== start $(date -u +%FT%TZ)"
/usr/bin/time -v -o ${TIMES:-/tmp}/time-d80.txt snakemake --cores ${CORES:-1} --configfile reproduced/paper-exp6-d80/reproduced-exp6-d20.yaml || { echo "=== FAILED $(date -u +%FT%TZ)"; exit 1; }
echo "=== done $(date -u +%FT%TZ)"
