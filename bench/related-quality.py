#!/usr/bin/env python3
"""Quality of `curate --related` against aider's repo map, on real multi-file commits.

    python3 bench/related-quality.py [options] GIT_DIR [GIT_DIR ...]

Each GIT_DIR is a git repository (a bare one is fine, e.g. a `fetch`ed mirror). For each
repository the newest COMMITS commits (no merges) that touch 2-6 source files (.py .go .rs .ts
.js .java .c .cpp .cs .rb .svelte .tsx .jsx .vue), at least two of them modified
(status M: present at the parent, so findable), are taken. The parent's tree is exported
(`git archive PARENT | tar -x`), `git init -q` in it. Each modified source file in turn (or
only the first, `--owned first`) is the owned file; the score of a query is the share of the
commit's other touched source files present at the parent that the tool names within its
budget. curate runs cold (`--no-cache`) every time; aider gets a fresh RepoMap each query
and its tag cache (`.aider.tags.cache.v*` in the tree) is deleted before the tree's first query
(cold), then kept (warm), as aider keeps it in a session.

    curate -C TREE --role worker --change q --owns OWNED --related N --max-files 0
           --max-lines 0 --format json --dry-run --no-cache --encoding cl100k_base
                                                            -> entries[kind=related]
    aider  RepoMap(map_tokens=N, root=TREE, main_model=Model("gpt-4o-mini"),
           io=InputOutput()).get_repo_map(chat_files=[OWNED], other_files=[every other
           file of the tree])                                       -> the files named in it

aider-chat is pip-installed into VENV (default /tmp/aider-venv) if it is not there; it calls
no model (no API key is set; offline, its model-info download fails and it falls back to
litellm's local copy) and counts tokens with tiktoken's cl100k_base (litellm's default, whose
BPE file litellm bundles), so curate counts with cl100k_base too. Prints the table; `--json
FILE` keeps every query. Python 3.11 standard library only (aider runs in its venv).
"""
import argparse
import hashlib
import importlib.util
import json
import os
import shutil
import statistics
import subprocess
import sys
import time

EXT = (".py", ".go", ".rs", ".ts", ".js", ".java", ".c", ".cpp", ".cs", ".rb",
       # a front end's files: relay's touched files are mostly Svelte (curate parses none
       # of them, but a commit that touches them is still a query from its other files)
       ".svelte", ".tsx", ".jsx", ".vue")
HERE = os.path.dirname(os.path.abspath(__file__))


def heldout(repo, commit):
    """Held out as bench/task-quality.py holds its queries out: sha1(OWNER/NAME + the commit's
    full hex id) in hex ends in 0-4 (5 of 16)."""
    return hashlib.sha1((repo + commit).encode()).hexdigest()[-1] in "01234"


def load_tree_class():
    """bench/task-quality.py's Tree: one exported tree per repository moved from commit to
    commit by the diff, so unchanged files keep their mtime and aider's tag cache stays warm."""
    spec = importlib.util.spec_from_file_location("task_quality",
                                                  os.path.join(HERE, "task-quality.py"))
    mod = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(mod)
    return mod.Tree

AIDER_WORKER = r'''
import json, os, shutil, sys, time
os.environ["LITELLM_LOCAL_MODEL_COST_MAP"] = "True"
for k in list(os.environ):
    if k.endswith("_API_KEY"):
        del os.environ[k]
from aider.io import InputOutput
from aider.models import Model
from aider.repomap import RepoMap
model = Model("gpt-4o-mini")
io = InputOutput(pretty=False, yes=False, fancy_input=False)
print(json.dumps({"ready": True}), flush=True)
for line in sys.stdin:
    q = json.loads(line)
    root = q["root"]
    if q["cold"]:
        for v in (3, 4):
            shutil.rmtree(os.path.join(root, ".aider.tags.cache.v%d" % v), ignore_errors=True)
    t = time.perf_counter()
    rm = RepoMap(map_tokens=q["tokens"], root=root, main_model=model, io=io, refresh="always")
    text = rm.get_repo_map([os.path.join(root, q["owned"])],
                           [os.path.join(root, f) for f in q["others"]]) or ""
    dt = time.perf_counter() - t
    print(json.dumps({"text": text, "seconds": dt, "cold": q["cold"], "tokens": model.token_count(text)}), flush=True)
'''


