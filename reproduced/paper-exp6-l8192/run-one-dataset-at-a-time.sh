#!/bin/bash
# Experiment 6 at l = 8192, one data set after the other (each finished before the next starts), then the
# whole workflow (rows, tables, figures, MLflow summary)
cd "$(git rev-parse --show-toplevel)"
export PATH="$PWD/.venv/bin:$PATH"
CFG=${CFG:-reproduced/paper-exp6-l8192/reproduced-exp6-l8192.yaml}
for d in ${DIMENSIONS:-20 40 80}; do
  ds=ringnorm_d${d}_l8192
  targets=$(for i in $(seq 0 32); do echo results/exp6/$ds/class/chunk-$i.parquet; done)
  echo "=== $ds start $(date -u +%FT%TZ)"
  /usr/bin/time -v -o ${TIMES:-/tmp}/time-$ds.txt nice -n 10 snakemake $targets --cores 1 --configfile $CFG || { echo "=== $ds FAILED $(date -u +%FT%TZ)"; exit 1; }
  echo "=== $ds done $(date -u +%FT%TZ)"
done
echo "=== all start $(date -u +%FT%TZ)"
/usr/bin/time -v -o ${TIMES:-/tmp}/time-all.txt nice -n 10 snakemake --cores 1 --configfile $CFG || { echo "=== all FAILED $(date -u +%FT%TZ)"; exit 1; }
echo "=== all done $(date -u +%FT%TZ)"
