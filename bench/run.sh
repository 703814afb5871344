#!/usr/bin/env bash
# Whole-process benchmark of curate (issue 7): builds the release binary, generates the data
# deterministically from a seed (bench/gen.py, Python 3 standard library, no network), then
# prints medians and peak memory next to their targets. See BENCHMARKS.md.
#
#   bench/run.sh
#
# Environment:
#   SEED=42          the generator's seed (same seed, same bytes)
#   RUNS=10          timed runs of the small commands (BULK_RUNS=5 of the bulk bundle)
#   BENCH_DIR=DIR    keep the generated data there and reuse it on the next run
#                    (default: a fresh temporary folder, removed at the end; KEEP=1 keeps it)
#   CURATE=BIN       time this binary instead of building the repository's
#   MCP_CALLS=50     timed `preview` calls to one `curate mcp` server (bench/mcp.py)
#   NO_HYPERFINE=1   use the date loop even where hyperfine is installed
#   TREE_FILES=100000 CORPUS_FILES=10200 CORPUS_MB=88   sizes of the generated data
#
# Timing uses hyperfine when it is installed (median of its runs, one warm-up), else a loop
# over `date +%s%N`. Peak memory is GNU time's "Maximum resident set size" (/usr/bin/time
# -v), else Python's getrusage of the child. A step that fails prints "n/a: <error>" and the
# script goes on. "Cold" means an empty token cache (CURATE_CACHE_DIR emptied before every
# run), not an empty OS page cache: the files are read from memory in every run.
set -uo pipefail

HERE=$(cd "$(dirname "$0")" && pwd)
REPO=$(dirname "$HERE")
SEED=${SEED:-42}
RUNS=${RUNS:-10}
BULK_RUNS=${BULK_RUNS:-5}
TREE_FILES=${TREE_FILES:-100000}
CORPUS_FILES=${CORPUS_FILES:-10200}
CORPUS_MB=${CORPUS_MB:-88}
if [ -n "${BENCH_DIR:-}" ]; then
  WORK=$BENCH_DIR
  KEEP=1
else
  WORK=$(mktemp -d "${TMPDIR:-/tmp}/curate-bench.XXXXXX")
  KEEP=${KEEP:-0}
fi
mkdir -p "$WORK"
WORK=$(cd "$WORK" && pwd)
cleanup() { if [ "$KEEP" != 1 ]; then rm -rf "$WORK"; fi; }
trap cleanup EXIT
trap 'exit 130' INT TERM

say() { printf '%s\n' "$*" >&2; }

# ---------------------------------------------------------------- build
if [ -z "${CURATE:-}" ]; then
  say "== cargo build --release"
  if ! (cd "$REPO" && cargo build --release >&2); then
    say "bench: the release build failed"
    exit 1
  fi
  TARGET_DIR=$(cd "$REPO" && cargo metadata --format-version 1 --no-deps |
    python3 -c 'import json, sys; print(json.load(sys.stdin)["target_directory"])')
  CURATE=$TARGET_DIR/release/curate
fi
[ -x "$CURATE" ] || { say "bench: no binary at $CURATE"; exit 1; }

# ---------------------------------------------------------------- data
# gen NAME ARGS...: generate $WORK/NAME once per seed and size.
gen() {
  local name=$1
  shift
  local stamp="seed=$SEED $*"
  if [ -f "$WORK/$name.done" ] && [ "$(cat "$WORK/$name.done")" = "$stamp" ]; then
    say "== reusing $WORK/$name ($(cat "$WORK/$name.summary"))"
    return 0
  fi
  say "== generating $name (seed $SEED)"
  rm -rf "${WORK:?}/$name" "$WORK/$name.done"
  if python3 "$HERE/gen.py" "$name" "$WORK/$name" --seed "$SEED" "$@" >"$WORK/$name.summary"; then
    echo "$stamp" >"$WORK/$name.done"
    say "   $(cat "$WORK/$name.summary")"
  else
    say "bench: generating $name failed"
    exit 1
  fi
}
FIXTURE_SRC=$REPO/fixtures/repos/aiws-basic
gen tree --fixture "$FIXTURE_SRC" --files "$TREE_FILES"
gen corpus --files "$CORPUS_FILES" --mb "$CORPUS_MB"
FIX=$WORK/fixture
rm -rf "$FIX"
cp -R "$FIXTURE_SRC" "$FIX"
TREE=$WORK/tree
CORPUS=$WORK/corpus
CORPUS_BYTES=$(find "$CORPUS" -type f -printf '%s\n' | awk '{s += $1} END {print s}')
CORPUS_COUNT=$(find "$CORPUS" -type f | wc -l)
LARGEST=$(find "$CORPUS" -type f -printf '%s\n' | sort -n | tail -1)
FIX_LARGEST=$(find "$TREE" -type f -printf '%s\n' | sort -n | tail -1)

