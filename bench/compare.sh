#!/usr/bin/env bash
# Runs a fixed set of compiles, renders and checks on the fixture repositories with the
# curate binary given as $1 and writes every output (stdout, stderr, exit code, written
# files) under $2. Two runs with two binaries can then be compared with `diff -r`:
# a refactor must leave them byte-identical.
set -u
bin=$1
out=$2
rm -rf "$out" && mkdir -p "$out"
here=$(cd "$(dirname "$0")/.." && pwd)
export NO_COLOR=1 CURATE_CACHE_DIR="$out/.cache"
n=0
run() {
  local repo=$1; shift
  n=$((n + 1))
  local work="$out/work-$n"
  cp -R "$here/fixtures/repos/$repo" "$work"
  (cd "$work" && "$bin" "$@" >"$out/$n.stdout" 2>"$out/$n.stderr"; echo $? >"$out/$n.code")
  sed -i "s|$work|[ROOT]|g" "$out/$n.stdout" "$out/$n.stderr"
  echo "$repo $*" >"$out/$n.cmd"
  (cd "$work" && find . -type f -newer "$out/$n.cmd" -o -type f -name '*-context*' | sort | while read -r f; do
    echo "== $f"; cat "$f"; done) >"$out/$n.files" 2>/dev/null
  rm -rf "$work"
}
for repo in aiws-basic aiws-dotaiws custom-contracts empty-change over-budget bad-contracts; do
  for role in worker reviewer explorer planner integrator; do
    run "$repo" --role "$role" --change add-auth
    run "$repo" --role "$role" --change add-auth --format json --explain --dry-run
  done
  run "$repo" render --role worker --change add-auth
  run "$repo" render --role worker --change add-auth --template sticky --lang zh
  run "$repo" preview --role reviewer --change add-auth --format json
  run "$repo" check
  run "$repo" contracts show --change add-auth
done
run aiws-basic --role worker --change add-auth --owns 'src/**' --reads 'docs/*.md' --max-lines 0
run aiws-basic render --role worker --change add-auth --template handoff --task-file "$here/fixtures/tasks/auth-worker.json"
echo "$n runs written to $out"
