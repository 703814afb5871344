#!/usr/bin/env python3
"""Draws the secret corpus's samples from its token formats: `families.toml` -> `secrets/samples.jsonl`.

    python3 tests/data/secret-corpus/generate.py     (rewrites secrets/samples.jsonl)

Every family gets true samples (its format drawn with a seed fixed by its id, planted as a
user stores a credential: an env line, YAML, JSON, code; a distinctive format also bare)
and false ones (its documented examples, placeholders, references, masked and elided
values, prose that names it); `negatives.toml` adds texts that name secrets without
holding one (lock files, digests, generated code, documentation, tests). A family is held
out when its provider's name hashes so (sha256, first byte mod 3 == 0): no rule is written
or tuned against a held-out family, its figures are reported apart. The output is the
same on every run (no clock, no global random state).
"""
import base64
import hashlib
import json
import os
import random
import re
import tomllib
import uuid
import zlib

HERE = os.path.dirname(os.path.abspath(__file__))

CLASSES = {
    "b62": "ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789",
    "l36": "abcdefghijklmnopqrstuvwxyz0123456789",
    "u36": "ABCDEFGHIJKLMNOPQRSTUVWXYZ0123456789",
    "hex": "0123456789abcdef",
    "HEX": "0123456789ABCDEF",
    "dig": "0123456789",
    "b64": "ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789+/",
    "b64u": "ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789_-",
    "b32": "ABCDEFGHIJKLMNOPQRSTUVWXYZ234567",
    "low": "abcdefghijklmnopqrstuvwxyz",
    "up": "ABCDEFGHIJKLMNOPQRSTUVWXYZ",
    "bech": "QPZRY9X8GF2TVDW0S3JN54KHCE6MUA7L",
}
PIECE = re.compile(r"\{(" + "|".join(list(CLASSES) + ["uuid", "crc32"])
                   + r")(?::(\d+)(?:-(\d+))?)?\}")
B62 = CLASSES["b62"][52:] + CLASSES["b62"][:52]  # 0-9A-Za-z, GitHub's checksum alphabet


def held_out(provider):
    """Every third provider, by a hash of its name: never tuned on."""
    name = re.sub(r"[^a-z0-9]", "", provider.lower())
    return hashlib.sha256(name.encode()).digest()[0] % 3 == 0


def base62(number, width):
    out = ""
    while number:
        number, digit = divmod(number, 62)
        out = B62[digit] + out
    return out.rjust(width, "0")


def draw(fmt, rng, mask=None):
    """The format with its pieces drawn; `mask` replaces every drawn character by itself."""
    out, drawn, at = [], [], 0
    for piece in PIECE.finditer(fmt):
        out.append(fmt[at:piece.start()])
        at = piece.end()
        kind, low, high = piece.group(1), piece.group(2), piece.group(3)
        if kind == "uuid":
            text = str(uuid.UUID(int=rng.getrandbits(128), version=4))
        elif kind == "crc32":
            text = base62(zlib.crc32("".join(drawn).encode()), int(low))
        else:
            count = rng.randint(int(low), int(high)) if high else int(low)
            text = "".join(rng.choice(CLASSES[kind]) for _ in range(count))
        drawn.append(text)
        out.append(mask * len(text) if mask else text)
    out.append(fmt[at:])
    return "".join(out).replace("\\n", "\n")


def literal_prefix(fmt):
    return fmt.split("{", 1)[0].replace("\\n", "\n")


def camel(name):
    words = name.lower().split("_")
    return words[0] + "".join(w.title() for w in words[1:])


def true_contexts(name, token, bare):
    lower = name.lower()
    yield f"{name}={token}"
    yield f'{lower}: "{token}"'
    yield f'    "{lower}": "{token}",'
    yield f'const {camel(name)} = "{token}";'
    if bare:
        yield token
        yield f"value: {token}"


def false_contexts(family, rng):
    name = family["name"]
    lower = name.lower()
    fmt = family["format"]
    provider = family["provider"]
    for example in family.get("examples", []):
        yield "example", f"{name}={example}"
        yield "example", f'{lower}: "{example}"'
    yield "placeholder", f"{name}=<your-{provider}-api-key>"
    yield "placeholder", f'{lower}: "YOUR_{name}_HERE"'
    yield "reference", f"{name}=${{{name}}}"
    yield "reference", f'{lower}: "{{{{ .Values.{camel(name)} }}}}"'
    yield "reference", f'{camel(name)} = os.environ["{name}"]'
    if "\n" not in draw(fmt, rng):
        yield "masked", f"{name}={draw(fmt, rng, mask='x')}"
        yield "masked", f"{name}={draw(fmt, rng, mask='*')}"
        prefix = literal_prefix(fmt)
        yield "elided", f'{lower}: "{prefix}{draw(fmt, rng)[len(prefix):][:4]}..."'
    yield "prose", f"Set `{name}` to the key from your {provider} dashboard; never commit it."


def negatives(rng):
    table = tomllib.load(open(os.path.join(HERE, "negatives.toml"), "rb"))
    for kind in table["negative"]:
        for _ in range(kind.get("draws", 3)):
            # `{{` and `}}` are braces of the text itself.
            yield kind["id"], draw(kind["text"], rng).replace("{{", "{").replace("}}", "}")


def main():
    families = tomllib.load(open(os.path.join(HERE, "families.toml"), "rb"))["family"]
    lines = []
    seen = set()
    for family in families:
        assert family["id"] not in seen, family["id"]
        seen.add(family["id"])
        family.setdefault("name", family["provider"].upper() + "_API_KEY")
        rng = random.Random(hashlib.sha256(family["id"].encode()).digest())
        part = "held-out" if held_out(family["provider"]) else "tuned"
        sources = family["sources"]
        common = {"family": family["id"], "provider": family["provider"], "part": part,
                  "sources": sources}
        for text in true_contexts(family["name"], draw(family["format"], rng),
                                  family.get("bare", False)):
            sets = ["corpus", part] + [f"source {s}" for s in sources]
            lines.append({**common, "expect": True, "set": ",".join(sets), "text": text})
        for kind, text in false_contexts(family, rng):
            sets = ["corpus negatives", f"{part} negatives"] + [f"source {s} negatives" for s in sources]
            lines.append({**common, "kind": kind, "expect": False, "set": ",".join(sets),
                          "text": text})
    rng = random.Random(b"negatives")
    for kind, text in negatives(rng):
        lines.append({"family": kind, "expect": False, "set": "texts that hold no secret",
                      "text": text})
    # Under `secrets/`: a folder curate leaves out by name, so its own runs on this
    # repository never read the drawn tokens (the formats and this script stay readable).
    with open(os.path.join(HERE, "secrets", "samples.jsonl"), "w") as out:
        for line in lines:
            out.write(json.dumps(line, ensure_ascii=False) + "\n")


if __name__ == "__main__":
    main()