def git(gitdir, *args, **kw):
    return subprocess.run(["git", "--git-dir", gitdir, *args], check=True,
                          capture_output=True, **kw).stdout


def pick_commits(gitdir, count):
    try:
        out = git(gitdir, "log", "--no-merges", "-M", "--format=@%H %P", "--name-status",
                  "-n", "5000", text=True)
    except subprocess.CalledProcessError:
        # A fetched mirror may lack its largest blobs, which rename detection reads
        # (Trellis): a rename is then a deletion and an addition, neither of them modified.
        out = git(gitdir, "log", "--no-merges", "--no-renames", "--format=@%H %P",
                  "--name-status", "-n", "5000", text=True)
    rows, cur = [], None
    for line in out.splitlines():
        if line.startswith("@"):
            h, *parents = line[1:].split()
            cur = (h, parents, [])
            rows.append(cur)
        elif line.strip() and cur:
            cur[2].append(line.split("\t"))
    picked = []
    for sha, parents, files in rows:
        if len(parents) != 1:
            continue
        src = [f for f in files if f[-1].endswith(EXT)]
        modified = [f[1] for f in src if f[0] == "M"]
        if 2 <= len(src) <= 6 and len(modified) >= 2:
            picked.append((sha, parents[0], modified))
        if len(picked) == count:
            break
    return picked


def export(gitdir, parent, dest):
    if os.path.isdir(dest):
        return
    os.makedirs(dest + ".tmp", exist_ok=True)
    arch = subprocess.Popen(["git", "--git-dir", gitdir, "archive", parent],
                            stdout=subprocess.PIPE)
    subprocess.run(["tar", "-x", "-C", dest + ".tmp"], stdin=arch.stdout, check=True)
    arch.wait()
    subprocess.run(["git", "init", "-q", dest + ".tmp"], check=True)
    os.rename(dest + ".tmp", dest)


def tree_files(root):
    out = []
    for d, dirs, files in os.walk(root):
        dirs[:] = [x for x in dirs if x != ".git" and not x.startswith(".aider.tags")]
        for f in files:
            p = os.path.join(d, f)
            if os.path.isfile(p) and not os.path.islink(p):
                out.append(os.path.relpath(p, root))
    return sorted(out)


def run_curate(binary, root, owned, tokens):
    cmd = [binary, "-C", root, "--role", "worker", "--change", "q", "--owns", owned,
           "--related", str(tokens), "--max-files", "0", "--max-lines", "0",
           "--format", "json", "--dry-run", "--no-cache", "--encoding", "cl100k_base"]
    t = time.perf_counter()
    p = subprocess.run(cmd, capture_output=True, text=True)
    dt = time.perf_counter() - t
    try:
        report = json.loads(p.stdout)
    except json.JSONDecodeError:
        raise SystemExit("curate gave no JSON (rc %d): %s\n%s" % (p.returncode, " ".join(cmd),
                                                                   p.stderr[-2000:]))
    files = [e["file"] for e in report.get("entries", []) if e.get("kind") == "related"]
    return files, dt


def aider_files(text, known):
    named = []
    for line in text.splitlines():
        s = line.rstrip()
        if not s or s[0] in "│⋮ \t":
            continue
        if s.endswith(":"):
            s = s[:-1]
        if s in known and s not in named:
            named.append(s)
    return named


