#!/usr/bin/env python3
"""Selecting from the task's own words: `curate --task-text` against BM25 and aider's repo map.

    python3 bench/task-quality.py build [--out DIR] --commits GIT_DIR ... --trellis GIT_DIR ...
    python3 bench/task-quality.py run [options] GIT_DIR [GIT_DIR ...]
    python3 bench/task-quality.py run --dry [GIT_DIR ...]        (print the query set only)

`build` makes the query set from bare git mirrors (e.g. `fetch`ed ones) and writes it into
bench/task-data/ (commits.jsonl, trellis.jsonl); `run` reads it back and needs only the
mirrors (each GIT_DIR is `/work/.mirror/OWNER+NAME/repo`, or `OWNER/NAME=PATH`). Nothing is
fetched. Two kinds of query:

  commit   the task text is a real commit's message (subject + body, trailers such as
           Signed-off-by dropped); the gold set is the files it modified (status M, text,
           2-8 of them), the tree is its parent.
  trellis  the task text is a Trellis task's prd.md + info.md + design.md + implement.md +
           research/**/*.md; the gold set is the files its authors listed in implement.jsonl
           and check.jsonl that exist in the tree (never the task's own folder); the tree is
           the commit that last wrote one of the two lists, with the task's own folder (every
           folder of that name under .trellis/tasks) moved out while the query runs.

Held out: a query is held out when sha1(REPO + ID) (REPO "owner/name", ID the commit's full
hex id or the task folder's name) in hex ends in 0-4 (5 of 16, ~31%); the rest is "tuned".

Per query, at each budget N (tokens, cl100k_base):
  bm25    BM25 (k1 1.2, b 0.75) over every text file of the tree, document = its path + its
          content; files taken in score order, each whole-file token count charged, a file
          that does not fit skipped, until the ranking ends.
  aider   RepoMap(map_tokens=N, map_mul_no_files=1).get_repo_map([], every file,
          mentioned_fnames=Coder.get_file_mentions(text) | get_ident_filename_matches(...),
          mentioned_idents=Coder.get_ident_mentions(text)) (aider's own functions, called on a
          stand-in Coder) -> the files named in the map.
  curate  curate -C TREE --role worker --change q --task-text FILE --task-tokens N
          --max-files 0 --max-lines 0 --format json --dry-run --no-cache
          --encoding cl100k_base  -> entries of kind "referenced" or "related".
Score = recall: the share of the gold files selected. Python 3.11 standard library only;
aider (and tiktoken, for the token counts) run in VENV (default /tmp/aider-venv, made with
`pip install aider-chat` if missing), offline, no API key.
"""
import argparse
import hashlib
import json
import math
import os
import re
import select
import shutil
import statistics
import subprocess
import sys
import time

HERE = os.path.dirname(os.path.abspath(__file__))
DATA = os.path.join(HERE, "task-data")
BUDGETS = "2000,4000,8000"
TRAILER = re.compile(r"^(Signed-off-by|Co-authored-by|Reviewed-by|Acked-by|Tested-by|Reported-by|"
                     r"Suggested-by|Helped-by|Change-Id|Cc):", re.I)
TEXT_NAMES = ("prd.md", "info.md", "design.md", "implement.md")
MAX_TEXT_FILE = 1 << 20          # bigger files are not indexed by BM25 (counted as not text)

# ---------------------------------------------------------------------------------- git, trees


def git(gitdir, *args, text=True):
    return subprocess.run(["git", "--git-dir", gitdir, *args], check=True,
                          capture_output=True, text=text).stdout


def repo_name(gitdir):
    d = os.path.abspath(gitdir).rstrip("/")
    base = os.path.basename(os.path.dirname(d)) if d.endswith("/repo") else os.path.basename(d)
    return base.replace("+", "/", 1)


def parse_mirrors(args):
    out = {}
    for a in args:
        if "=" in a:
            name, path = a.split("=", 1)
        else:
            name, path = repo_name(a), a
        out[name] = os.path.abspath(path)
    return out


def heldout(repo, ident):
    return hashlib.sha1((repo + ident).encode()).hexdigest()[-1] in "01234"


