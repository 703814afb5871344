#!/bin/sh
# `--related 8000` with `curate watch` against the same binary without it (issue 21's warm
# figure): outputs compared first, then bench/ab.py alternately, warm with nothing changed
# and warm after one file written before each run.
#   bench/watch.sh BINARY TREE [RUNS]
# TREE: a tree from `bench/gen.py tree TREE --seed 42`. Caches go to /tmp/ccw-{watch,alone}.
set -eu
bin=$1 tree=$2 runs=${3:-11}
args="--role worker --change add-auth --owns src/auth/login.ts --related 8000 --max-files 0"
ab=$(dirname "$0")/ab.py
edited=$tree/src/gen/edited-by-bench.ts
printf 'export const benchEdit = 0;\n' >"$edited"
# The run without a watcher, warm.
CURATE_CACHE_DIR=/tmp/ccw-alone "$bin" -C "$tree" $args --stdout >/tmp/watch-alone.out 2>/dev/null
CURATE_CACHE_DIR=/tmp/ccw-alone "$bin" -C "$tree" $args --stdout >/tmp/watch-alone.out 2>/dev/null
CURATE_CACHE_DIR=/tmp/ccw-watch "$bin" -C "$tree" watch 2>/tmp/watch.log &
pid=$!
trap 'kill $pid 2>/dev/null' EXIT
while ! ls /tmp/ccw-watch/watch-*.sock >/dev/null 2>&1; do sleep 0.05; done
echo "== the watcher's first run (stamps everything, adds the watches)"
/usr/bin/time -o /tmp/watch-first.time -f "%e s wall" env CURATE_CACHE_DIR=/tmp/ccw-watch \
  "$bin" -C "$tree" $args --stdout >/tmp/watch-watched.out 2>/dev/null
cat /tmp/watch-first.time
cmp /tmp/watch-alone.out /tmp/watch-watched.out
CURATE_CACHE_DIR=/tmp/ccw-watch "$bin" -C "$tree" $args --stdout >/tmp/watch-watched.out 2>/dev/null
cmp /tmp/watch-alone.out /tmp/watch-watched.out
md5sum </tmp/watch-watched.out
uptime
# The watcher's own CPU (user + system ticks), which the A figures do not count.
ticks() { awk '{print $14 + $15}' /proc/$pid/stat; }
hz=$(getconf CLK_TCK)
per_question() {
  awk -v a="$1" -v b="$2" -v hz="$hz" -v n="$runs" \
    'BEGIN { printf "the watcher'"'"'s own cpu: %.3f s a question\n", (b - a) / hz / (n + 1) }'
}
echo "== warm, nothing changed: with the watcher (A) and without (B)"
t0=$(ticks)
python3 "$ab" -n "$runs" --warmup 1 --env-a CURATE_CACHE_DIR=/tmp/ccw-watch --env-b CURATE_CACHE_DIR=/tmp/ccw-alone \
  -- "$bin" -C "$tree" $args --dry-run -q --vs "$bin" -C "$tree" $args --dry-run -q
t1=$(ticks)
per_question "$t0" "$t1"
echo "== warm, one file written before each run: with the watcher (A) and without (B)"
edit="printf 'export const benchEdit = %s;\n' \$(date +%N) > $edited"
python3 "$ab" -n "$runs" --warmup 1 --env-a CURATE_CACHE_DIR=/tmp/ccw-watch --env-b CURATE_CACHE_DIR=/tmp/ccw-alone \
  -- sh -c "$edit && exec $bin -C $tree $args --dry-run -q" \
  --vs sh -c "$edit && exec $bin -C $tree $args --dry-run -q"
t2=$(ticks)
per_question "$t1" "$t2"
ps -o rss= -p $pid | awk '{printf "the watcher: %.0f MiB resident\n", $1 / 1024}'
rm -f "$edited"
uptime
