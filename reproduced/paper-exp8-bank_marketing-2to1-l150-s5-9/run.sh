#!/bin/bash
# Experiment 8 at paper size, part bank_marketing-2to1-l150-s5-9 (bank_marketing at 2:1; reproduced/paper-exp8-bank_marketing-2to1-l150-s5-9/reproduced-exp8-bank_marketing-2to1-l150-s5-9.yaml):
# the whole workflow (rows, tables, figures, MLflow summary), one job at a time beside another run, niced
cd "$(git rev-parse --show-toplevel)"
export PATH="$PWD/.venv/bin:$PATH"
echo "=== start $(date -u +%FT%TZ)"
/usr/bin/time -v -o ${TIMES:-/tmp}/time-all.txt nice -n 10 snakemake --cores ${CORES:-1} --configfile reproduced/paper-exp8-bank_marketing-2to1-l150-s5-9/reproduced-exp8-bank_marketing-2to1-l150-s5-9.yaml || { echo "=== FAILED $(date -u +%FT%TZ)"; exit 1; }
echo "=== done $(date -u +%FT%TZ)"
