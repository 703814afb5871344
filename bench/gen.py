#!/usr/bin/env python3
"""Deterministic benchmark data for bench/run.sh (Python 3.8+, standard library only).

  gen.py tree   OUT --fixture DIR [--seed N] [--files N]
      a copy of the fixture repository with N (default 100 000) more files around it, in
      folders the worker baseline of change add-auth never selects: vendor/ and
      node_modules/ deep trees, src/gen/, and 1 000 other changes under changes/.
  gen.py corpus OUT [--seed N] [--files N] [--mb N]
      a bulk corpus of at least N files (default 10 200) and N MB (default 88, 10^6 bytes) of
      realistic text: Go, Rust, TypeScript, Python, Markdown prose, JSON; unicode (accents,
      CJK, Cyrillic, emoji), long lines, and a few large files (2 to 6 MB).

The same seed gives the same bytes (random.Random with an integer seed is stable across
Python 3 versions). Nothing matches curate's secret rules, so every file is selected.
Prints a one-line summary: files, bytes, largest file.
"""

import argparse
import os
import random
import shutil
import sys

ENGLISH = (
    "the of and to in is that for it as with was on be by this are or from at an but not "
    "have which one all were when there can more if has will each about how up out them "
    "then she many some so these would other into its time two could make like him see "
    "first than been call who now find long down day did get come made may part over new "
    "after also only know use work must before any read file files change context budget "
    "worker review plan module token count line section priority contract handoff secret "
    "manifest lead agent repository build test release cache stream parse render template "
    "request response server client session user error value result state config option"
).split()
UNICODE = (
    "naïve café über résumé déjà-vu façade jalapeño Ångström Zürich São-Paulo "
    "上下文 文件 必需 读取 修改 检查 缓存 预算 テスト ファイル 確認 設定 "
    "данные файл проверка кэш контекст бюджет ελληνικά λόγος שלום مرحبا "
    "🦀 ✅ ⚠️ 🚀 — … → ≤ ≥ ± µs °C"
).split()
SYLLABLES = (
    "ab ac ad al an ar as at ba be bi bo bu ca ce ci co cu da de di do du el en er es "
    "fa fe fi fo ga ge gi go ha he hi ho in io is it ka ke ki ko la le li lo lu ma me "
    "mi mo mu na ne ni no nu or os pa pe pi po pu ra re ri ro ru sa se si so su ta te "
    "ti to tu ul un ur va ve vi vo xa ya yo za ze zo"
).split()
TYPES = "int string bool float64 []byte error Config Request Response Handler Store".split()


def vocabulary(rng, n):
    words = set()
    while len(words) < n:
        words.add("".join(rng.choice(SYLLABLES) for _ in range(rng.randint(1, 4))))
    return sorted(words)