class Tree:
    """One exported tree per repository, moved from commit to commit by applying the diff, so
    files that do not change keep their mtime (aider's tag cache stays warm, as in a session)."""

    def __init__(self, gitdir, root):
        self.gitdir, self.root = gitdir, root
        self.state = root + ".commit"
        self.away, self.missing = root + ".hidden", 0
        self.commit = open(self.state).read().strip() if os.path.exists(self.state) and \
            os.path.isdir(root) else None
        if os.path.isdir(self.away):          # an earlier run stopped with folders moved out
            shutil.rmtree(self.away)
            self.commit = None

    def goto(self, commit):
        if self.commit == commit:
            return
        if self.commit is None:
            shutil.rmtree(self.root, ignore_errors=True)
            os.makedirs(self.root)
            self._extract(commit, None)
            subprocess.run(["git", "init", "-q", self.root], check=True)
            with open(os.path.join(self.root, ".git", "info", "exclude"), "a") as f:
                f.write(".aider*\n")
        else:
            out = git(self.gitdir, "diff", "--name-status", "--no-renames", "-z", self.commit,
                      commit)
            parts = out.split("\0")
            changed = []
            for i in range(0, len(parts) - 1, 2):
                status, path = parts[i], parts[i + 1]
                full = os.path.join(self.root, path)
                if os.path.islink(full) or os.path.isfile(full):
                    os.unlink(full)
                elif os.path.isdir(full):
                    shutil.rmtree(full)
                if status[0] != "D":
                    changed.append(path)
            for i in range(0, len(changed), 400):
                self._extract(commit, changed[i:i + 400])
        with open(self.state, "w") as f:
            f.write(commit)
        self.commit = commit

    def _extract(self, commit, paths):
        """Write COMMIT's files (or only PATHS) under the root, as `git archive | tar -x` would;
        a blob the mirror lacks (a fetched mirror may leave out its largest files) is skipped."""
        cmd = ["git", "--git-dir", self.gitdir, "--literal-pathspecs", "ls-tree", "-r", "-z",
               "--full-tree", commit]
        out = subprocess.run(cmd + (["--"] + paths if paths else []), check=True,
                             capture_output=True).stdout
        entries = []
        for rec in out.split(b"\0"):
            if not rec:
                continue
            meta, path = rec.split(b"\t", 1)
            mode, kind, oid = meta.split()
            if kind == b"blob":
                entries.append((mode, oid, os.fsdecode(path)))
        cat = subprocess.Popen(["git", "--git-dir", self.gitdir, "cat-file", "--batch"],
                               stdin=subprocess.PIPE, stdout=subprocess.PIPE)
        for mode, oid, path in entries:
            cat.stdin.write(oid + b"\n")
            cat.stdin.flush()
            head = cat.stdout.readline().split()
            if len(head) < 3:                     # "<oid> missing"
                self.missing += 1
                continue
            data = cat.stdout.read(int(head[2]))
            cat.stdout.read(1)
            full = os.path.join(self.root, path)
            os.makedirs(os.path.dirname(full), exist_ok=True)
            if mode == b"120000":
                os.symlink(os.fsdecode(data), full)
                continue
            with open(full, "wb") as f:
                f.write(data)
            if mode == b"100755":
                os.chmod(full, 0o755)
        cat.stdin.close()
        cat.wait()

    def hide(self, dirs):
        away, moved = self.away, []
        for d in dirs:
            src = os.path.join(self.root, d)
            if os.path.isdir(src):
                dst = os.path.join(away, "%d" % len(moved))
                os.makedirs(away, exist_ok=True)
                os.rename(src, dst)
                moved.append((dst, src))
        return moved

    def unhide(self, moved):
        for dst, src in moved:
            os.rename(dst, src)
        if os.path.isdir(self.away):
            os.rmdir(self.away)


def tree_files(root):
    out = []
    for d, dirs, files in os.walk(root):
        dirs[:] = [x for x in dirs if x != ".git" and not x.startswith(".aider.tags")]
        for f in files:
            p = os.path.join(d, f)
            if os.path.isfile(p) and not os.path.islink(p):
                out.append(os.path.relpath(p, root))
    return sorted(out)

# ---------------------------------------------------------------------------------- build


def clean_message(msg):
    lines = [l for l in msg.rstrip().splitlines() if not TRAILER.match(l.strip())]
    return "\n".join(lines).strip() + "\n"


