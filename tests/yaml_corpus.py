"""A deterministic corpus of YAML documents for the oracle (tests/test_yaml_oracle.py):
random cloud-config-like values dumped by PyYAML in many styles, and the hand-written
documents in tests/yaml_corpus/ (accepted) and tests/yaml_corpus/rejected/ (outside
wisp's subset, or malformed).

Run as a script to write the generated documents to a directory for a look:
    python3 tests/yaml_corpus.py /tmp/corpus
"""

import random
import sys
from pathlib import Path

import yaml

SEED = 20240601
CORPUS = Path(__file__).resolve().parent / "yaml_corpus"

# Strings that must be quoted to stay strings, or that exercise folding and escapes.
# Floats as keys, NaN, NEL/LS/PS and integers beyond 64 bits are left out: wisp writes
# float keys from their text, refuses the line separators and big integers, and NaN is
# never equal to itself.
TRICKY = [
    "yes", "No", "on", "OFF", "true", "null", "~", "", " ", "0755", "0o17", "09", "1_000", "0x1F",
    "0b101", "1:30", "1.5", ".5", "1e5", "1.0e+5", ".inf", "-.inf", "2024-01-02", "=", "<<",
    "- item", "key: value", "a #not comment", "# hash", "ends with colon:", "@at", "`tick",
    "%percent", "&amp", "*star", "!bang", "|pipe", ">fold", "?query", "[brackets]", "{braces}",
    "a, b", "quote ' and \"", "back\\slash", "tab\there", "bell\x07", "esc\x1b[0m",
    " leading space", "trailing space ", "two  spaces", "multi\nline\n", "multi\nline no end",
    "trailing newlines\n\n\n", "\nleading newline", "indented\n  second\n    third\n",
    "unicode é ✓ 日本語", "emoji 😀", "nbsp\xa0here", "---", "...", "- - x",
    "sudo: ALL=(ALL) NOPASSWD:ALL", "http://example.com:8080/path?q=1#frag",
    "ssh-ed25519 AAAAC3NzaC1lZDI1NTE5AAAAIP6zWIGFsiIt1uW2eXmASHnCRo/IiaNJBUNBBBA8SwbT alice@laptop",
]
# PyYAML writes a key holding a line break, or an empty one in a block style, as a complex
# key (`? key`), which wisp refuses.
TRICKY_KEYS = [text for text in TRICKY if "\n" not in text and text.strip()]
WORDS = ["alpha", "beta", "gamma", "delta", "web", "db", "node", "eth0", "ubuntu", "alpine", "wheel",
         "sudo", "docker", "nginx", "/etc/motd", "/var/lib/app", "ALL", "admin", "0644", "true"]
KEYS = ["hostname", "users", "name", "groups", "shell", "sudo", "ssh_authorized_keys", "write_files",
        "path", "content", "owner", "permissions", "encoding", "append", "runcmd", "bootcmd", "packages",
        "package_update", "package_upgrade", "timezone", "locale", "mounts", "swap", "ntp", "apt",
        "sources", "final_message", "power_state", "mode", "delay", "lock_passwd", "passwd", "gecos",
        "primary_group", "homedir", "system", "uid", "chpasswd", "expire", "list", "disk_setup"]

STYLES = [
    ("block", dict(default_flow_style=False)),
    ("flow", dict(default_flow_style=True)),
    ("mixed", dict(default_flow_style=None)),
    ("indent4-width40", dict(default_flow_style=False, indent=4, width=40)),
    ("indent3-start-end", dict(default_flow_style=False, indent=3, explicit_start=True, explicit_end=True)),
    ("narrow-unicode", dict(default_flow_style=False, width=20, allow_unicode=True)),
    ("flow-narrow", dict(default_flow_style=True, width=30, allow_unicode=True)),
    ("crlf", dict(default_flow_style=False, line_break="\r\n", explicit_start=True)),
    ("double-quoted", dict(default_flow_style=False, default_style='"', width=50)),
    ("single-quoted", dict(default_flow_style=False, default_style="'", allow_unicode=True)),
    ("literal", dict(default_flow_style=False, default_style="|")),
    ("folded", dict(default_flow_style=False, default_style=">", width=30)),
]


