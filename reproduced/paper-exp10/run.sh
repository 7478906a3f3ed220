#!/bin/bash
# Experiment 10 at paper size: the whole workflow, one job at a time, niced (jobs of 0.6 GiB, seconds each)
cd "$(git rev-parse --show-toplevel)"
export PATH="$PWD/.venv/bin:$PATH"
/usr/bin/time -v -o ${TIMES:-/tmp}/time-all.txt nice -n 10 snakemake --cores ${CORES:-1} --configfile reproduced/paper-exp10/reproduced-exp10.yaml
