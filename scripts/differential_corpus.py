#!/usr/bin/env python3
"""Writes tests/data/engines.jsonl: patterns, haystacks and the results Python gives, for the
unit test that checks zero's hand-written regex engine and glob matcher (src/differential.rs).

Regex results come from Python's `re` (search anywhere, with and without IGNORECASE). Glob
results come from a reference written here that matches each path segment with a regex
translated from the glob segment (checked against `fnmatch` where the two syntaxes agree),
with the rules zero documents: `**` as a whole segment is any number of directories, `{a,b}`
alternatives, and a leading `.` matched like any character (hidden entries are left out by
the walks, not by the matcher).

Deterministic: the same Python gives the same file. Run from anywhere:
    python3 scripts/differential_corpus.py
Where Python's `re` and Unicode's simple case folding (which zero and ripgrep follow) differ,
the characters are left out of the alphabets: dotless `ı` and dotted `İ` (Python's re matches
them with `i`) and the information separators U+001C..U+001F (Python's `\\s` has them); and
an empty text is not tried with `\\B`, which Python's `re` never matches there.
"""

import fnmatch
import json
import os
import random
import re
import warnings

ROOT = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
OUT = os.path.join(ROOT, "tests", "data", "engines.jsonl")

# Letters with more than two cases, digits that are and are not decimal, a space that is
# Unicode's, characters regex syntax gives a meaning to.
PATTERN_CHARS = list("abcABC01_-. ésSσΣςſkKµμ٣²ß") + ["\u212a", "\u1c80", "в"]
HAYSTACK_CHARS = PATTERN_CHARS + list(" \t,;:()[]{}*+?|^$\\/xyzXYZ") + ["\u3000", "ẞ", "Ⅷ"]
SPECIAL = set(".^$*+?()[]{}|\\")


def literal(rng):
    c = rng.choice(PATTERN_CHARS)
    return ("lit", c)


def gen_regex(rng, depth):
    roll = rng.random()
    if depth <= 0 or roll < 0.35:
        return atom(rng)
    if roll < 0.6:
        return ("cat", [gen_regex(rng, depth - 1) for _ in range(rng.randint(2, 4))])
    if roll < 0.75:
        return ("alt", [gen_regex(rng, depth - 1) for _ in range(rng.randint(2, 3))])
    if roll < 0.9:
        q = rng.choice(["*", "+", "?", "{2}", "{1,}", "{0,2}", "{1,3}", "*?", "+?", "??"])
        return ("rep", gen_regex(rng, depth - 1), q)
    return ("group", gen_regex(rng, depth - 1), rng.choice(["(", "(?:"]))


def atom(rng):
    roll = rng.random()
    if roll < 0.55:
        return literal(rng)
    if roll < 0.62:
        return ("any",)
    if roll < 0.75:
        return ("short", rng.choice(["\\d", "\\w", "\\s", "\\D", "\\W", "\\S"]))
    if roll < 0.82:
        return ("look", rng.choice(["^", "$", "\\b", "\\B"]))
    return ("class", gen_class(rng))


def gen_class(rng):
    items = []
    for _ in range(rng.randint(1, 3)):
        roll = rng.random()
        if roll < 0.3:
            lo, hi = sorted(rng.sample("abcxyzABCXYZ019", 2))
            items.append(f"{lo}-{hi}")
        elif roll < 0.45:
            items.append(rng.choice(["\\d", "\\w", "\\s"]))
        else:
            c = rng.choice(PATTERN_CHARS)
            items.append("\\" + c if c in "]\\^-[" else c)
    negated = "^" if rng.random() < 0.3 else ""
    return "[" + negated + "".join(items) + "]"


def render(node):
    kind = node[0]
    if kind == "lit":
        return "\\" + node[1] if node[1] in SPECIAL else node[1]
    if kind == "any":
        return "."
    if kind in ("short", "look", "class"):
        return node[1]
    if kind == "cat":
        return "".join(render(n) for n in node[1])
    if kind == "alt":
        return "|".join(render(n) for n in node[1])
    if kind == "rep":
        inner = render(node[1])
        if node[1][0] in ("cat", "alt", "rep", "look"):
            inner = "(?:" + inner + ")"
        return inner + node[2]
    if kind == "group":
        return node[2] + render(node[1]) + ")"
    raise ValueError(kind)