def pick_commits(gitdir, count, scan=6000):
    out = git(gitdir, "log", "--no-merges", "-M100%", "--format=@%H %P", "--name-status",
              "-n", str(scan), "HEAD")
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
        if len(parents) != 1 or len(files) > 16:
            continue
        modified = [f[1] for f in files if f[0] == "M"]
        if not 2 <= len(modified) <= 8:
            continue
        binary = set()
        for l in git(gitdir, "diff", "--numstat", "--no-renames", parents[0], sha, "--",
                     *modified).splitlines():
            a, b, p = l.split("\t", 2)
            if a == "-" and b == "-":
                binary.add(p)
        modified = [m for m in modified if m not in binary]
        if not 2 <= len(modified) <= 8:
            continue
        msg = clean_message(git(gitdir, "log", "-1", "--format=%B", sha))
        if len(msg.split()) < 8:
            continue
        date = git(gitdir, "log", "-1", "--format=%cI", sha).strip()
        picked.append({"source": "commit", "id": sha, "tree": parents[0], "date": date,
                       "text": msg, "gold": modified, "touched": len(files)})
        if len(picked) == count:
            break
    return picked


def list_rows(blob_text):
    rows = []
    for line in blob_text.splitlines():
        line = line.strip()
        if not line.startswith("{"):
            continue
        try:
            r = json.loads(line)
        except json.JSONDecodeError:
            continue
        f = r.get("file") if isinstance(r, dict) else None
        if isinstance(f, str) and f.strip():
            f = f.strip()
            while f.startswith("./"):
                f = f[2:]
            rows.append(f)
    return rows


def trellis_tasks(gitdir):
    out = git(gitdir, "log", "-M100%", "--format=@%H %cI", "--name-status", "HEAD", "--",
              ".trellis/tasks")
    last = {}        # task name -> (commit, date, task dir); git log is newest first
    commit = date = None
    for line in out.splitlines():
        if line.startswith("@"):
            commit, date = line[1:].split()
            continue
        if not line.strip():
            continue
        f = line.split("\t")
        status, path = f[0], f[-1]
        if not path.endswith(("/implement.jsonl", "/check.jsonl")):
            continue
        if status[0] in "AMC" or (status[0] == "R" and status != "R100"):
            d = os.path.dirname(path)
            last.setdefault(os.path.basename(d), (commit, date, d))
    tasks = []
    for name, (commit, date, d) in sorted(last.items()):
        files = git(gitdir, "ls-tree", "-r", "--name-only", "-z", commit).split("\0")
        known = set(files)
        if d + "/prd.md" not in known:
            continue
        rows, lists = [], {}
        for lst in ("implement.jsonl", "check.jsonl"):
            p = d + "/" + lst
            if p in known:
                r = list_rows(git(gitdir, "show", "%s:%s" % (commit, p)))
                lists[lst] = len(r)
                rows += r
        own = re.compile(r"(^|/)\.trellis/tasks/(.*/)?%s/" % re.escape(name))
        gold, dirs, missing = [], 0, 0
        for r in rows:
            if r in gold or own.search(r) or r.startswith(d + "/"):
                continue
            if r in known:
                gold.append(r)
            elif any(k.startswith(r.rstrip("/") + "/") for k in known):
                dirs += 1
            else:
                missing += 1
        if not gold:
            continue
        text_files = [d + "/" + n for n in TEXT_NAMES if d + "/" + n in known]
        text_files += sorted(k for k in known if k.startswith(d + "/research/")
                             and k.endswith(".md"))
        hide = sorted({k.rsplit("/" + name + "/", 1)[0] + "/" + name for k in known
                       if k.startswith(".trellis/tasks/") and "/" + name + "/" in k})
        tasks.append({"source": "trellis", "id": name, "tree": commit, "date": date,
                      "task_dir": d, "text_files": text_files, "hide": hide, "gold": gold,
                      "lists": lists, "dir_rows": dirs, "missing_rows": missing})
    return tasks


def task_text(gitdir, q):
    if q.get("text") is not None:
        return q["text"]
    parts = []
    for p in q["text_files"]:
        parts.append("# %s\n\n%s" % (os.path.basename(p) if "/research/" not in p else
                                     "research/" + p.split("/research/", 1)[1],
                                     git(gitdir, "show", "%s:%s" % (q["tree"], p))))
    return "\n\n".join(parts)


def build(args):
    os.makedirs(args.out, exist_ok=True)
    for kind, dirs in (("commits", args.commits or []), ("trellis", args.trellis or [])):
        if not dirs:
            continue
        rows = []
        for name, gitdir in parse_mirrors(dirs).items():
            qs = pick_commits(gitdir, args.per_repo) if kind == "commits" else \
                trellis_tasks(gitdir)
            for q in qs:
                q["repo"] = name
                q["split"] = "heldout" if heldout(name, q["id"]) else "tuned"
                if kind == "trellis":
                    t = task_text(gitdir, q)
                    q["text_chars"] = len(t)
                    q["text_sha1"] = hashlib.sha1(t.encode()).hexdigest()
                rows.append(q)
            print("%s %s: %d queries" % (kind, name, len(qs)), file=sys.stderr)
        path = os.path.join(args.out, kind + ".jsonl")
        with open(path, "w") as f:
            for q in rows:
                f.write(json.dumps(q, ensure_ascii=False, sort_keys=True) + "\n")
        print("wrote %s (%d queries)" % (path, len(rows)), file=sys.stderr)

