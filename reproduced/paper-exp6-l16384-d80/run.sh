#!/bin/bash
# Experiment 6 at l = 16384, d = 80 (33 jobs): the whole workflow (rows, tables, figures, MLflow summary), one job
# at a time, niced
cd "$(git rev-parse --show-toplevel)"
export PATH="$PWD/.venv/bin:$PATH"
echo "=== start $(date -u +%FT%TZ)"
/usr/bin/time -v -o ${TIMES:-/tmp}/time-all.txt nice -n 10 snakemake --cores ${CORES:-1} --configfile reproduced/paper-exp6-l16384-d80/reproduced-exp6-l16384-d80.yaml || { echo "=== FAILED $(date -u +%FT%TZ)"; exit 1; }
echo "=== done $(date -u +%FT%TZ)"