class Aider:
    def __init__(self, venv):
        py = os.path.join(venv, "bin", "python")
        if not os.path.exists(os.path.join(venv, "bin", "aider")):
            subprocess.run([sys.executable, "-m", "venv", venv], check=True)
            subprocess.run([py, "-m", "pip", "install", "-q", "aider-chat"], check=True)
        env = {k: v for k, v in os.environ.items() if not k.endswith("_API_KEY")}
        self.p = subprocess.Popen([py, "-c", AIDER_WORKER], stdin=subprocess.PIPE,
                                  stdout=subprocess.PIPE, text=True, env=env)
        self._read()
        self.version = subprocess.run([py, "-c", "import aider; print(aider.__version__)"],
                                      capture_output=True, text=True).stdout.strip()

    def _read(self):
        while True:
            line = self.p.stdout.readline()
            if not line:
                raise SystemExit("the aider worker stopped")
            if line.startswith("{"):
                return json.loads(line)

    def query(self, root, owned, others, tokens, cold):
        self.p.stdin.write(json.dumps({"root": root, "owned": owned, "others": others,
                                       "tokens": tokens, "cold": cold}) + "\n")
        self.p.stdin.flush()
        return self._read()


def main():
    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    ap.add_argument("repos", nargs="+")
    ap.add_argument("--curate", default=os.path.join(HERE, "..", "target", "release", "curate"))
    ap.add_argument("--venv", default="/tmp/aider-venv")
    ap.add_argument("--work", default="/tmp/q")
    ap.add_argument("--commits", type=int, default=25)
    ap.add_argument("--skip", type=int, default=0,
                    help="leave out the first SKIP picked commits (a held-out set: --commits 30 --skip 15)")
    ap.add_argument("--owned", choices=["first", "all"], default="first")
    ap.add_argument("--budgets", default="2000,4000,8000")
    ap.add_argument("--split", choices=["tuned", "heldout", "all"], default="all",
                    help="only the tuned or the held-out commits (sha1(OWNER/NAME + commit))")
    ap.add_argument("--moving-tree", action="store_true",
                    help="one tree a repository moved from parent to parent (task-quality.py's "
                         "Tree): aider's tag cache stays warm across commits (moby)")
    ap.add_argument("--json")
    ap.add_argument("--no-aider", action="store_true")
    ap.add_argument("--no-curate", action="store_true", help="aider only (then --aider-from)")
    ap.add_argument("--aider-from", help="take aider's results from an earlier --json run")
    ap.add_argument("--table-from", help="print the table of an earlier --json run (curate's "
                    "side; aider's from it or from --aider-from) and stop")
    args = ap.parse_args()
    if args.table_from:
        return table_from(args.table_from, args.aider_from, args.split)
    budgets = [int(b) for b in args.budgets.split(",")]
    curate = os.path.abspath(args.curate)
    aider = None if args.no_aider or args.aider_from else Aider(args.venv)
    earlier = {}
    if args.aider_from:
        with open(args.aider_from) as f:
            old = json.load(f)
        earlier = {(q["commit"], q["owned"]): q["aider"] for q in old["queries"]}
        aider_version = old["aider"]
    else:
        aider_version = aider.version if aider else None
    queries, warm = [], set()
    for gitdir in args.repos:
        gitdir = os.path.abspath(gitdir)
        name = os.path.basename(os.path.dirname(gitdir)) if gitdir.endswith("/repo") \
            else os.path.basename(gitdir.rstrip("/"))
        owner_name = name.replace("+", "/", 1)
        moving = load_tree_class()(gitdir, os.path.join(args.work, "%s-moving" % name)) \
            if args.moving_tree else None
        for sha, parent, modified in pick_commits(gitdir, args.commits)[args.skip:]:
            split = "heldout" if heldout(owner_name, sha) else "tuned"
            if args.split != "all" and split != args.split:
                continue
            if moving:
                moving.goto(parent)
                root = moving.root
            else:
                root = os.path.join(args.work, "%s-%s" % (name, parent[:10]))
                export(gitdir, parent, root)
            files = tree_files(root)
            known = set(files)
            touched = [f for f in modified if f in known]
            owners = touched[:1] if args.owned == "first" else touched
            for owned in owners:
                targets = [f for f in touched if f != owned]
                if not targets:
                    continue
                q = {"repo": name, "commit": sha, "split": split, "owned": owned,
                     "targets": targets, "curate": {}, "aider": {}}
                for n in budgets:
                    if not args.no_curate:
                        got, dt = run_curate(curate, root, owned, n)
                        q["curate"][n] = {"files": got, "seconds": dt,
                                          "hits": sum(t in got for t in targets)}
                    if earlier:
                        q["aider"][n] = earlier[(sha, owned)][str(n)]
                    elif aider:
                        r = aider.query(root, owned, [f for f in files if f != owned], n,
                                        root not in warm)
                        warm.add(root)
                        got = aider_files(r["text"], known - {owned})
                        q["aider"][n] = {"files": got, "seconds": r["seconds"],
                                         "cold": r["cold"],
                                         "tokens": r["tokens"],
                                         "hits": sum(t in got for t in targets)}
                queries.append(q)
                print("%s %s %-40s %s" % (name, sha[:8], owned[:40], "  ".join(
                    "%d: c %s/%d a %s" % (n, q["curate"].get(n, {}).get("hits", "-"), len(targets),
                                          q["aider"].get(n, {}).get("hits", "-"))
                    for n in budgets)), file=sys.stderr, flush=True)
    if args.json:
        with open(args.json, "w") as f:
            json.dump({"budgets": budgets, "aider": aider_version,
                       "queries": queries}, f, indent=1)
    if not args.no_curate:
        table(queries, budgets, bool(aider or earlier))


