#!/bin/bash
# Experiment 1's MNIST tasks, one data set after the other (each finished task complete before the next starts),
# then the whole workflow (rows, tables, figures, MLflow summary)
cd "$(git rev-parse --show-toplevel)"
export PATH="$PWD/.venv/bin:$PATH"
CFG=${CFG:-reproduced/paper-exp1-mnist/reproduced-exp1-mnist.yaml}
for ds in ${DATASETS:-mnist_2_9 mnist_1_7 mnist_3_6 mnist_0_8}; do
  targets=$(for i in $(seq 0 32); do echo results/exp1/$ds/class/chunk-$i.parquet; done)
  echo "=== $ds start $(date -u +%FT%TZ)"
  /usr/bin/time -v -o ${TIMES:-/tmp}/time-$ds.txt nice -n 10 snakemake $targets --cores 1 --configfile $CFG || { echo "=== $ds FAILED $(date -u +%FT%TZ)"; exit 1; }
  echo "=== $ds done $(date -u +%FT%TZ)"
done
echo "=== all start $(date -u +%FT%TZ)"
/usr/bin/time -v -o ${TIMES:-/tmp}/time-all.txt nice -n 10 snakemake --cores 1 --configfile $CFG || { echo "=== all FAILED $(date -u +%FT%TZ)"; exit 1; }
echo "=== all done $(date -u +%FT%TZ)"
