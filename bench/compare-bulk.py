#!/usr/bin/env python3
"""The bulk bundle of two curate binaries, run alternately on the same corpus: cold (empty
token cache) then warm, ROUNDS times; prints the medians. Alternating puts both under the
same machine conditions, which a shared machine does not keep for long.

    python3 bench/compare-bulk.py OLD_BIN NEW_BIN CORPUS [ROUNDS]

CORPUS is a folder such as the one `bench/run.sh` generates (`BENCH_DIR=… bench/run.sh`
keeps it in `$BENCH_DIR/corpus`). Python 3 standard library only.
"""
import os
import shutil
import statistics
import subprocess
import sys
import tempfile
import time


def main():
    if len(sys.argv) < 4:
        sys.exit(__doc__)
    old, new, corpus = sys.argv[1:4]
    rounds = int(sys.argv[4]) if len(sys.argv) > 4 else 3
    work = tempfile.mkdtemp(prefix="curate-compare-")
    try:
        out = os.path.join(work, "bundle.md")
        args = ["render", "-C", corpus, "--role", "worker", "--change", "bulk",
                "--template", "bundle", "--max-files", "0", "--max-lines", "0",
                "--owns", "**", "-o", out]
        bins = {"old": old, "new": new}
        times = {k: {"cold": [], "warm": []} for k in bins}
        for _ in range(rounds):
            for name, binary in bins.items():
                cache = os.path.join(work, "cache-" + name)
                shutil.rmtree(cache, ignore_errors=True)
                env = dict(os.environ, CURATE_CACHE_DIR=cache)
                for kind in ("cold", "warm"):
                    t = time.perf_counter()
                    subprocess.run([binary] + args, env=env, check=True, capture_output=True)
                    times[name][kind].append(time.perf_counter() - t)
        for name, binary in bins.items():
            row = [f"{name} ({binary})"]
            for kind in ("cold", "warm"):
                xs = times[name][kind]
                row.append(f"{kind} median {statistics.median(xs):.2f} s "
                           f"[{', '.join(f'{x:.2f}' for x in xs)}]")
            print("  ".join(row))
        for kind in ("cold", "warm"):
            ratio = statistics.median(times["new"][kind]) / statistics.median(times["old"][kind])
            print(f"{kind}: new / old = {ratio:.2f}")
    finally:
        shutil.rmtree(work, ignore_errors=True)


if __name__ == "__main__":
    main()