def table_from(path, aider_path, split):
    """The table of an earlier run, aider's side joined from AIDER_PATH when given."""
    with open(path) as f:
        run = json.load(f)
    budgets = run["budgets"]
    queries = [q for q in run["queries"] if split == "all" or q.get("split") == split]
    if aider_path:
        with open(aider_path) as f:
            old = {(q["commit"], q["owned"]): q["aider"] for q in json.load(f)["queries"]}
        queries = [q for q in queries if (q["commit"], q["owned"]) in old]
        for q in queries:
            q["aider"] = {int(n): v for n, v in old[(q["commit"], q["owned"])].items()}
    for q in queries:
        q["curate"] = {int(n): v for n, v in q["curate"].items()}
        q["aider"] = {int(n): v for n, v in q.get("aider", {}).items()}
    with_aider = all(q["aider"] for q in queries)
    table(queries, budgets, with_aider)


def table(queries, budgets, with_aider):
    tools = ["curate"] + (["aider"] if with_aider else [])
    head = ["repo", "commits", "queries"]
    for t in tools:
        head += ["%s@%dk" % (t, n // 1000) for n in budgets]
    head += ["curate s (cold)"] + (["aider s (cold)", "aider s (warm)"] if with_aider else [])
    print("| " + " | ".join(head) + " |")
    print("|" + "---|" * len(head))
    groups = {}
    for q in queries:
        groups.setdefault(q["repo"], []).append(q)
    groups["all"] = queries
    med = lambda xs: "%.2f" % statistics.median(xs) if xs else "-"
    for name, qs in groups.items():
        row = [name, str(len({q["commit"] for q in qs})), str(len(qs))]
        for t in tools:
            for n in budgets:
                row.append("%.0f%%" % (100 * statistics.mean(
                    q[t][n]["hits"] / len(q["targets"]) for q in qs)))
        row.append(med([q["curate"][n]["seconds"] for q in qs for n in budgets]))
        if with_aider:
            for cold in (True, False):
                row.append(med([q["aider"][n]["seconds"] for q in qs for n in budgets
                                if q["aider"][n]["cold"] == cold]))
        print("| " + " | ".join(row) + " |")


if __name__ == "__main__":
    main()
