#!/usr/bin/env python3
"""Extract gitleaks' per-rule true and false samples into samples.jsonl.

Usage:
    extract.py GIT_DIR [COMMIT] > tests/data/gitleaks/samples.jsonl

GIT_DIR is a clone (bare is fine) of https://github.com/gitleaks/gitleaks.
The script reads `cmd/generate/config/rules/*.go` at COMMIT (default HEAD)
with `git show` and evaluates the sample expressions of every rule function
(`tps` / `fps`) with a tiny evaluator for the Go it uses: interpreted and raw
string literals, `+` concatenation, `[]string{...}`, `append(...)`,
`map[string]string{path: content}` (ValidateWithPaths), local string
variables, `fmt.Sprintf` with `%s`, `strings.Repeat`, the `utils.*` pattern
helpers, `secrets.NewSecret(regex)` (kept as a regex part: the Rust test
generates a value for it) and `utils.GenerateSampleSecret(s)` (expanded with
gitleaks' sample templates, copied below). Anything else (loops, calls it
does not know) is skipped and counted in the header line.

Only the extracted sample strings are written, never gitleaks' code. Output:
a first `{"header": ...}` line (source, commit, license, skip counts), then
one JSON object per sample:

    {"rule": gitleaks rule id, "family": file stem, "kind": "tp"|"fp",
     "origin": "literal"|"generated", "path": optional file path,
     "parts": [{"lit": text} | {"re": regex}, ...]}

`origin` is "literal" when the sample is a string written out in the rule
file, "generated" when it comes from GenerateSampleSecret(s) or holds a
`secrets.NewSecret` part.
"""

import json
import re
import subprocess
import sys

RULES_DIR = "cmd/generate/config/rules"

# utils.GenerateSampleSecrets' templates ({i} identifier, {I} upper-cased, {s} secret).
TEMPLATES = [
    '{i}Token="{s}"',
    '{i}Token = "{s}"',
    "{i}Token={s}",
    "{i}Token = {s}",
    '{\n    "{i}_token": "{s}"\n}',
    '{"config.ini": "{I}_TOKEN={s}\\nBACKUP_ENABLED=true"}',
    "<{i}Token>\n    {s}\n</{i}Token>",
    "{i}_token: {s}",
    "{i}_token: '{s}'",
    '{i}_token: "{s}"',
    'string {i}Token = "{s}";',
    'var {i}Token string = "{s}"',
    '{i}Token := "{s}"',
    "{i}Token := `{s}`",
    'String {i}Token = "{s}";',
    'var {i}Token = "{s}"',
    '${i}Token .= "{s}"',
    "{i}Token = '{s}'",
    '{i}Token = "{s}"',
    'System.setProperty("{I}_TOKEN", "{s}")',
    '  "{i}Token" => "{s}"',
    '{i}_TOKEN = "{s}"',
    '{i}_TOKEN := "{s}"',
    '{i}_TOKEN ::= "{s}"',
    '{i}_TOKEN :::= "{s}"',
    '{i}_TOKEN ?= "{s}"',
]
ONE_TEMPLATE = '{i}_api_token = "{s}"'

PATTERN_HELPERS = {
    "Numeric": "[0-9]{%s}",
    "Hex": "[a-f0-9]{%s}",
    "AlphaNumeric": "[a-z0-9]{%s}",
    "AlphaNumericExtendedShort": "[a-z0-9_-]{%s}",
    "AlphaNumericExtended": "[a-z0-9=_\\-]{%s}",
    "AlphaNumericExtendedLong": "[a-z0-9\\/=_\\+\\-]{%s}",
}
HEX_UUID = "[0-9a-f]{8}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{12}"


class Skip(Exception):
    """An expression the evaluator cannot evaluate."""


# ------------------------------------------------------------------ lexer

TOKEN = re.compile(
    r"""
    (?P<ws>\s+)
  | (?P<comment>//[^\n]*|/\*.*?\*/)
  | (?P<raw>`[^`]*`)
  | (?P<str>"(?:[^"\\\n]|\\.)*")
  | (?P<char>'(?:[^'\\\n]|\\.)*')
  | (?P<num>\d+)
  | (?P<ident>[A-Za-z_][A-Za-z0-9_]*)
  | (?P<op>\.\.\.|:=|\+=|==|!=|&&|\|\||[{}()\[\],.;+=:*&!<>%-])
    """,
    re.S | re.X,
)


