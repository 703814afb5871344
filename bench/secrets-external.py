#!/usr/bin/env python3
"""Recall and false flags of curate's content rules on other scanners' own examples.

    bench/secrets-external.py [--misses] [--kingfisher GIT_DIR] [--trufflehog GIT_DIR]

Reads, at HEAD of a clone (or mirror) of each scanner, the examples its rules ship:
Kingfisher's `data/rules/*.yml` (`examples`, `negative_examples`) and TruffleHog's
detector pattern tests (`pkg/detectors/*/*_test.go`: an `input` with a non-empty `want`
is a true sample, with `want: nil` or empty a false one). Nothing of theirs is kept: the
samples go to a temporary folder and through `examples/secret-samples.rs`, which prints
per set the share flagged and never a sample's text. Each sample is grouped under its
scanner and under `held-out` or `tuned`, by the provider's name (its file or folder)
hashed as the corpus is (`tests/data/secret-corpus/generate.py`: sha256, first byte
mod 3 == 0 is held out); `--misses` lists the families missed or flagged, of the tuned
part only (the held-out part is measured, never looked into).
"""
import hashlib
import io
import json
import os
import re
import subprocess
import sys
import tarfile
import tempfile


def held_out(provider):
    name = re.sub(r"[^a-z0-9]", "", provider.lower())
    return hashlib.sha256(name.encode()).digest()[0] % 3 == 0


def export(git_dir, folder):
    """The files of `folder` at HEAD, by path (one `git archive`, not a process a file)."""
    tar = subprocess.run(["git", "--git-dir", git_dir, "archive", "HEAD", folder],
                         capture_output=True, check=True).stdout
    with tarfile.open(fileobj=io.BytesIO(tar)) as archive:
        for member in archive:
            if member.isfile():
                yield member.name, archive.extractfile(member).read().decode("utf-8", "replace")


def kingfisher(git_dir):
    import yaml
    for path, text in sorted(export(git_dir, "data/rules")):
        if not path.endswith(".yml"):
            continue
        try:
            doc = yaml.safe_load(text) or {}
        except yaml.YAMLError:
            continue
        provider = path.rsplit("/", 1)[1][:-4]
        for rule in doc.get("rules") or []:
            for expect, key in ((True, "examples"), (False, "negative_examples")):
                for text in rule.get(key) or []:
                    yield "kingfisher", provider, rule.get("id", provider), expect, text


GO_STRING = r'(?:`([^`]*)`|"((?:[^"\\\n]|\\.)*)")'


def go_unquote(raw, quoted):
    if raw is not None:
        return raw
    return json.loads('"' + quoted.replace("\\'", "'") + '"')


def trufflehog(git_dir):
    case = re.compile(r"input:\s*" + GO_STRING + r"\s*,\s*want:\s*(nil|\[\]string\{([^}]*)\})", re.S)
    for path, text in sorted(export(git_dir, "pkg/detectors")):
        if not path.endswith("_test.go") or "integration" in path:
            continue
        provider = path.split("/")[2]
        for found in case.finditer(text):
            try:
                body = go_unquote(found.group(1), found.group(2))
            except ValueError:
                continue
            want = found.group(4)
            expect = found.group(3) != "nil" and bool(want and want.strip())
            yield "trufflehog", provider, provider, expect, body


def main():
    args = sys.argv[1:]
    misses = "--misses" in args
    sources = []
    for flag, reader in (("--kingfisher", kingfisher), ("--trufflehog", trufflehog)):
        if flag in args:
            sources.append(reader(args[args.index(flag) + 1]))
    if not sources:
        sys.exit(__doc__)
    root = os.path.join(os.path.dirname(os.path.abspath(__file__)), "..")
    with tempfile.TemporaryDirectory() as tmp:
        tuned = open(os.path.join(tmp, "tuned.jsonl"), "w")
        held = open(os.path.join(tmp, "held-out.jsonl"), "w")
        for source in sources:
            for scanner, provider, family, expect, text in source:
                part = "held-out" if held_out(provider) else "tuned"
                line = json.dumps({"set": f"{scanner},{scanner} {part}", "family": family,
                                   "expect": expect, "text": text})
                print(line, file=held if part == "held-out" else tuned)
        tuned.close()
        held.close()
        cmd = ["cargo", "run", "-q", "--release", "--example", "secret-samples", "--",
               os.path.join(tmp, "held-out.jsonl")]
        if misses:
            cmd += ["--misses"]
        cmd += [os.path.join(tmp, "tuned.jsonl")]
        # --misses names files after it only: the held-out file comes first, unlisted.
        sys.exit(subprocess.run(cmd, cwd=root).returncode)


if __name__ == "__main__":
    main()