# ---------------------------------------------------------------------------------- BM25

WORD = re.compile(r"\w+")
PART = re.compile(r"[A-Z]+(?=[A-Z][a-z])|[A-Z]?[a-z]+|[A-Z]+|[0-9]+")


def word_terms(w):
    """A word's terms: the word lower-cased, and, if it splits, its snake_case / camelCase /
    digit parts lower-cased."""
    lw = w.lower()
    parts = [p.lower() for s in w.split("_") for p in PART.findall(s)]
    if len(parts) > 1 or (parts and parts[0] != lw):
        return [lw] + parts
    return [lw]


def terms(text):
    out = []
    for w in WORD.findall(text):
        out += word_terms(w)
    return out


class Bm25:
    K1, B = 1.2, 0.75

    def __init__(self, vocab, counter):
        self.vocab = vocab            # every term of every query of this repository
        self.docs = {}                # path -> (mtime_ns, size, tf{term in vocab}, length) | None
        self.memo = {}
        self.counter = counter

    def _doc(self, root, path):
        full = os.path.join(root, path)
        st = os.stat(full)
        c = self.docs.get(path)
        if c is not None and c[0] == st.st_mtime_ns and c[1] == st.st_size:
            return c[2]
        entry = None
        if st.st_size <= MAX_TEXT_FILE:
            with open(full, "rb") as f:
                data = f.read()
            if b"\0" not in data[:8192]:
                text = path + "\n" + data.decode("utf-8", "replace")
                tf, length = {}, 0
                counts = {}
                for w in WORD.findall(text):
                    counts[w] = counts.get(w, 0) + 1
                for w, n in counts.items():
                    ts = self.memo.get(w)
                    if ts is None:
                        all_t = word_terms(w)
                        ts = self.memo[w] = (len(all_t), [t for t in all_t if t in self.vocab])
                    length += ts[0] * n
                    for t in ts[1]:
                        tf[t] = tf.get(t, 0) + n
                entry = (tf, length)
        self.docs[path] = (st.st_mtime_ns, st.st_size, entry)
        return entry

    def select(self, root, files, text, budgets):
        docs = {}
        for p in files:
            e = self._doc(root, p)
            if e is not None:
                docs[p] = e
        qterms = set(terms(text))
        n = len(docs) or 1
        avg = sum(e[1] for e in docs.values()) / n or 1
        df = {}
        for tf, _ in docs.values():
            for t in tf:
                if t in qterms:
                    df[t] = df.get(t, 0) + 1
        idf = {t: math.log(1 + (n - d + 0.5) / (d + 0.5)) for t, d in df.items()}
        scored = []
        for p, (tf, length) in docs.items():
            s = 0.0
            norm = self.K1 * (1 - self.B + self.B * length / avg)
            for t, c in tf.items():
                if t in idf:
                    s += idf[t] * c * (self.K1 + 1) / (c + norm)
            if s > 0:
                scored.append((-s, p))
        scored.sort()
        ranked = [p for _, p in scored]
        toks = self.counter.count(root, ranked)
        out = {}
        for b in budgets:
            left, got = b, []
            for p in ranked:
                if toks[p] <= left:
                    got.append(p)
                    left -= toks[p]
            out[b] = got
        return out

# ---------------------------------------------------------------------------------- workers

COUNT_WORKER = r'''
import importlib.util, json, os, sys
spec = importlib.util.find_spec("litellm")
os.environ.setdefault("TIKTOKEN_CACHE_DIR", os.path.join(os.path.dirname(spec.origin),
                      "litellm_core_utils", "tokenizers"))
import tiktoken
enc = tiktoken.get_encoding("cl100k_base")
print(json.dumps({"ready": True}), flush=True)
for line in sys.stdin:
    out = []
    for p in json.loads(line):
        with open(p, "rb") as f:
            out.append(len(enc.encode_ordinary(f.read().decode("utf-8", "replace"))))
    print(json.dumps(out), flush=True)
'''