def unquote(body):
    """A Go interpreted string literal's value."""
    out, i = [], 0
    simple = {"n": "\n", "t": "\t", "r": "\r", "\\": "\\", '"': '"', "'": "'",
              "a": "\a", "b": "\b", "f": "\f", "v": "\v"}
    raw = bytearray()
    while i < len(body):
        c = body[i]
        if c != "\\":
            raw += c.encode()
            i += 1
            continue
        n = body[i + 1]
        if n in simple:
            raw += simple[n].encode()
            i += 2
        elif n == "x":
            raw.append(int(body[i + 2:i + 4], 16))
            i += 4
        elif n == "u":
            raw += chr(int(body[i + 2:i + 6], 16)).encode()
            i += 6
        elif n == "U":
            raw += chr(int(body[i + 2:i + 10], 16)).encode()
            i += 10
        elif n in "01234567":
            raw.append(int(body[i + 1:i + 4], 8))
            i += 4
        else:
            raise Skip("escape")
    out = raw.decode("utf-8", errors="surrogateescape")
    return out


def lex(text):
    tokens, pos = [], 0
    while pos < len(text):
        m = TOKEN.match(text, pos)
        if not m:
            tokens.append(("op", text[pos]))
            pos += 1
            continue
        pos = m.end()
        kind = m.lastgroup
        if kind in ("ws", "comment"):
            if kind == "ws" and "\n" in m.group() or kind == "comment" and m.group().startswith("/*") and "\n" in m.group():
                tokens.append(("nl", "\n"))
            continue
        if kind == "raw":
            tokens.append(("str", m.group()[1:-1].replace("\r", "")))
        elif kind == "str":
            tokens.append(("str", unquote(m.group()[1:-1])))
        else:
            tokens.append((kind, m.group()))
    return tokens


# --------------------------------------------------------------- values
# A string value is a tuple of parts: ("lit", text) or ("re", regex).
# A sample is (parts, generated: bool, path or None). A list value is a list of samples.


def lit(text):
    return (("lit", text),)


def concat(a, b):
    parts = list(a)
    for p in b:
        if parts and parts[-1][0] == "lit" and p[0] == "lit":
            parts[-1] = ("lit", parts[-1][1] + p[1])
        else:
            parts.append(p)
    return tuple(parts)


def literal_text(value):
    if any(kind != "lit" for kind, _ in value):
        raise Skip("regex where a literal is needed")
    return "".join(text for _, text in value)


def expand_template(template, ident, secret):
    out = ()
    pieces = re.split(r"(\{[iIs]\})", template)
    for piece in pieces:
        if piece == "{i}":
            out = concat(out, lit(ident))
        elif piece == "{I}":
            out = concat(out, lit(ident.upper()))
        elif piece == "{s}":
            out = concat(out, secret)
        elif piece:
            out = concat(out, lit(piece))
    return out