# ---------------------------------------------------------------- timing
RESULTS=$WORK/results.tsv
: >"$RESULTS"
record() { printf '%s\t%s\n' "$1" "$2" >>"$RESULTS"; }

HYPERFINE=$(command -v hyperfine || true)
[ -z "${NO_HYPERFINE:-}" ] || HYPERFINE=

# median_ms KEY RUNS PREPARE CMD...: records KEY = median wall time in ms, or "n/a: <error>".
# PREPARE is a shell command run before every run ("" for none). One untimed run first
# checks the command and warms the OS page cache (and the token cache, when kept).
median_ms() {
  local key=$1 runs=$2 prepare=$3
  shift 3
  say "== $key: $*"
  [ -z "$prepare" ] || sh -c "$prepare"
  local rc=0 msg
  "$@" >/dev/null 2>"$WORK/err.txt" || rc=$?
  if [ "$rc" != 0 ]; then
    msg=$(grep -v '^\s*$' "$WORK/err.txt" | tail -1)
    record "$key" "n/a: exit $rc: ${msg:-no message}"
    say "   n/a: exit $rc: $msg"
    return 0
  fi
  local ms
  if [ -n "$HYPERFINE" ]; then
    local cmd="" a
    for a in "$@"; do cmd+="$(printf '%q' "$a") "; done
    local args=(--style none --runs "$runs" --warmup 1 --export-json "$WORK/hf.json")
    [ -z "$prepare" ] || args+=(--prepare "$prepare")
    if ! "$HYPERFINE" "${args[@]}" -- "$cmd" >/dev/null 2>"$WORK/err.txt"; then
      record "$key" "n/a: hyperfine: $(tail -1 "$WORK/err.txt")"
      return 0
    fi
    ms=$(python3 -c 'import json, sys; print("%.1f" % (json.load(open(sys.argv[1]))["results"][0]["median"] * 1000))' "$WORK/hf.json")
  else
    local times=() i t0 t1
    for ((i = 0; i < runs; i++)); do
      [ -z "$prepare" ] || sh -c "$prepare"
      t0=$(date +%s%N)
      "$@" >/dev/null 2>&1
      t1=$(date +%s%N)
      times+=($(((t1 - t0) / 1000)))
    done
    ms=$(printf '%s\n' "${times[@]}" | sort -n | awk '{a[NR] = $1} END {m = (NR % 2) ? a[(NR + 1) / 2] : (a[NR / 2] + a[NR / 2 + 1]) / 2; printf "%.1f", m / 1000}')
  fi
  record "$key" "$ms"
  say "   median $ms ms"
}

# peak_kib KEY PREPARE CMD...: records KEY = peak resident memory of one run, in KiB.
peak_kib() {
  local key=$1 prepare=$2
  shift 2
  [ -z "$prepare" ] || sh -c "$prepare"
  local kib cpu
  if /usr/bin/time -v -o "$WORK/time.txt" true >/dev/null 2>&1; then
    local rc=0
    /usr/bin/time -v -o "$WORK/time.txt" "$@" >/dev/null 2>"$WORK/err.txt" || rc=$?
    if [ "$rc" != 0 ]; then
      record "$key" "n/a: exit $rc: $(grep -v '^\s*$' "$WORK/err.txt" | tail -1)"
      return 0
    fi
    kib=$(awk -F': ' '/Maximum resident set size/ {print $2}' "$WORK/time.txt")
    cpu=$(awk -F': ' '/User time|System time/ {s += $2} END {printf "%.2f", s}' "$WORK/time.txt")
  else
    read -r kib cpu < <(python3 - "$@" <<'EOF'
import resource, subprocess, sys
r = subprocess.run(sys.argv[1:], stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)
u = resource.getrusage(resource.RUSAGE_CHILDREN)
print(u.ru_maxrss if r.returncode == 0 else "n/a:exit_%d" % r.returncode, "%.2f" % (u.ru_utime + u.ru_stime))
EOF
)
  fi
  record "$key" "$kib"
  record "cpu_$key" "$cpu"
}

