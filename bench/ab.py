#!/usr/bin/env python3
"""Time command A against command B, alternately (A B A B ...), whole process each run.

    bench/ab.py [-n RUNS] [--warmup W] [--env-a K=V] [--env-b K=V] -- A ... --vs B ...

Prints, for each command, the median (min-max) of wall seconds, CPU seconds (user + system
of the child) and peak RSS (the child's maximum resident set size), then the median of the
paired ratios A/B: pairing keeps the ratio meaningful when the machine's speed drifts.
Standard library only; stdout and stderr of the commands are discarded.
"""
import argparse
import os
import statistics
import subprocess
import sys
import time


def run(cmd, env):
    start = time.monotonic()
    proc = subprocess.Popen(cmd, stdin=subprocess.DEVNULL, stdout=subprocess.DEVNULL,
                            stderr=subprocess.DEVNULL, env=env)
    _, status, usage = os.wait4(proc.pid, 0)
    wall = time.monotonic() - start
    code = os.waitstatus_to_exitcode(status)
    return wall, usage.ru_utime + usage.ru_stime, usage.ru_maxrss / 1024, code


def env_with(pairs):
    env = dict(os.environ)
    for pair in pairs:
        key, _, value = pair.partition("=")
        env[key] = value
    return env


def main():
    argv = sys.argv[1:]
    if "--" not in argv or "--vs" not in argv:
        sys.exit(__doc__)
    opts, rest = argv[: argv.index("--")], argv[argv.index("--") + 1:]
    a, b = rest[: rest.index("--vs")], rest[rest.index("--vs") + 1:]
    p = argparse.ArgumentParser()
    p.add_argument("-n", type=int, default=5)
    p.add_argument("--warmup", type=int, default=1)
    p.add_argument("--env-a", action="append", default=[])
    p.add_argument("--env-b", action="append", default=[])
    o = p.parse_args(opts)
    env_a, env_b = env_with(o.env_a), env_with(o.env_b)
    for _ in range(o.warmup):
        run(a, env_a)
        run(b, env_b)
    rows = {"A": [], "B": []}
    for _ in range(o.n):
        rows["A"].append(run(a, env_a))
        rows["B"].append(run(b, env_b))
    for name in "AB":
        r = rows[name]
        codes = sorted({x[3] for x in r})
        for i, what in enumerate(["wall s", "cpu s", "peak MiB"]):
            v = [x[i] for x in r]
            print(f"{name} {what:9} {statistics.median(v):9.3f}  ({min(v):.3f}-{max(v):.3f})"
                  + (f"  exit {codes}" if i == 0 else ""))
    for i, what in enumerate(["wall", "cpu"]):
        ratios = [x[i] / y[i] for x, y in zip(rows["A"], rows["B"]) if y[i] > 0]
        print(f"A/B {what:5} {statistics.median(ratios):.3f}  ({min(ratios):.3f}-{max(ratios):.3f})")


if __name__ == "__main__":
    main()