class Parser:
    def __init__(self, tokens, env):
        self.t = tokens
        self.i = 0
        self.env = env

    def peek(self, k=0):
        j = self.i
        seen = 0
        while j < len(self.t):
            if self.t[j][0] != "nl":
                if seen == k:
                    return self.t[j]
                seen += 1
            j += 1
        return ("eof", "")

    def next(self):
        while self.i < len(self.t) and self.t[self.i][0] == "nl":
            self.i += 1
        tok = self.t[self.i] if self.i < len(self.t) else ("eof", "")
        self.i += 1
        return tok

    def expect(self, value):
        tok = self.next()
        if tok[1] != value:
            raise Skip(f"expected {value}, got {tok[1]}")

    def skip_balanced(self):
        """Skip one expression (up to a top-level `,`, `)` or `}`)."""
        depth = 0
        while True:
            tok = self.peek()
            if tok[0] == "eof":
                return
            if tok[1] in "([{":
                depth += 1
            elif tok[1] in ")]}":
                if depth == 0:
                    return
                depth -= 1
            elif tok[1] == "," and depth == 0:
                return
            self.next()

    # expr := term ('+' term)*
    def expr(self):
        value = self.term()
        while self.peek()[1] == "+":
            self.next()
            right = self.term()
            if isinstance(value, list) or isinstance(right, list):
                raise Skip("list +")
            value = concat(value, right)
        return value

    def args(self):
        self.expect("(")
        out = []
        while self.peek()[1] != ")":
            start = self.i
            try:
                out.append(self.expr())
            except Skip as e:
                self.i = start
                self.skip_balanced()
                out.append(e)
            if self.peek()[1] == "...":
                self.next()
                out[-1] = ("spread", out[-1])
            if self.peek()[1] == ",":
                self.next()
        self.expect(")")
        return out

    def strict(self, args):
        for a in args:
            if isinstance(a, Skip):
                raise a
        return args

    def term(self):
        kind, value = self.next()
        if kind == "str":
            return lit(value)
        if value == "[":
            self.expect("]")
            self.expect("string")
            return self.string_list()
        if value == "map":
            self.expect("[")
            self.expect("string")
            self.expect("]")
            self.expect("string")
            return self.string_map()
        if kind == "ident":
            name = value
            while self.peek()[1] == ".":
                self.next()
                name += "." + self.next()[1]
            if self.peek()[1] == "(":
                return self.call(name)
            if name in self.env:
                return self.env[name]
            raise Skip(f"unknown name {name}")
        raise Skip(f"unexpected {value}")

    def string_list(self):
        self.expect("{")
        out = []
        while self.peek()[1] != "}":
            start = self.i
            try:
                v = self.expr()
                out.append(sample(v))
            except Skip as e:
                self.i = start
                self.skip_balanced()
                out.append(e)
            if self.peek()[1] == ",":
                self.next()
        self.expect("}")
        return out

    def string_map(self):
        self.expect("{")
        out = []
        while self.peek()[1] != "}":
            start = self.i
            try:
                key = literal_text(self.expr())
                self.expect(":")
                v = self.expr()
                out.append((v, v_generated(v), key))
            except Skip as e:
                self.i = start
                self.skip_balanced()
                if self.peek()[1] == ":":
                    self.next()
                    self.skip_balanced()
                out.append(e)
            if self.peek()[1] == ",":
                self.next()
        self.expect("}")
        return out

    def call(self, name):
        args = self.args()
        short = name.split(".")[-1]
        if name == "append":
            base = args[0]
            if isinstance(base, Skip):
                raise base
            out = list(base)
            for a in args[1:]:
                if isinstance(a, tuple) and len(a) == 2 and a[0] == "spread":
                    inner = a[1]
                    if isinstance(inner, Skip):
                        out.append(inner)
                    else:
                        out.extend(inner)
                elif isinstance(a, Skip):
                    out.append(a)
                else:
                    out.append(sample(a))
            return out
        if name in ("utils.GenerateSampleSecrets", "utils.GenerateSampleSecret"):
            ident, secret = self.strict(args)
            ident = literal_text(ident)
            templates = TEMPLATES if short == "GenerateSampleSecrets" else [ONE_TEMPLATE]
            samples = [(expand_template(t, ident, secret), True, None) for t in templates]
            return samples if short == "GenerateSampleSecrets" else samples[0][0] + (("gen", ""),)
        if name == "secrets.NewSecret":
            (pattern,) = self.strict(args)
            return (("re", literal_text(pattern)),)
        if name.startswith("utils.") and short in PATTERN_HELPERS:
            (size,) = self.strict(args)
            return lit(PATTERN_HELPERS[short] % literal_text(size))
        if name == "utils.Hex8_4_4_4_12":
            return lit(HEX_UUID)
        if name == "fmt.Sprintf":
            args = self.strict(args)
            fmt = literal_text(args[0])
            pieces = fmt.split("%s")
            if len(pieces) - 1 != len(args) - 1 or "%" in fmt.replace("%s", ""):
                raise Skip("Sprintf format")
            out = lit(pieces[0])
            for arg, piece in zip(args[1:], pieces[1:]):
                out = concat(concat(out, arg), lit(piece))
            return out
        if name == "strings.Repeat":
            text, count = args
            return lit(literal_text(text) * int(literal_text(count)))
        raise Skip(f"call {name}")


def strip_gen(value):
    return tuple(p for p in value if p[0] != "gen")


def v_generated(value):
    return any(kind in ("re", "gen") for kind, _ in value)


def sample(value):
    if isinstance(value, list):
        raise Skip("nested list")
    return (strip_gen(value), v_generated(value), None)


# --------------------------------------------------------------- functions

FUNC = re.compile(r"^func (\w+)\(\) \*config\.Rule \{", re.M)


