#!/bin/bash
# Experiment 9 at paper size, part a (ringnorm_d20 at l = 4096 ... 131072 and mnist_2_9; 7 jobs):
# the whole workflow (rows, tables, figures, MLflow summary), one job at a time, niced
cd "$(git rev-parse --show-toplevel)"
export PATH="$PWD/.venv/bin:$PATH"
echo "=== start $(date -u +%FT%TZ)"
/usr/bin/time -v -o ${TIMES:-/tmp}/time-all.txt nice -n 10 snakemake --cores ${CORES:-1} --configfile reproduced/paper-exp9-a/reproduced-exp9-a.yaml || { echo "=== FAILED $(date -u +%FT%TZ)"; exit 1; }
echo "=== done $(date -u +%FT%TZ)"
