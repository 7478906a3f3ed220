#!/bin/bash
# Experiment 8 at paper size, part q (w_mixture at 2:1, training fraction 0.25, seeds 5-9; 5 jobs):
# the whole workflow (rows, tables, figures, MLflow summary), two jobs at a time, niced
cd "$(git rev-parse --show-toplevel)"
export PATH="$PWD/.venv/bin:$PATH"
echo "=== start $(date -u +%FT%TZ)"
/usr/bin/time -v -o ${TIMES:-/tmp}/time-all.txt nice -n 10 snakemake --cores ${CORES:-1} --configfile reproduced/paper-exp8-q/reproduced-exp8-q.yaml || { echo "=== FAILED $(date -u +%FT%TZ)"; exit 1; }
echo "=== done $(date -u +%FT%TZ)"