def functions(text):
    starts = [m for m in FUNC.finditer(text)]
    for k, m in enumerate(starts):
        end = starts[k + 1].start() if k + 1 < len(starts) else len(text)
        yield m.group(1), text[m.end():end]


def rule_ids(body):
    return re.findall(r'RuleID:\s*"([^"]+)"', body)


GLOBAL = re.compile(r"^var (\w+) = ", re.M)


def globals_of(text):
    """Package-level `var name = expr` values (sample lists shared by rules)."""
    env = {}
    for m in GLOBAL.finditer(text):
        p = Parser(lex(text[m.end():]), env)
        try:
            env[m.group(1)] = p.expr()
        except Skip:
            pass
    return env


def evaluate(body, family, stats, shared):
    """Samples of one rule function: (kind, sample-or-Skip) pairs."""
    tokens = lex(body)
    env = dict(shared)
    env.update({"tps": [], "fps": []})
    p = Parser(tokens, env)
    results = []
    while p.i < len(tokens):
        tok = p.next()
        if tok[0] == "eof":
            break
        if tok[0] == "ident" and p.peek()[1] in (":=", "=") and tok[1] not in ("r",):
            name = tok[1]
            p.next()
            start = p.i
            try:
                value = p.expr()
                env[name] = value
            except Skip as e:
                p.i = start
                p.skip_balanced()
                if name in ("tps", "fps"):
                    env[name] = env.get(name, []) + [e]
                else:
                    env.pop(name, None)
            continue
        if tok[1] == "for" and "tps" in body:
            # A loop building samples: not evaluated; count what it appends.
            depth, j = 0, p.i
            while j < len(tokens):
                if tokens[j][1] == "{":
                    depth += 1
                elif tokens[j][1] == "}":
                    depth -= 1
                    if depth == 0:
                        break
                elif tokens[j][1] in ("tps", "fps") and depth > 0:
                    stats["loop"] = stats.get("loop", 0) + 1
                j += 1
            p.i = j + 1
    for kind in ("tp", "fp"):
        for item in env.get(kind + "s", []):
            results.append((kind, item))
    return results


def main():
    git_dir = sys.argv[1]
    commit = sys.argv[2] if len(sys.argv) > 2 else "HEAD"
    sha = subprocess.check_output(["git", "--git-dir", git_dir, "rev-parse", commit], text=True).strip()
    names = subprocess.check_output(
        ["git", "--git-dir", git_dir, "ls-tree", "--name-only", sha, RULES_DIR + "/"], text=True
    ).split()
    records, skipped = [], {}
    for name in sorted(names):
        if not name.endswith(".go") or name.endswith("_test.go"):
            continue
        family = name.rsplit("/", 1)[-1][:-3]
        text = subprocess.check_output(["git", "--git-dir", git_dir, "show", f"{sha}:{name}"], text=True)
        shared = globals_of(text)
        for func, body in functions(text):
            ids = rule_ids(body)
            if not ids:
                continue
            stats = {}
            for kind, item in evaluate(body, family, stats, shared):
                if isinstance(item, Skip):
                    skipped[f"{ids[0]} {kind}: {item}"] = skipped.get(f"{ids[0]} {kind}: {item}", 0) + 1
                    continue
                parts, generated, path = item
                rec = {"rule": ids[0], "family": family, "kind": kind,
                       "origin": "generated" if generated else "literal"}
                if path is not None:
                    rec["path"] = path
                rec["parts"] = [{k: v} for k, v in parts]
                records.append(rec)
            for what, n in stats.items():
                skipped[f"{ids[0]}: {what}"] = skipped.get(f"{ids[0]}: {what}", 0) + n
    header = {
        "header": f"samples from gitleaks/gitleaks at {sha}, MIT License, Copyright (c) 2019 Zachary Rice",
        "source": f"https://github.com/gitleaks/gitleaks/tree/{sha}/{RULES_DIR}",
        "commit": sha,
        "extracted_by": "tests/data/gitleaks/extract.py",
        "samples": len(records),
        "skipped": sum(skipped.values()),
        "skipped_by_reason": dict(sorted(skipped.items())),
    }
    print(json.dumps(header, ensure_ascii=False))
    for rec in records:
        print(json.dumps(rec, ensure_ascii=False))


if __name__ == "__main__":
    main()