def sample(rng, node):
    """A string the node matches, most of the time (anchors and classes are approximate: the
    expected result is Python's, whatever this produces)."""
    kind = node[0]
    if kind == "lit":
        c = node[1]
        if rng.random() < 0.3:
            c = c.swapcase() if len(c.swapcase()) == 1 else c
        return c
    if kind == "any":
        return rng.choice(HAYSTACK_CHARS)
    if kind == "short":
        return {"\\d": "5", "\\w": "é", "\\s": " ", "\\D": "x", "\\W": "-", "\\S": "y"}[node[1]]
    if kind == "look":
        return ""
    if kind == "class":
        return rng.choice(HAYSTACK_CHARS)
    if kind == "cat":
        return "".join(sample(rng, n) for n in node[1])
    if kind == "alt":
        return sample(rng, rng.choice(node[1]))
    if kind == "rep":
        times = {"*": 2, "+": 1, "?": 1, "{2}": 2, "{1,}": 3, "{0,2}": 1, "{1,3}": 2}
        return "".join(sample(rng, node[1]) for _ in range(times.get(node[2].rstrip("?") or "?", 1)))
    if kind == "group":
        return sample(rng, node[1])
    raise ValueError(kind)


def noise(rng, n):
    return "".join(rng.choice(HAYSTACK_CHARS) for _ in range(n))


def regex_cases(rng, count):
    lines = []
    while len(lines) < count:
        node = gen_regex(rng, 3)
        pattern = render(node)
        fold = rng.random() < 0.4
        try:
            with warnings.catch_warnings():
                warnings.simplefilter("error")
                compiled = re.compile(pattern, re.IGNORECASE if fold else 0)
        except (re.error, FutureWarning, DeprecationWarning):
            continue
        haystacks = set()
        for _ in range(10):
            if rng.random() < 0.6:
                text = noise(rng, rng.randint(0, 4)) + sample(rng, node) + noise(rng, rng.randint(0, 4))
                if text and rng.random() < 0.25:
                    at = rng.randrange(len(text))
                    text = text[:at] + rng.choice(HAYSTACK_CHARS) + text[at + 1:]
            else:
                text = noise(rng, rng.randint(0, 12))
            haystacks.add(text)
        if "\\B" in pattern:
            # Python's `\B` never matches an empty string (ripgrep's and zero's do).
            haystacks.discard("")
        cases = [[h, compiled.search(h) is not None] for h in sorted(haystacks)]
        lines.append({"engine": "regex", "pattern": pattern, "ignore_case": fold, "cases": cases})
    return lines


# --- globs ------------------------------------------------------------------------------

NAME_PARTS = ["a", "b", "ab", "c", "a.b", "b.c", ".h", ".a", "x-y", "é", "a_1", "ba", "abc",
              "c.rs", "a.rs", "lib.rs", "Ab", "[a]", "a*b", "{x}"]


def gen_glob_segment(rng):
    roll = rng.random()
    if roll < 0.15:
        return "**"
    tokens = []
    for _ in range(rng.randint(1, 4)):
        r = rng.random()
        if r < 0.35:
            tokens.append(rng.choice(["a", "b", "c", ".", "rs", "x-y", "é", "_1", "A"]))
        elif r < 0.55:
            tokens.append("*")
        elif r < 0.65:
            tokens.append("?")
        elif r < 0.8:
            tokens.append(rng.choice(["[ab]", "[!a]", "[^b]", "[a-c]", "[.]", "[!.x]", "[]a]"]))
        elif r < 0.9:
            tokens.append(rng.choice(["{a,b}", "{rs,c}", "{a,{b,c}}", "{,x}"]))
        else:
            tokens.append(rng.choice(["\\*", "\\[a]", "\\{x}", "\\?"]))
    return "".join(tokens)


def expand_braces(pattern):
    """{a,b} alternatives, nested, in order (a backslash escapes the next character)."""
    depth, start, i = 0, None, 0
    while i < len(pattern):
        c = pattern[i]
        if c == "\\":
            i += 2
            continue
        if c == "{":
            if depth == 0:
                start = i
            depth += 1
        elif c == "}" and depth > 0:
            depth -= 1
            if depth == 0:
                options, level, current, j = [], 0, "", start + 1
                while j < i:
                    ch = pattern[j]
                    if ch == "\\" and j + 1 < i:
                        current += pattern[j:j + 2]
                        j += 2
                        continue
                    if ch == "{":
                        level += 1
                    elif ch == "}":
                        level -= 1
                    if ch == "," and level == 0:
                        options.append(current)
                        current = ""
                    else:
                        current += ch
                    j += 1
                options.append(current)
                out = []
                for option in options:
                    for tail in expand_braces(option + pattern[i + 1:]):
                        out.append(pattern[:start] + tail)
                return out
        i += 1
    return [pattern]