class Text:
    """Pools of lines per kind, built once from the seed; files pick from them."""

    def __init__(self, seed, pool=6000):
        rng = random.Random(seed)
        self.idents = vocabulary(rng, 4000)
        self.pool = {
            kind: [self.line(rng, kind) for _ in range(pool)]
            for kind in ("go", "rs", "ts", "py", "md", "json")
        }

    def ident(self, rng, style="snake"):
        parts = [rng.choice(self.idents) for _ in range(rng.randint(1, 3))]
        if style == "camel":
            return parts[0] + "".join(p.capitalize() for p in parts[1:])
        if style == "pascal":
            return "".join(p.capitalize() for p in parts)
        return "_".join(parts)

    def sentence(self, rng, words=None):
        n = words or rng.randint(5, 22)
        out = []
        for _ in range(n):
            r = rng.random()
            if r < 0.06:
                out.append(rng.choice(UNICODE))
            elif r < 0.16:
                out.append(rng.choice(self.idents))
            else:
                out.append(rng.choice(ENGLISH))
        s = " ".join(out)
        return s[0].upper() + s[1:] + rng.choice("...?!:")

    def line(self, rng, kind):
        ind = "    " * rng.randint(0, 3)
        r = rng.random()
        if kind == "md":
            if r < 0.08:
                return "#" * rng.randint(1, 3) + " " + self.sentence(rng, rng.randint(2, 6))
            if r < 0.2:
                return "- " + self.sentence(rng)
            if r < 0.25:
                return "| " + " | ".join(rng.choice(self.idents) for _ in range(4)) + " |"
            if r < 0.3:
                return ""
            if r < 0.35:
                return "    " + self.line(rng, "py").strip()
            return " ".join(self.sentence(rng) for _ in range(rng.randint(1, 4)))
        if kind == "json":
            key = self.ident(rng, "camel")
            if r < 0.3:
                return f'{ind}"{key}": {rng.randint(0, 10**rng.randint(1, 9))},'
            if r < 0.5:
                return f'{ind}"{key}": {rng.choice(["true", "false", "null"])},'
            return f'{ind}"{key}": "{self.sentence(rng, rng.randint(1, 8))}",'
        a, b, c = self.ident(rng), self.ident(rng, "camel"), self.ident(rng, "pascal")
        n = rng.randint(0, 99999)
        if r < 0.12:
            comment = {"py": "#", "md": ""}.get(kind, "//")
            return f"{ind}{comment} {self.sentence(rng)}"
        if r < 0.15:
            return ""
        if kind == "go":
            return rng.choice(
                [
                    f"{ind}{b} := {a}.{c}(ctx, {n})",
                    f"{ind}if err := {b}.{c}(); err != nil {{ return fmt.Errorf(\"{b}: %w\", err) }}",
                    f"{ind}func ({a[0]} *{c}) {c}({b} {rng.choice(TYPES)}) ({rng.choice(TYPES)}, error) {{",
                    f"{ind}for i, {b} := range {a}s {{",
                    f"{ind}}}",
                    f'{ind}log.Printf("{self.sentence(rng, 6)} %d", {n})',
                ]
            )
        if kind == "rs":
            return rng.choice(
                [
                    f"{ind}let {a} = {b}.{a}({n})?;",
                    f"{ind}pub fn {a}(&self, {b}: &{c}) -> Result<{c}, Error> {{",
                    f"{ind}match {a} {{ Some(x) => x.{b}(), None => return Err(Error::{c}) }}",
                    f"{ind}}}",
                    f"{ind}#[derive(Debug, Clone, PartialEq, Eq)]",
                    f'{ind}assert_eq!({a}.len(), {n}, "{self.sentence(rng, 5)}");',
                ]
            )
        if kind == "ts":
            return rng.choice(
                [
                    f"{ind}const {b} = await {a}.{b}({n});",
                    f"{ind}export function {b}({a}: {c}): Promise<{c}> {{",
                    f"{ind}if (!{b}) {{ throw new Error(`{self.sentence(rng, 6)}`); }}",
                    f"{ind}}}",
                    f"{ind}import {{ {c} }} from './{a}';",
                    f"{ind}return {{ ...{b}, {a}: {n} }};",
                ]
            )
        return rng.choice(  # py
            [
                f"{ind}{a} = {b}.{a}({n})",
                f"{ind}def {a}(self, {b}: {c}) -> {c}:",
                f"{ind}if {a} is None:",
                f"{ind}    raise ValueError(f\"{self.sentence(rng, 6)} {{{a}}}\")",
                f"{ind}return [{a} for {a} in {b} if {a}]",
                f"{ind}class {c}({rng.choice(['object', 'Base', 'Exception'])}):",
            ]
        )

    def body(self, rng, kind, size, tag):
        """About `size` bytes of text of a kind; `tag` makes each file's text its own."""
        out = []
        total = 0
        head = {
            "go": f"package {tag}\n\nimport (\n\t\"context\"\n\t\"fmt\"\n)\n",
            "rs": f"//! {tag}: {self.sentence(rng)}\n\nuse std::collections::HashMap;\n",
            "ts": f"// {tag}.ts\nimport {{ Config }} from '../config';\n",
            "py": f'"""{tag}: {self.sentence(rng)}"""\n\nimport os\nimport sys\n',
            "md": f"# {tag}\n\n{self.sentence(rng)}\n",
            "json": "{\n" + f'  "name": "{tag}",',
        }[kind]
        out.append(head)
        total += len(head.encode())
        pool = self.pool[kind]
        while total < size:
            chunk = rng.choices(pool, k=max(1, min(32, (size - total) // 50)))
            if rng.random() < 0.2:
                chunk.append(self.line(rng, kind) + f" {tag}")
            text = "\n".join(chunk) + "\n"
            out.append(text)
            total += len(text.encode())
        if kind == "json":
            out.append('  "end": true\n}\n')
        return "".join(out)


EXT = {"go": ".go", "rs": ".rs", "ts": ".ts", "py": ".py", "md": ".md", "json": ".json"}
KINDS = ["go"] * 5 + ["rs"] * 3 + ["ts"] * 4 + ["py"] * 3 + ["md"] * 4 + ["json"]


_made = set()


def write(path, text):
    parent = os.path.dirname(path)
    if parent not in _made:
        os.makedirs(parent, exist_ok=True)
        _made.add(parent)
    with open(path, "w", encoding="utf-8", newline="") as f:
        f.write(text)
    return len(text.encode("utf-8"))


def corpus(out, seed, files, mb):
    rng = random.Random(seed)
    text = Text(seed)
    target = mb * 1_000_000
    large = [2, 3, 4, 5, 6]  # MB, each under the 10 MiB --max-file-size
    small_target = target - sum(large) * 1_000_000
    n_small = max(files - len(large), 1)
    weights = [rng.lognormvariate(0, 1.1) for _ in range(n_small)]
    scale = small_target / sum(weights)
    total = 0
    largest = 0
    count = 0
    for i, w in enumerate(weights):
        kind = rng.choice(KINDS)
        size = max(60, min(int(w * scale), 400_000))
        top = ["cmd", "internal", "pkg", "docs", "api", "web", "tools", "lib"][i % 8]
        path = os.path.join(out, top, f"m{i // 100:03d}", f"{text.ident(rng)}_{i}{EXT[kind]}")
        if kind == "json" and rng.random() < 0.3:
            # One long line (minified JSON), as generated files have.
            items = ", ".join(text.line(rng, "json").strip().rstrip(",") for _ in range(size // 40))
            body = "{" + items + ', "end": true}\n'
        else:
            body = text.body(rng, kind, size, f"f{i}")
        b = write(path, body)
        total += b
        largest = max(largest, b)
        count += 1
    # Top up until the byte target holds (the size model is approximate).
    i = n_small
    while total < target - sum(large) * 1_000_000:
        kind = rng.choice(KINDS)
        path = os.path.join(out, "extra", f"{text.ident(rng)}_{i}{EXT[kind]}")
        total += write(path, text.body(rng, kind, 20_000, f"f{i}"))
        count += 1
        i += 1
    for j, size_mb in enumerate(large):
        kind = ["md", "go", "ts", "rs", "py"][j]
        path = os.path.join(out, "big", f"large_{j}{EXT[kind]}")
        b = write(path, text.body(rng, kind, size_mb * 1_000_000, f"large{j}"))
        total += b
        largest = max(largest, b)
        count += 1
    return count, total, largest


def tree(out, seed, fixture, files):
    rng = random.Random(seed)
    text = Text(seed, pool=2000)
    shutil.copytree(fixture, out, symlinks=True)
    count = 0
    total = 0

    def small(path, kind, tag):
        nonlocal count, total
        total += write(path, text.body(rng, kind, rng.randint(80, 600), tag))
        count += 1

    n_node = files * 40 // 100
    n_vendor = files * 30 // 100
    n_src = files * 25 // 100
    n_changes = files - n_node - n_vendor - n_src
    # node_modules: packages with deep lib trees.
    i = 0
    while i < n_node:
        pkg = f"@scope{i % 37}/pkg-{text.ident(rng)}-{i}"
        base = os.path.join(out, "node_modules", pkg)
        total += write(os.path.join(base, "package.json"), f'{{"name": "{pkg}", "version": "1.0.{i}"}}\n')
        count += 1
        i += 1
        for k in range(min(24, n_node - i)):
            small(os.path.join(base, "lib", f"d{k % 3}", f"e{k % 2}", f"index{k}.ts"), "ts", f"n{i}")
            i += 1
    # vendor: Go-style module paths, four levels deep.
    for i in range(n_vendor):
        path = os.path.join(
            out, "vendor", "github.com", f"org{i % 53}", f"lib{i % 211}", f"pkg{i % 7}", f"f{i}.go"
        )
        small(path, "go", f"v{i}")
    # src/gen: many sibling modules next to the fixture's src/auth and src/api.
    for i in range(n_src):
        kind = ["ts", "rs", "py"][i % 3]
        small(os.path.join(out, "src", "gen", f"mod{i % 499}", f"s{i % 5}", f"g{i}{EXT[kind]}"), kind, f"s{i}")
    # Other changes: the same shape as add-auth, never selected by --change add-auth.
    for i in range(n_changes):
        sub = ["analysis", "evidence", "plan", "review", "patches"][i % 5]
        small(os.path.join(out, "changes", f"old-{i // 5:04d}", sub, f"n{i}.md"), "md", f"c{i}")
    return count, total


def main():
    p = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    p.add_argument("what", choices=["tree", "corpus"])
    p.add_argument("out")
    p.add_argument("--seed", type=int, default=42)
    p.add_argument("--files", type=int)
    p.add_argument("--mb", type=int, default=88)
    p.add_argument("--fixture")
    a = p.parse_args()
    if os.path.exists(a.out):
        sys.exit(f"gen.py: {a.out} exists")
    if a.what == "tree":
        if not a.fixture:
            sys.exit("gen.py: tree needs --fixture")
        count, total = tree(a.out, a.seed, a.fixture, a.files or 100_000)
        print(f"tree: {count} generated files ({total} bytes) around the fixture in {a.out}")
    else:
        count, total, largest = corpus(a.out, a.seed, a.files or 10_200, a.mb)
        print(f"corpus: {count} files, {total} bytes, largest {largest} bytes in {a.out}")


if __name__ == "__main__":
    main()