LOAD_BEFORE=$(cut -d' ' -f1-3 /proc/loadavg 2>/dev/null)
CACHE_WARM=$WORK/cache-warm
CACHE_COLD=$WORK/cache-cold
rm -rf "$CACHE_WARM" "$CACHE_COLD"
BUNDLE=$WORK/bundle.md
BULK=(render -C "$CORPUS" --role worker --change bulk --template bundle
  --max-files 0 --max-lines 0 --owns '**' -o "$BUNDLE")

export CURATE_CACHE_DIR=$CACHE_WARM
median_ms compile_fixture "$RUNS" "" "$CURATE" -C "$FIX" --role worker --change add-auth --dry-run
median_ms compile_fixture_no_cache "$RUNS" "" "$CURATE" -C "$FIX" --role worker --change add-auth --dry-run --no-cache
median_ms compile_tree "$RUNS" "" "$CURATE" -C "$TREE" --role worker --change add-auth --dry-run
median_ms preview_warm "$RUNS" "" "$CURATE" preview -C "$FIX" --role worker --change add-auth
# A Claude Code hook call (PreToolUse on a worker dispatch): process start to JSON out,
# warm token cache; it compiles, writes the manifest and renders, as a host would see it.
python3 -c 'import json, sys; print(json.dumps({"session_id": "bench", "cwd": sys.argv[1], "hook_event_name": "PreToolUse", "tool_name": "Agent", "tool_input": {"prompt": "Implement the login.\nchange: add-auth", "subagent_type": "worker"}}))' "$FIX" >"$WORK/hook.json"
median_ms hook_warm "$RUNS" "" sh -c "'$CURATE' hook claude-code <'$WORK/hook.json' | grep -q updatedInput"
# The same call in a repository seen for the first time: an empty token cache.
median_ms hook_cold "$RUNS" "rm -rf '$WORK/cache-hook'" sh -c "CURATE_CACHE_DIR='$WORK/cache-hook' '$CURATE' hook claude-code <'$WORK/hook.json' | grep -q updatedInput"
# The MCP server answering its `preview` tool, warm: one process, one warm-up call, then
# MCP_CALLS timed calls (request written to answer read); bench/mcp.py prints the median
# and the server's peak memory.
say "== mcp_preview_warm: bench/mcp.py $CURATE $FIX ${MCP_CALLS:-50}"
if out=$(python3 "$HERE/mcp.py" "$CURATE" "$FIX" "${MCP_CALLS:-50}" 2>"$WORK/err.txt"); then
  read -r ms kib <<<"$out"
  record mcp_preview_warm "$ms"
  record mem_mcp "$kib"
  say "   median $ms ms, peak $kib KiB"
else
  record mcp_preview_warm "n/a: $(tail -1 "$WORK/err.txt")"
  say "   n/a: $(tail -1 "$WORK/err.txt")"
fi
median_ms cat_corpus "$BULK_RUNS" "" sh -c "find '$CORPUS' -type f -print0 | xargs -0 cat >/dev/null"
# code2prompt (crates.io, `cargo install code2prompt`), when installed: the same files.
CODE2PROMPT=${CODE2PROMPT:-$(command -v code2prompt || true)}
if [ -n "$CODE2PROMPT" ]; then
  median_ms bulk_code2prompt "$BULK_RUNS" "" "$CODE2PROMPT" "$CORPUS" -O "$WORK/c2p.md" -q --no-ignore
fi

export CURATE_CACHE_DIR=$CACHE_COLD
median_ms bulk_cold "$BULK_RUNS" "rm -rf '$CACHE_COLD'" "$CURATE" "${BULK[@]}"
BUNDLE_TRAILER=$(tail -c 200 "$BUNDLE" 2>/dev/null | grep -o 'curate:end [^-]*' | tail -1)
median_ms bulk_no_cache "$BULK_RUNS" "" "$CURATE" "${BULK[@]}" --no-cache
export CURATE_CACHE_DIR=$CACHE_WARM
median_ms bulk_warm "$BULK_RUNS" "" "$CURATE" "${BULK[@]}"