AIDER_WORKER = r'''
import json, os, shutil, sys, time
os.environ["LITELLM_LOCAL_MODEL_COST_MAP"] = "True"
for k in list(os.environ):
    if k.endswith("_API_KEY"):
        del os.environ[k]
from aider.io import InputOutput
from aider.models import Model
from aider.repomap import RepoMap
from aider.coders.base_coder import Coder
model = Model("gpt-4o-mini")
io = InputOutput(pretty=False, yes=False, fancy_input=False)

class Chat:
    """Stands in for a Coder with no file in the chat whose repository tracks FILES."""
    def __init__(self, files):
        self.files, self.abs_read_only_fnames = files, set()
    def get_all_relative_files(self):
        return sorted(set(self.files))
    def get_inchat_relative_files(self):
        return []
    def get_addable_relative_files(self):
        return Coder.get_addable_relative_files(self)
    def get_rel_fname(self, fname):
        return fname

print(json.dumps({"ready": True}), flush=True)
for line in sys.stdin:
    q = json.loads(line)
    root = q["root"]
    if q["cold"]:
        for v in (3, 4):
            shutil.rmtree(os.path.join(root, ".aider.tags.cache.v%d" % v), ignore_errors=True)
    t = time.perf_counter()
    chat = Chat(q["files"])
    text = q["text"] + "\n"                       # Coder.get_cur_message_text
    fnames = Coder.get_file_mentions(chat, text)
    idents = Coder.get_ident_mentions(chat, text)
    fnames.update(Coder.get_ident_filename_matches(chat, idents))
    abs_files = [os.path.join(root, f) for f in q["files"]]
    out = {}
    for n in q["budgets"]:
        t = time.perf_counter()
        rm = RepoMap(map_tokens=n, root=root, main_model=model, io=io, refresh="always",
                     map_mul_no_files=1)
        m = rm.get_repo_map(set(), abs_files, mentioned_fnames=fnames, mentioned_idents=idents)
        if not m:                                 # Coder.get_repo_map's last fallback
            m = rm.get_repo_map(set(), abs_files)
        m = m or ""
        out[n] = {"text": m, "seconds": time.perf_counter() - t, "tokens": model.token_count(m)}
    print(json.dumps({"maps": out, "mentioned": sorted(fnames), "cold": q["cold"]}), flush=True)
'''


class Worker:
    def __init__(self, venv, source):
        self.venv, self.source, self.p = venv, source, None

    def python(self):
        py = os.path.join(self.venv, "bin", "python")
        if not os.path.exists(os.path.join(self.venv, "bin", "aider")):
            subprocess.run([sys.executable, "-m", "venv", self.venv], check=True)
            subprocess.run([py, "-m", "pip", "install", "-q", "aider-chat"], check=True)
        return py

    def start(self):
        env = {k: v for k, v in os.environ.items() if not k.endswith("_API_KEY")}
        self.p = subprocess.Popen([self.python(), "-c", self.source], stdin=subprocess.PIPE,
                                  stdout=subprocess.PIPE, text=True, env=env)
        self.read(None)

    def read(self, timeout):
        end = None if timeout is None else time.monotonic() + timeout
        while True:
            if end is not None:
                left = end - time.monotonic()
                if left <= 0 or not select.select([self.p.stdout], [], [], left)[0]:
                    self.stop()
                    return None
            line = self.p.stdout.readline()
            if not line:
                raise SystemExit("a worker in %s stopped" % self.venv)
            if line.startswith(("{", "[")):
                return json.loads(line)

    def ask(self, obj, timeout=None):
        if self.p is None:
            self.start()
        self.p.stdin.write(json.dumps(obj) + "\n")
        self.p.stdin.flush()
        return self.read(timeout)

    def stop(self):
        if self.p is not None:
            self.p.kill()
            self.p.wait()
            self.p = None


