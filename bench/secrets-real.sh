#!/bin/sh
# False-flag measure of the content rules on a real tree: exports the *.go and *.md files
# of a git repository at HEAD to a temporary folder and counts the files the content rules
# flag (path, rule and line only; never a value).
#   bench/secrets-real.sh GIT_DIR            e.g. a clone of github.com/moby/moby
#   bench/secrets-real.sh --tree FOLDER      any folder (e.g. ~/.cargo/registry/src)
set -eu
cd "$(dirname "$0")/.."
if [ "${1:-}" = "--tree" ]; then
    tree=$2
else
    tree=$(mktemp -d)
    trap 'rm -rf "$tree"' EXIT
    git --git-dir="$1" archive HEAD | tar -x -C "$tree" --wildcards '*.go' '*.md' 2>/dev/null || true
fi
CURATE_SECRETS_TREE=$tree cargo test --release --lib real_tree_false_flags -- --ignored --nocapture 2>&1 |
    grep -E '^  |^real tree:'
