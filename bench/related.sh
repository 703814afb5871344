#!/bin/sh
# `--related 8000` timings (issue 21): cold (--no-cache), warm (index built), fixture warm,
# each A/B against a baseline binary (bench/ab.py, alternately); outputs compared byte for byte first.
#   bench/related.sh NEW_BINARY BASE_BINARY TREE [RUNS]
# TREE: a tree from `bench/gen.py tree TREE --seed 42`. Caches go to /tmp/ccr-*.
set -eu
new=$1 base=$2 tree=$3 runs=${4:-11}
args="--role worker --change add-auth --owns src/auth/login.ts --related 8000 --max-files 0"
fixture=$(mktemp -d)/aiws-basic
cp -r "$(dirname "$0")/../fixtures/repos/aiws-basic" "$fixture"
touch -d '2020-01-01' $(find "$fixture" -type f)
sleep 1.1
for t in "$tree" "$fixture"; do
  for b in "$new" "$base"; do
    CURATE_CACHE_DIR=/tmp/ccr-check $b -C "$t" $args --no-cache --stdout 2>/dev/null >/tmp/related-out-cold
    CURATE_CACHE_DIR=/tmp/ccr-check $b -C "$t" $args --stdout 2>/dev/null >/tmp/related-out-warm1
    CURATE_CACHE_DIR=/tmp/ccr-check $b -C "$t" $args --stdout 2>/dev/null >/tmp/related-out-warm2
    cmp /tmp/related-out-cold /tmp/related-out-warm1
    cmp /tmp/related-out-cold /tmp/related-out-warm2
    md5sum </tmp/related-out-cold
  done
done
uptime
ab=$(dirname "$0")/ab.py
echo "== 100k warm"
python3 "$ab" -n "$runs" --warmup 1 --env-a CURATE_CACHE_DIR=/tmp/ccr-new --env-b CURATE_CACHE_DIR=/tmp/ccr-base \
  -- "$new" -C "$tree" $args --dry-run -q --vs "$base" -C "$tree" $args --dry-run -q
echo "== 100k cold (--no-cache)"
python3 "$ab" -n "$(( (runs + 1) / 2 ))" --warmup 1 \
  -- "$new" -C "$tree" $args --no-cache --dry-run -q --vs "$base" -C "$tree" $args --no-cache --dry-run -q
echo "== fixture warm"
python3 "$ab" -n 21 --warmup 2 --env-a CURATE_CACHE_DIR=/tmp/ccr-new --env-b CURATE_CACHE_DIR=/tmp/ccr-base \
  -- "$new" -C "$fixture" $args --dry-run -q --vs "$base" -C "$fixture" $args --dry-run -q
uptime
