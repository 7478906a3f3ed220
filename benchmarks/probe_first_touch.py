"""What the first touch of memory costs on this machine, and whether memory a process frees stays cheap.

Allocates and writes MB megabytes (one write per 4 KiB page, so the time is the page faults, not the writes) in
three fresh processes: one, a second at once after it, and a third after IDLE seconds. It prints the system CPU
time per MB of each. On an ordinary machine all three cost about the same, ~0.1 ms per MB (the kernel zeroes
the pages). On a VM whose memory the host backs on first use and takes back when the guest frees it
(virtio-balloon free page reporting) the first and the third cost ~2 ms per MB: memory freed a few seconds ago
is as costly as memory never used. That is the system time bench_multiclass.py's "cold" runs carry.

Usage:
  .venv/bin/python benchmarks/probe_first_touch.py [--mb 1024] [--idle 10]
"""
from __future__ import annotations

import argparse
import resource
import subprocess
import sys
import time

PAGE = 4096


def touch(mb: int) -> float:
    """System CPU seconds of allocating and writing ``mb`` MB in this process."""
    import numpy as np

    before = resource.getrusage(resource.RUSAGE_SELF).ru_stime
    a = np.empty(mb * 2**20 // 8)
    a[:: PAGE // 8] = 1.0
    return resource.getrusage(resource.RUSAGE_SELF).ru_stime - before


def in_child(mb: int) -> float:
    out = subprocess.run([sys.executable, __file__, "--child", str(mb)], check=True, capture_output=True, text=True)
    return float(out.stdout)


def main(argv=None) -> int:
    p = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    p.add_argument("--mb", type=int, default=1024)
    p.add_argument("--idle", type=float, default=10.0, help="seconds between the second and the third process")
    p.add_argument("--child", type=int, help=argparse.SUPPRESS)
    args = p.parse_args(argv)
    if args.child:
        print(touch(args.child))
        return 0
    first = in_child(args.mb)
    again = in_child(args.mb)
    time.sleep(args.idle)
    after_idle = in_child(args.mb)
    for label, s in (("first", first), ("again at once", again), (f"after {args.idle:g} s idle", after_idle)):
        print(f"{args.mb} MB touched, {label}: system CPU {s:.2f} s, {1000 * s / args.mb:.2f} ms per MB")
    return 0


if __name__ == "__main__":
    sys.exit(main())
