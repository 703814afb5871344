#!/usr/bin/env python3
"""Which of gitleaks' own rules flag a text: a whole-scanner cross-check.

gitleaks tests each rule's false samples against that rule alone, so some of
them (a random value assigned to `token`, a JWT sent as a Basic credential)
are false for one rule but flagged by another of gitleaks' default rules
(mostly `generic-api-key`). For a whole scanner such a sample is no false
sample. This script emulates gitleaks' detection (detect/detect.go at the
pinned commit: keyword prefilter, regex, secret group, entropy `<=` skip,
global and rule allowlists with their regex targets, stopwords and AND/OR
conditions) for the rules of its config/gitleaks.toml, in Python's `re`.

    python3 crosscheck.py GITLEAKS_TOML < texts.jsonl

Input: one JSON object a line with a `text` (and any other fields, echoed).
Output: the same objects with `gitleaks_rules`, the ids of the rules that
flag the text (paths are not emulated: path-only rules never fire). A rule
whose regex Python cannot compile is reported on stderr and skipped.
"""

import json
import math
import re
import sys
import tomllib


def go_to_python(pattern):
    # RE2 `\z` is Python's `\Z`; a mid-pattern `(?i)` becomes a scoped group to the end.
    pattern = pattern.replace(r"\z", r"\Z")
    at = pattern.find("(?i)", 1)
    if at > 0:
        pattern = pattern[:at] + "(?i:" + pattern[at + 4 :] + ")"
    return pattern


def entropy(text):
    if not text:
        return 0.0
    counts = {}
    for ch in text:
        counts[ch] = counts.get(ch, 0) + 1
    return -sum(c / len(text) * math.log2(c / len(text)) for c in counts.values())


class Allowlist:
    def __init__(self, spec):
        self.target = spec.get("regexTarget", "secret")
        self.condition = spec.get("condition", "OR")
        self.regexes = [re.compile(go_to_python(r)) for r in spec.get("regexes", [])]
        self.stopwords = [w.lower() for w in spec.get("stopwords", [])]
        self.paths = spec.get("paths", [])
        self.commits = spec.get("commits", [])

    def allows(self, secret, match, line):
        target = {"match": match, "line": line}.get(self.target, secret)
        regex = bool(target) and any(r.search(target) for r in self.regexes)
        stop = bool(secret) and any(w in secret.lower() for w in self.stopwords)
        if self.condition == "AND":
            checks = []
            if self.commits:
                checks.append(False)
            if self.paths:
                checks.append(False)  # no path: a path condition never holds
            if self.regexes:
                checks.append(regex)
            if self.stopwords:
                checks.append(stop)
            return bool(checks) and all(checks)
        return regex or stop


class Rule:
    def __init__(self, spec):
        self.id = spec["id"]
        self.regex = re.compile(go_to_python(spec["regex"]))
        self.entropy = spec.get("entropy", 0.0)
        self.group = spec.get("secretGroup", 0)
        self.keywords = [k.lower() for k in spec.get("keywords", [])]
        self.allowlists = [Allowlist(a) for a in spec.get("allowlists", [])]
        self.path_scoped = "path" in spec


def line_of(text, start, end):
    line_start = text.rfind("\n", 0, start) + 1
    line_end = text.find("\n", end)
    return text[line_start : len(text) if line_end < 0 else line_end]


def flags(rule, text, global_allow):
    if rule.path_scoped:
        return False
    lower = text.lower()
    if rule.keywords and not any(k in lower for k in rule.keywords):
        return False
    for found in rule.regex.finditer(text):
        match = found.group(0)
        # gitleaks trims a trailing newline the regex took (issue 1352).
        secret = match
        groups = rule.regex.match(match) or rule.regex.search(match)
        if groups and groups.re.groups >= 1:
            if rule.group > 0:
                secret = groups.group(rule.group) or ""
            else:
                secret = next((g for g in groups.groups() if g), secret)
        if rule.entropy and entropy(secret) <= rule.entropy:
            continue
        line = line_of(text, found.start(), found.end())
        if any(a.allows(secret, match, line) for a in global_allow):
            continue
        if any(a.allows(secret, match, line) for a in rule.allowlists):
            continue
        return True
    return False


def main():
    with open(sys.argv[1], "rb") as handle:
        config = tomllib.load(handle)
    global_allow = [Allowlist(config.get("allowlist", {}))]
    rules = []
    for spec in config["rules"]:
        if "regex" not in spec:
            continue
        try:
            rules.append(Rule(spec))
        except re.error as error:
            print(f"skipped {spec['id']}: {error}", file=sys.stderr)
    for line in sys.stdin:
        record = json.loads(line)
        record["gitleaks_rules"] = [
            r.id for r in rules if flags(r, record["text"], global_allow)
        ]
        print(json.dumps(record))


if __name__ == "__main__":
    main()
