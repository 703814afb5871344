#!/usr/bin/env bash
# A hook call on the fixture, process start to JSON out, with a warm token cache: the time a
# host waits before its sub-agent is dispatched. Prints the median of RUNS calls next to the
# target (<= 60 ms). See BENCHMARKS.md.
#
#   bench/hook.sh              (RUNS=30; CURATE=BIN to time another binary)
set -euo pipefail

HERE=$(cd "$(dirname "$0")" && pwd)
REPO=$(dirname "$HERE")
RUNS=${RUNS:-30}
if [ -z "${CURATE:-}" ]; then
  (cd "$REPO" && cargo build --release >&2)
  TARGET_DIR=$(cd "$REPO" && cargo metadata --format-version 1 --no-deps |
    python3 -c 'import json, sys; print(json.load(sys.stdin)["target_directory"])')
  CURATE=$TARGET_DIR/release/curate
fi
WORK=$(mktemp -d "${TMPDIR:-/tmp}/curate-hook-bench.XXXXXX")
trap 'rm -rf "$WORK"' EXIT
cp -R "$REPO/fixtures/repos/aiws-basic" "$WORK/fixture"
export CURATE_CACHE_DIR=$WORK/cache

python3 - "$CURATE" "$WORK/fixture" "$RUNS" <<'PY'
import json, statistics, subprocess, sys, time

curate, root, runs = sys.argv[1], sys.argv[2], int(sys.argv[3])
def call(event):
    return subprocess.run([curate, "hook", "claude-code"], input=json.dumps(event).encode(),
                          capture_output=True, check=True).stdout

pre = {"session_id": "bench", "cwd": root, "hook_event_name": "PreToolUse", "tool_name": "Agent",
       "tool_input": {"prompt": "Implement the login.\nchange: add-auth", "subagent_type": "worker"}}
start = {"session_id": "bench", "cwd": root, "hook_event_name": "SubagentStart",
         "agent_id": "a", "agent_type": "worker"}
for _ in range(3):  # warm the token cache and the page cache
    call(pre)
rows = []
for name, event, expect in [("PreToolUse (READY, compile + render)", pre, b'{"hookSpecificOutput"'),
                            ("SubagentStart (breadcrumb taken)", start, b'{"hookSpecificOutput"')]:
    times = []
    for _ in range(runs):
        if event is start:
            call(pre)
        t = time.perf_counter()
        out = call(event)
        times.append((time.perf_counter() - t) * 1000)
        assert out.startswith(expect), out[:200]
    rows.append((name, statistics.median(times), min(times), max(times)))
print(f"hook, fixture aiws-basic (worker add-auth), warm token cache, {runs} runs each")
for name, med, lo, hi in rows:
    print(f"  {name:40} median {med:6.1f} ms  (min {lo:.1f}, max {hi:.1f})  target <= 60 ms: {'met' if med <= 60 else 'MISSED'}")
PY