def segment_regex(segment):
    """A glob segment as a Python regex (for one path segment, so `*` never meets a `/`)."""
    out, i = "", 0
    while i < len(segment):
        c = segment[i]
        i += 1
        if c == "\\" and i < len(segment):
            out += re.escape(segment[i])
            i += 1
        elif c == "*":
            out += ".*"
        elif c == "?":
            out += "."
        elif c == "[":
            j = i
            negated = j < len(segment) and segment[j] in "!^"
            if negated:
                j += 1
            k = j + 1 if j < len(segment) and segment[j] == "]" else j
            close = segment.find("]", k)
            if close < 0:
                out += re.escape("[")
                continue
            body = segment[j:close]
            parts, m = [], 0
            while m < len(body):
                if m + 2 < len(body) and body[m + 1] == "-":
                    parts.append(re.escape(body[m]) + "-" + re.escape(body[m + 2]))
                    m += 3
                else:
                    parts.append(re.escape(body[m]))
                    m += 1
            out += "[" + ("^" if negated else "") + "".join(parts) + "]"
            i = close + 1
        else:
            out += re.escape(c)
    return out


def segment_matches(segment, part):
    if segment == "**":
        return True
    matched = re.fullmatch(segment_regex(segment), part, re.S) is not None
    if "\\" not in segment and "[^" not in segment and "[]" not in segment and "[!]" not in segment:
        assert matched == fnmatch.fnmatchcase(part, segment), (segment, part)
    return matched


def parts_match(segments, parts):
    if not segments:
        return not parts
    if segments[0] == "**":
        return any(parts_match(segments[1:], parts[k:]) for k in range(len(parts) + 1))
    return bool(parts) and segment_matches(segments[0], parts[0]) and parts_match(segments[1:], parts[1:])


def glob_matches(pattern, path):
    parts = [p for p in path.split("/") if p]
    for alternative in expand_braces(pattern):
        segments = [s for s in alternative.split("/") if s]
        if parts_match(segments, parts):
            return True
    return False


def glob_cases(rng, count):
    lines = []
    while len(lines) < count:
        pattern = "/".join(gen_glob_segment(rng) for _ in range(rng.randint(1, 3)))
        if pattern.endswith("\\"):
            continue
        paths = set()
        for _ in range(12):
            paths.add("/".join(rng.choice(NAME_PARTS) for _ in range(rng.randint(1, 4))))
        # Paths built from the pattern itself, so that matches are common.
        for _ in range(4):
            segments = []
            for seg in expand_braces(pattern)[0].split("/"):
                if seg == "**":
                    segments.extend(rng.choice(NAME_PARTS) for _ in range(rng.randint(0, 2)))
                    continue
                text = re.sub(r"\\(.)", r"\1", seg)
                text = text.replace("*", rng.choice(["", "a", "bc"])).replace("?", rng.choice("abz"))
                text = re.sub(r"\[!?\^?([^\]]*)\]", lambda m: m.group(1)[:1] or "a", text)
                segments.append(text)
            path = "/".join(s for s in segments if s)
            if path:
                paths.add(path)
        cases = [[p, glob_matches(pattern, p)] for p in sorted(paths)]
        lines.append({"engine": "glob", "pattern": pattern, "cases": cases})
    return lines


def main():
    rng = random.Random(15)
    lines = regex_cases(rng, 1200) + glob_cases(rng, 700)
    os.makedirs(os.path.dirname(OUT), exist_ok=True)
    with open(OUT, "w", encoding="utf-8") as f:
        for line in lines:
            f.write(json.dumps(line, ensure_ascii=False) + "\n")
    regex_total = sum(len(l["cases"]) for l in lines if l["engine"] == "regex")
    regex_true = sum(c[1] for l in lines if l["engine"] == "regex" for c in l["cases"])
    glob_total = sum(len(l["cases"]) for l in lines if l["engine"] == "glob")
    glob_true = sum(c[1] for l in lines if l["engine"] == "glob" for c in l["cases"])
    print(f"wrote {OUT}: regex {regex_total} cases ({regex_true} matches), "
          f"glob {glob_total} cases ({glob_true} matches)")


if __name__ == "__main__":
    main()