class Counter:
    """cl100k_base token counts of whole files (tiktoken in VENV), or, without it, the
    documented approximation ceil(UTF-8 bytes / 4)."""

    def __init__(self, venv, approx):
        self.w = None if approx else Worker(venv, COUNT_WORKER)
        self.cache = {}

    def count(self, root, paths):
        need, out = [], {}
        for p in paths:
            st = os.stat(os.path.join(root, p))
            key = (p, st.st_mtime_ns, st.st_size)
            if key in self.cache:
                out[p] = self.cache[key]
            else:
                need.append((p, key, st.st_size))
        if self.w is None:
            got = [(size + 3) // 4 for _, _, size in need]
        else:
            got = []
            for i in range(0, len(need), 200):
                got += self.w.ask([os.path.join(root, p) for p, _, _ in need[i:i + 200]])
        for (p, key, _), n in zip(need, got):
            self.cache[key] = out[p] = n
        return out


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


class Curate:
    def __init__(self, binary, work):
        self.binary, self.work, self.ok = binary, work, os.path.exists(binary)
        if not self.ok:
            print("curate: no binary at %s" % binary, file=sys.stderr)

    def select(self, root, text, n):
        path = os.path.join(self.work, "task-text.md")
        with open(path, "w") as f:
            f.write(text)
        cmd = [self.binary, "-C", root, "--role", "worker", "--change", "q", "--task-text", path,
               "--task-tokens", str(n), "--max-files", "0", "--max-lines", "0", "--format",
               "json", "--dry-run", "--no-cache", "--encoding", "cl100k_base"]
        t = time.perf_counter()
        p = subprocess.run(cmd, capture_output=True, text=True)
        dt = time.perf_counter() - t
        if p.returncode == 2 and ("--task-text" in p.stderr or "--task-tokens" in p.stderr) \
                and "unexpected argument" in p.stderr:
            print("curate: --task-text not supported by this binary", file=sys.stderr)
            self.ok = False
            return None
        try:
            report = json.loads(p.stdout)
        except json.JSONDecodeError:
            return {"error": "rc %d: %s" % (p.returncode, p.stderr.strip()[-300:]), "files": [],
                    "seconds": dt}
        rows = report.get("entries", report.get("kept", []))
        files = [e["file"] for e in rows if e.get("kind") in ("referenced", "related")]
        return {"files": files, "seconds": dt, "status": report.get("status"),
                "kinds": {k: sum(e.get("kind") == k for e in rows)
                          for k in ("referenced", "related")}}

# ---------------------------------------------------------------------------------- run


def load(sources):
    qs = []
    for kind in sources:
        path = os.path.join(DATA, kind + ".jsonl")
        if os.path.exists(path):
            with open(path) as f:
                qs += [json.loads(l) for l in f if l.strip()]
    return qs


def group_name(q):
    return "%s %s" % (q["source"], q["repo"])


def run(args):
    budgets = [int(b) for b in args.budgets.split(",")]
    sources = ["commits" if s.startswith("commit") else s for s in args.sources.split(",")]
    queries = [q for q in load(sources) if args.split == "all" or q["split"] == args.split]
    mirrors = parse_mirrors(args.repos)
    if args.only_repos:
        keep = set(args.only_repos.split(","))
        queries = [q for q in queries if q["repo"] in keep]
    if args.limit:
        seen, kept = {}, []
        for q in queries:
            k = (q["source"], q["repo"], q["split"])
            seen[k] = seen.get(k, 0) + 1
            if seen[k] <= args.limit:
                kept.append(q)
        queries = kept
    if args.dry:
        dry(queries, mirrors, args.verbose)
        return
    missing = sorted({q["repo"] for q in queries} - set(mirrors))
    if missing:
        print("no mirror given for %s: their queries are left out" % ", ".join(missing),
              file=sys.stderr)
    queries = [q for q in queries if q["repo"] in mirrors]
    os.makedirs(args.work, exist_ok=True)
    counter = Counter(args.venv, args.approx_tokens)
    aider = None if args.no_aider else Worker(args.venv, AIDER_WORKER)
    curate = None if args.no_curate else Curate(os.path.abspath(args.curate), args.work)
    results, started = [], time.time()
    by_repo = {}
    for q in queries:
        by_repo.setdefault(q["repo"], []).append(q)
    def pack_size(repo):          # the smallest repositories first, so the big ones go last
        d = os.path.join(mirrors[repo], "objects", "pack")
        return sum(os.path.getsize(os.path.join(d, f)) for f in os.listdir(d)) \
            if os.path.isdir(d) else 0
    for repo in sorted(by_repo, key=pack_size):
        qs, gitdir = by_repo[repo], mirrors[repo]
        tree = Tree(gitdir, os.path.join(args.work, repo.replace("/", "+")))
        vocab = set()
        texts = {}
        for q in qs:
            texts[id(q)] = task_text(gitdir, q)
            vocab.update(terms(texts[id(q)]))
        bm25 = Bm25(vocab, counter)
        cold = True
        qs.sort(key=lambda q: (q["date"], q["id"]))
        for q in qs:
            if args.max_minutes and time.time() - started > args.max_minutes * 60:
                print("time is up (--max-minutes): the remaining queries are left out",
                      file=sys.stderr)
                break
            tree.goto(q["tree"])
            moved = tree.hide(q.get("hide", []))
            try:
                r = run_query(q, texts[id(q)], tree.root, budgets, bm25, aider, curate, cold,
                              args)
            finally:
                tree.unhide(moved)
            if r is not None:
                cold = cold and aider is None     # the cache is kept after the first try
                results.append(r)
                save(args, budgets, results)    # after every query: a stopped run keeps its part
    if aider:
        aider.stop()
    if counter.w:
        counter.w.stop()
    save(args, budgets, results)
    table(results, budgets)


def save(args, budgets, results):
    if args.json:
        with open(args.json + ".tmp", "w") as f:
            json.dump({"budgets": budgets, "queries": results,
                       "tokens": "approx bytes/4" if args.approx_tokens else "cl100k_base"},
                      f, indent=1)
        os.replace(args.json + ".tmp", args.json)


def run_query(q, text, root, budgets, bm25, aider, curate, cold, args):
    files = tree_files(root)
    known = set(files)
    gold = [g for g in q["gold"] if g in known]
    if not gold:
        return None
    r = {k: q[k] for k in ("source", "repo", "id", "split", "tree")}
    r["gold"] = gold
    r["text_chars"] = len(text)
    score = lambda got: sum(g in got for g in gold)
    if not args.no_bm25:
        t = time.perf_counter()
        sel = bm25.select(root, files, text, budgets)
        dt = time.perf_counter() - t
        r["bm25"] = {n: {"files": sel[n], "hits": score(sel[n])} for n in budgets}
        r["bm25_seconds"] = dt
    if aider is not None:
        a = aider.ask({"root": root, "files": files, "text": text, "budgets": budgets,
                       "cold": cold}, timeout=args.aider_timeout)
        if a is None:
            r["aider_timeout"] = args.aider_timeout
        else:
            r["aider"] = {}
            r["aider_mentioned"] = a["mentioned"]
            for n in budgets:
                m = a["maps"][str(n)]
                got = aider_files(m["text"], known)
                r["aider"][n] = {"files": got, "hits": score(got), "seconds": m["seconds"],
                                 "tokens": m["tokens"]}
    if curate is not None and curate.ok:
        c = {}
        for n in budgets:
            got = curate.select(root, text, n)
            if got is None:
                break
            got["hits"] = score(got["files"])
            c[n] = got
        if c:
            r["curate"] = c
    print("%-8s %-22s %-12s %-7s gold %2d  %s" % (
        q["source"], q["repo"][:22], q["id"][:12], q["split"], len(gold), "  ".join(
            "%s %s" % (t[0], "/".join(str(r[t][n]["hits"]) for n in budgets) if t in r else "-")
            for t in ("bm25", "aider", "curate"))), file=sys.stderr, flush=True)
    return r


def dry(queries, mirrors, verbose):
    groups = {}
    for q in queries:
        groups.setdefault(group_name(q), []).append(q)
    print("| source | repository | queries | tuned | held out | gold files (mean) | text chars (median) |")
    print("|---|---|---|---|---|---|---|")
    for name, qs in sorted(groups.items()):
        src, repo = name.split(" ", 1)
        chars = [len(q["text"]) if q.get("text") is not None else q.get("text_chars", 0)
                 for q in qs]
        print("| %s | %s | %d | %d | %d | %.1f | %d |" % (
            src, repo, len(qs), sum(q["split"] == "tuned" for q in qs),
            sum(q["split"] == "heldout" for q in qs),
            statistics.mean(len(q["gold"]) for q in qs), statistics.median(chars)))
    print("| all | | %d | %d | %d | | |" % (len(queries),
                                          sum(q["split"] == "tuned" for q in queries),
                                          sum(q["split"] == "heldout" for q in queries)))
    if verbose:
        for q in queries:
            print("\n## %s %s %s (%s) tree %s" % (q["source"], q["repo"], q["id"], q["split"],
                                                  q["tree"][:12]))
            if q["repo"] in mirrors:
                print(task_text(mirrors[q["repo"]], q)[:verbose if verbose > 1 else 600])
            elif q.get("text"):
                print(q["text"][:600])
            print("gold: " + ", ".join(q["gold"]))


def report(args):
    """Merge the tools' results of earlier --json runs (same queries) and print the table."""
    merged, budgets = {}, None
    for path in args.files:
        with open(path) as f:
            d = json.load(f)
        budgets = d["budgets"]
        for q in d["queries"]:
            k = (q["source"], q["repo"], q["id"])
            m = merged.setdefault(k, dict(q))
            for t in ("bm25", "aider", "curate"):
                if t in q:
                    m[t] = {int(n): v for n, v in q[t].items()}
    results = list(merged.values())
    if args.split != "all":
        results = [r for r in results if r["split"] == args.split]
    if args.require:
        results = [r for r in results if all(t in r for t in args.require.split(","))]
    if args.json:
        with open(args.json, "w") as f:
            json.dump({"budgets": budgets, "queries": results}, f, indent=1)
    table(results, budgets)


def table(results, budgets):
    tools = [t for t in ("bm25", "aider", "curate") if any(t in r for r in results)]
    head = ["source", "repository", "split", "queries", "gold"]
    for t in tools:
        head += ["%s@%dk" % (t, n // 1000) for n in budgets]
    head += ["n aider", "aider s/map"] if "aider" in tools else []
    print("| " + " | ".join(head) + " |")
    print("|" + "---|" * len(head))
    groups = {}
    for r in results:
        for key in ((r["source"], r["repo"]), (r["source"], "all"), ("all", "")):
            for split in (r["split"], "all"):
                groups.setdefault(key + (split,), []).append(r)
    order = sorted(groups, key=lambda k: (k[0] == "all", k[0], k[1] == "all", k[1],
                                          ["tuned", "heldout", "all"].index(k[2])))
    for key in order:
        rs = groups[key]
        row = [key[0], key[1], key[2], str(len(rs)),
               "%.1f" % statistics.mean(len(r["gold"]) for r in rs)]
        for t in tools:
            have = [r for r in rs if t in r]
            for n in budgets:
                row.append("%.0f%%" % (100 * statistics.mean(
                    r[t][n]["hits"] / len(r["gold"]) for r in have)) if have else "-")
        if "aider" in tools:
            have = [r for r in rs if "aider" in r]
            row.append(str(len(have)))
            secs = [r["aider"][n]["seconds"] for r in have for n in budgets]
            row.append("%.1f" % statistics.median(secs) if secs else "-")
        print("| " + " | ".join(row) + " |")


def main():
    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    sub = ap.add_subparsers(dest="cmd", required=True)
    b = sub.add_parser("build", help="make the query set from mirrors into bench/task-data/")
    b.add_argument("--commits", nargs="+", help="mirrors whose commits become queries")
    b.add_argument("--trellis", nargs="+", help="mirrors with Trellis task folders")
    b.add_argument("--per-repo", type=int, default=20, help="commits per repository")
    b.add_argument("--out", default=DATA)
    r = sub.add_parser("run", help="measure BM25, aider and curate on the query set")
    r.add_argument("repos", nargs="*", help="mirrors: /work/.mirror/OWNER+NAME/repo or OWNER/NAME=PATH")
    r.add_argument("--curate", default=os.path.join(HERE, "..", "target", "release", "curate"))
    r.add_argument("--venv", default="/tmp/aider-venv")
    r.add_argument("--work", default="/tmp/tq")
    r.add_argument("--budgets", default=BUDGETS)
    r.add_argument("--sources", default="commits,trellis")
    r.add_argument("--split", choices=["tuned", "heldout", "all"], default="all")
    r.add_argument("--only-repos", help="comma-separated OWNER/NAME list")
    r.add_argument("--limit", type=int, help="at most LIMIT queries per source, repository and split")
    r.add_argument("--aider-timeout", type=float, default=240,
                   help="seconds for one query's aider maps (all budgets); then it is left out")
    r.add_argument("--max-minutes", type=float, help="stop taking new queries after this long")
    r.add_argument("--json")
    r.add_argument("--no-aider", action="store_true")
    r.add_argument("--no-curate", action="store_true")
    r.add_argument("--no-bm25", action="store_true")
    r.add_argument("--approx-tokens", action="store_true",
                   help="count tokens as ceil(bytes/4) instead of tiktoken cl100k_base")
    r.add_argument("--dry", action="store_true", help="print the query set and stop")
    r.add_argument("-v", "--verbose", type=int, nargs="?", const=1, default=0,
                   help="with --dry: print each query's text (first 600 chars, or N)")
    m = sub.add_parser("report", help="merge earlier --json runs and print the table")
    m.add_argument("files", nargs="+")
    m.add_argument("--split", choices=["tuned", "heldout", "all"], default="all")
    m.add_argument("--require", help="only queries every one of these tools answered: bm25,aider")
    m.add_argument("--json", help="write the merged queries")
    args = ap.parse_args()
    {"build": build, "run": run, "report": report}[args.cmd](args)


if __name__ == "__main__":
    main()
