#!/usr/bin/env python3
"""Time shell commands in turn, one run of each per round, and print each one's mean, median,
minimum, maximum and standard deviation in milliseconds.

Runs of one command back to back see the machine as the previous run of the same command left
it (its page cache, its unflushed writes); taken in turn, each command's runs see the others'
aftermath alike. Usage:

    python3 tests/bench/alternate.py [-n ROUNDS] [-w WARMUP] [--sync] CMD [CMD ...]

--sync runs `sync` (untimed) before each timed run. Example (the 1,000-file classic join of
tests/bench/many.sh against ncrcat):

    D=/tmp/many_bench/nc3_1000
    python3 tests/bench/alternate.py -n 20 \\
        "rm -f /tmp/o.nc; target/release/nccopy-rs $D/*.nc /tmp/o.nc" \\
        "ncrcat -O $D/*.nc /tmp/n.nc"
"""
import argparse
import statistics
import subprocess
import time


def main():
    p = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    p.add_argument("-n", type=int, default=10, help="rounds (default 10)")
    p.add_argument("-w", type=int, default=1, help="untimed rounds first (default 1)")
    p.add_argument("--sync", action="store_true", help="sync before each timed run")
    p.add_argument("cmds", nargs="+")
    a = p.parse_args()
    times = {c: [] for c in a.cmds}
    for r in range(a.w + a.n):
        for c in a.cmds:
            if a.sync:
                subprocess.run(["sync"], check=True)
            t = time.perf_counter()
            subprocess.run(["sh", "-c", c], check=True, stdout=subprocess.DEVNULL)
            if r >= a.w:
                times[c].append((time.perf_counter() - t) * 1000)
    for c, v in times.items():
        sd = statistics.stdev(v) if len(v) > 1 else 0.0
        print(f"mean {statistics.mean(v):8.1f}  median {statistics.median(v):8.1f}  "
              f"min {min(v):8.1f}  max {max(v):8.1f}  sd {sd:7.1f}  ms  {c[:60]}")


if __name__ == "__main__":
    main()
