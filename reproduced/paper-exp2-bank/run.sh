#!/bin/bash
# Experiment 2's bank part at paper size over seeds 0-9: the whole workflow, one job at a time, niced; the
# balanced draw's 10 jobs first (targets), then the rest (the stratified draw, rows, tables, figures, summary)
cd "$(git rev-parse --show-toplevel)"
export PATH="$PWD/.venv/bin:$PATH"
CONFIG=reproduced/paper-exp2-bank/reproduced-exp2-bank.yaml
BALANCED=$(for k in 0 1 2 3 4 5 6 7 8 9; do echo results/exp2/bank_marketing/sigmoid/chunk-$k.parquet; done)
/usr/bin/time -v -o ${TIMES:-/tmp}/time-balanced.txt nice -n 10 snakemake $BALANCED --cores ${CORES:-1} --configfile $CONFIG
/usr/bin/time -v -o ${TIMES:-/tmp}/time-all.txt nice -n 10 snakemake --cores ${CORES:-1} --configfile $CONFIG