peak_kib mem_bulk_cold "rm -rf '$CACHE_COLD'" env CURATE_CACHE_DIR="$CACHE_COLD" "$CURATE" "${BULK[@]}"
peak_kib mem_bulk_warm "" "$CURATE" "${BULK[@]}"
peak_kib mem_compile_tree "" "$CURATE" -C "$TREE" --role worker --change add-auth --dry-run
peak_kib mem_preview "" "$CURATE" preview -C "$FIX" --role worker --change add-auth
peak_kib mem_compile_fixture_no_cache "" "$CURATE" -C "$FIX" --role worker --change add-auth --dry-run --no-cache

# One read a file: the repository's files are opened beneath the root with openat2, for
# reading or (O_PATH) for a stamp; the reads of one cold and one warm bundle, counted.
if command -v strace >/dev/null 2>&1; then
  for side in cold warm; do
    [ "$side" = cold ] && rm -rf "$CACHE_COLD"
    cache=$CACHE_WARM; [ "$side" = cold ] && cache=$CACHE_COLD
    if CURATE_CACHE_DIR=$cache strace -f -qq -e trace=openat2 -o "$WORK/opens.txt" "$CURATE" "${BULK[@]}" >/dev/null 2>&1; then
      record "reads_$side" "$(grep 'openat2(' "$WORK/opens.txt" | grep -vc O_PATH)"
    else
      record "reads_$side" "n/a: strace failed"
    fi
  done
else
  record reads_cold "n/a: no strace"
  record reads_warm "n/a: no strace"
fi

LOAD_AFTER=$(cut -d' ' -f1-3 /proc/loadavg 2>/dev/null)

# ---------------------------------------------------------------- report
CPU=$(awk -F': ' '/model name/ {print $2; exit}' /proc/cpuinfo 2>/dev/null)
MEM=$(awk '/MemTotal/ {printf "%.1f GiB", $2 / 1048576}' /proc/meminfo 2>/dev/null)
echo "curate benchmark · $("$CURATE" --version 2>/dev/null) · $(date -u +%Y-%m-%dT%H:%MZ)"
echo "machine: $(nproc) cores · ${CPU:-unknown CPU} · ${MEM:-unknown memory} · $(uname -sr)"
if [ -n "$HYPERFINE" ]; then TIMER="hyperfine $("$HYPERFINE" --version | awk '{print $2}')"; else TIMER="date +%s%N loop"; fi
echo "timer: $TIMER · seed $SEED · runs $RUNS (bulk $BULK_RUNS), medians"
echo "load average (1, 5, 15 min): ${LOAD_BEFORE:-?} before, ${LOAD_AFTER:-?} after (other processes on the machine slow every figure)"
cat "$WORK/tree.summary"
echo "corpus: $CORPUS_COUNT files, $CORPUS_BYTES bytes, largest $LARGEST bytes; bundle ${BUNDLE_TRAILER:-n/a}"
python3 - "$RESULTS" "$CORPUS_BYTES" "$LARGEST" "$FIX_LARGEST" "$CORPUS_COUNT" <<'EOF'
import sys

rows = dict(line.rstrip("\n").split("\t", 1) for line in open(sys.argv[1]) if "\t" in line)
corpus_bytes, largest, fix_largest = int(sys.argv[2]), int(sys.argv[3]), int(sys.argv[4])


def num(key):
    try:
        return float(rows[key])
    except (KeyError, ValueError):
        return None


def shown(key, unit="ms"):
    v = rows.get(key, "n/a: not run")
    return v if num(key) is None else f"{float(v):.1f} {unit}"


def verdict(ok):
    return "n/a" if ok is None else ("met" if ok else "NOT MET")


out = []
fix, tree = num("compile_fixture"), num("compile_tree")
out.append(("compile, fixture (worker add-auth, warm cache)", shown("compile_fixture"), "(baseline)", ""))
if num("compile_fixture_no_cache"):
    out.append(("compile, fixture, --no-cache (BPE built)", shown("compile_fixture_no_cache"), "(for reference)", ""))
