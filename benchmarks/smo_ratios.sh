#!/usr/bin/env bash
# The measurements behind the smo engine's cost calibration (issue 21): `bench_smo.py ratios` on sample rows
# of the paper config's weight grids (Experiments 1, 2, 6), one data set per process, one at a time, niced
# (the machine is shared). Each writes benchmarks/out/smo-ratios-<data set>.json; then
#   wsvm-span calibrate-cost --base src/wsvm_span/study/config/cost_calibration.json \
#       --engine-ratios benchmarks/out/smo-ratios-*.json --output src/wsvm_span/study/config/cost_calibration.json
# Usage: benchmarks/smo_ratios.sh [small|large|l16384|all]   (default: all)
set -euo pipefail
cd "$(dirname "$0")/.."
PY=${PYTHON:-.venv/bin/python}
bench() { local tag=$1; shift; nice -n 5 "$PY" benchmarks/bench_smo.py ratios --tag "$tag" "$@"; }

small() {
  for ds in breast_cancer mushrooms waveform banana skin_nonskin splice image adult; do
    bench "$ds" --dataset "$ds" --log2-c-plus -4 2 8
  done
  for ds in parkinson_speech bank_marketing; do bench "$ds" --dataset "$ds" --chunks 0 8; done
  for d in 20 40 80; do
    for l in 128 256 512 1024; do bench "ringnorm_d${d}_l$l" --dataset "ringnorm_d${d}_l$l" --log2-c-plus 2; done
    for l in 2048 4096; do bench "ringnorm_d${d}_l$l" --dataset "ringnorm_d${d}_l$l" --log2-c-plus -4 2 8; done
  done
}

large() {  # MNIST and l = 8192: LIBSVM timed on every second model
  bench mnist_2_9 --dataset mnist_2_9 --log2-c-plus -4 2 8 --libsvm-every 2
  for ds in mnist_1_7 mnist_3_6 mnist_0_8; do bench "$ds" --dataset "$ds" --log2-c-plus 2 --libsvm-every 2; done
  bench ringnorm_d20_l8192 --dataset ringnorm_d20_l8192 --log2-c-plus -4 2 8 --libsvm-every 2
  for d in 40 80; do bench "ringnorm_d${d}_l8192" --dataset "ringnorm_d${d}_l8192" --log2-c-plus 2 --libsvm-every 2; done
}

l16384() {  # about 11 GB per process (the kernel and the CV folds' cached kernels); LIBSVM on every fourth model
  bench ringnorm_d80_l16384 --dataset ringnorm_d80_l16384 --log2-c-plus 2 --libsvm-every 4
  bench ringnorm_d20_l16384 --dataset ringnorm_d20_l16384 --log2-c-plus 2 8 -4 --libsvm-every 4
}

case "${1:-all}" in
  small) small ;; large) large ;; l16384) l16384 ;; all) small; large; l16384 ;;
  *) echo "usage: $0 [small|large|l16384|all]" >&2; exit 2 ;;
esac