def scalar(rng, strings_only):
    kind = rng.random()
    if kind < 0.35:
        return rng.choice(TRICKY)
    if kind < 0.55 or strings_only:
        words = [rng.choice(WORDS) for _ in range(rng.randint(1, 12))]
        text = " ".join(words)
        if rng.random() < 0.2:
            text = "\n".join(words) + rng.choice(["", "\n", "\n\n"])
        return text
    if kind < 0.7:
        return rng.choice([0, 1, -1, 7, 493, 1000, -42, 2**31, -(2**40), 2**62, rng.randint(-10**9, 10**9)])
    if kind < 0.8:
        return rng.choice([0.5, -1.25, 1e20, 3.0e-7, 100.0, float("inf"), float("-inf"), rng.uniform(-1e6, 1e6)])
    if kind < 0.9:
        return rng.choice([True, False])
    return None


def value(rng, depth, strings_only):
    roll = rng.random()
    if depth >= 4 or roll < 0.45:
        return scalar(rng, strings_only)
    if roll < 0.7:
        return [value(rng, depth + 1, strings_only) for _ in range(rng.randint(0, 5))]
    return mapping(rng, depth + 1, strings_only)


def mapping(rng, depth, strings_only):
    result = {}
    for _ in range(rng.randint(0, 6)):
        roll = rng.random()
        if roll < 0.75:
            key = rng.choice(KEYS)
        elif roll < 0.9 or strings_only:
            key = rng.choice(TRICKY_KEYS)
        else:
            key = rng.choice([2, 3, 42, None])
        result[key] = value(rng, depth, strings_only)
    return result


def cloud_config(rng, strings_only):
    """A document shaped like a cloud-config: the usual modules, then random values."""
    users = [{"name": rng.choice(WORDS), "groups": [rng.choice(WORDS) for _ in range(rng.randint(0, 3))],
              "sudo": rng.choice(["ALL=(ALL) NOPASSWD:ALL", False, ["ALL=(ALL) ALL"]]),
              "ssh_authorized_keys": [rng.choice(TRICKY[-1:]) for _ in range(rng.randint(1, 2))]}
             for _ in range(rng.randint(1, 3))]
    files = [{"path": "/etc/" + rng.choice(WORDS).strip("/"), "content": rng.choice(TRICKY + ["#!/bin/sh\necho hi\n\nexit 0\n"]),
              "permissions": rng.choice(["0644", "0755", "0600"])} for _ in range(rng.randint(1, 3))]
    doc = {"hostname": rng.choice(WORDS), "users": ["default"] + users, "write_files": files,
           "runcmd": [rng.choice([scalar(rng, True), [rng.choice(WORDS) for _ in range(3)]]) for _ in range(rng.randint(1, 4))]}
    doc.update(mapping(rng, 1, strings_only))
    if strings_only:
        doc = stringify(doc)
    return doc


def stringify(value):
    """Every scalar as a string: a dumper forcing a quote style tags anything else (!!int)."""
    if isinstance(value, dict):
        return {str(k): stringify(v) for k, v in value.items()}
    if isinstance(value, list):
        return [stringify(v) for v in value]
    return str(value)


def generated(count_per_style=12):
    """(name, text) for each generated document, always the same ones."""
    rng = random.Random(SEED)
    for style, options in STYLES:
        strings_only = "default_style" in options
        for i in range(count_per_style):
            value_ = cloud_config(rng, strings_only) if i % 4 else value(rng, 0, strings_only)
            # A cloud-config document is a mapping: other values go one level down.
            if not isinstance(value_, dict):
                value_ = {"document": value_}
            text = yaml.safe_dump(value_, sort_keys=False, **options)
            yield f"{style}-{i:02d}", "#cloud-config\n" + text


def handwritten():
    return [(path.stem, path.read_text()) for path in sorted(CORPUS.glob("*.yaml"))]


def rejected():
    return [(path.stem, path.read_text()) for path in sorted((CORPUS / "rejected").glob("*.yaml"))]


if __name__ == "__main__":
    out = Path(sys.argv[1])
    out.mkdir(parents=True, exist_ok=True)
    for name, text in generated():
        (out / (name + ".yaml")).write_bytes(text.encode())