ratio = tree / fix if fix and tree else None
out.append((
    "compile, 100k-file tree (warm cache)",
    shown("compile_tree") + (f" = {ratio:.2f}x fixture" if ratio else ""),
    "<= 1.2x fixture",
    verdict(None if ratio is None else ratio <= 1.2),
))
cold, warm, nocache = num("bulk_cold"), num("bulk_warm"), num("bulk_no_cache")
mbs = corpus_bytes / 1e6 / (cold / 1000) if cold else None
out.append((
    "bulk bundle, cold cache",
    shown("bulk_cold") + (f" = {mbs:.1f} MB/s" if mbs else ""),
    ">= 65 MB/s (2 cores)",
    verdict(None if mbs is None else mbs >= 65),
))
cpu = num("cpu_mem_bulk_cold")
if cpu:
    out.append(("bulk bundle, cold cache, CPU time", f"{cpu:.2f} s user+sys = {corpus_bytes / 1e6 / cpu:.1f} MB per CPU-second", "(for reference)", ""))
if nocache:
    out.append(("bulk bundle, --no-cache", shown("bulk_no_cache") + f" = {corpus_bytes / 1e6 / (nocache / 1000):.1f} MB/s", "(for reference)", ""))
share = warm / cold if cold and warm else None
out.append((
    "bulk bundle, warm cache",
    shown("bulk_warm") + (f" = {share * 100:.0f} % of cold" if share else ""),
    "<= 10 % of cold",
    verdict(None if share is None else share <= 0.10),
))
c2p = num("bulk_code2prompt")
if c2p:
    out.append((
        "code2prompt, the same corpus",
        shown("bulk_code2prompt") + (f" = {c2p / cold:.2f}x curate's cold bundle" if cold else ""),
        ">= 3x curate",
        verdict(None if not cold else c2p / cold >= 3),
    ))
cat = num("cat_corpus")
if cat:
    out.append(("cat of the corpus (find | xargs cat)", shown("cat_corpus"), "(floor, for reference)", ""))
    if warm:
        out.append(("bulk bundle, warm cache, against cat", f"{warm / cat:.1f}x cat", "<= 2x cat", verdict(warm / cat <= 2)))
pv = num("preview_warm")
files = int(sys.argv[5]) if sys.argv[5].isdigit() else None
for side in ("cold", "warm"):
    reads = num(f"reads_{side}")
    out.append((
        f"bulk bundle, {side}: files opened to be read",
        rows.get(f"reads_{side}", "n/a: not run") + (f" for {files} files" if reads is not None and files else ""),
        "one read a file",
        verdict(None if reads is None or not files else reads <= files),
    ))
out.append(("preview, fixture, warm cache", shown("preview_warm"), "<= 30 ms", verdict(None if pv is None else pv <= 30)))
hk = num("hook_warm")
out.append(("hook claude-code, fixture, warm cache", shown("hook_warm"), "<= 20 ms", verdict(None if hk is None else hk <= 20)))
hc = num("hook_cold")
out.append(("hook claude-code, fixture, cold cache", shown("hook_cold"), "<= 60 ms", verdict(None if hc is None else hc <= 60)))
mp = num("mcp_preview_warm")
out.append(("MCP preview, fixture, warm server", shown("mcp_preview_warm"), "<= 20 ms", verdict(None if mp is None else mp <= 20)))
for key, label, big in [
    ("mem_bulk_cold", "peak memory, bulk bundle cold", largest),
    ("mem_bulk_warm", "peak memory, bulk bundle warm", largest),
    ("mem_compile_tree", "peak memory, compile 100k tree", fix_largest),
    ("mem_preview", "peak memory, preview", fix_largest),
    ("mem_mcp", "peak memory, MCP server after the preview calls", fix_largest),
    ("mem_compile_fixture_no_cache", "peak memory, compile fixture --no-cache", fix_largest),
]:
    # The bulk bundle holds what it admitted for its render (up to 48 MiB): 150 MiB in all.
    bulk = key.startswith("mem_bulk")
    limit = 150 * 1024 if bulk else 64 * 1024 + big / 1024
    kib = num(key)
    out.append((
        label,
        shown(key, "KiB") if kib is None else f"{kib / 1024:.1f} MiB",
        f"<= {limit / 1024:.1f} MiB" + ("" if bulk else " (64 MiB + largest file)"),
        verdict(None if kib is None else kib <= limit),
    ))
w = [max(len(r[i]) for r in out) for i in range(3)]
print(f"{'figure':<{w[0]}}  {'measured':<{w[1]}}  {'target':<{w[2]}}  verdict")
for r in out:
    print(f"{r[0]:<{w[0]}}  {r[1]:<{w[1]}}  {r[2]:<{w[2]}}  {r[3]}".rstrip())
EOF
if [ "$KEEP" = 1 ]; then echo "data kept in $WORK"; fi
