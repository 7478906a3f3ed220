#!/bin/bash
# Experiment 7 at paper size: the whole workflow (4 jobs, one per size n; rows, table, figure, MLflow summary),
# one job at a time, niced
cd "$(git rev-parse --show-toplevel)"
export PATH="$PWD/.venv/bin:$PATH"
echo "=== start $(date -u +%FT%TZ)"
/usr/bin/time -v -o ${TIMES:-/tmp}/time-all.txt nice -n 10 snakemake --cores ${CORES:-1} --configfile reproduced/paper-exp7/reproduced-exp7.yaml || { echo "=== FAILED $(date -u +%FT%TZ)"; exit 1; }
echo "=== done $(date -u +%FT%TZ)"
