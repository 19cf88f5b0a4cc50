"""A deterministic corpus of user-data documents for the oracle
(tests/test_userdata_oracle.py): MIME documents written by cloud-image-utils'
`write-mime-multipart` (plain and `--gzip`), by Python's email package (nested
multipart/mixed and multipart/alternative, base64, CRLF), and assembled byte by byte
(upper-case headers, folded headers, preambles, gzip'd parts under each of cloud-init's
gzip types, sniffed text/plain and mislabelled x-shellscript parts); the hand-written
documents in tests/userdata_corpus/; and the documents wisp refuses, with the reason.

Run as a script to write the generated documents to a directory for a look:
    python3 tests/userdata_corpus.py /tmp/corpus
"""

import base64
import bz2
import email.policy
import gzip
import lzma
import random
import re
import subprocess
import sys
import tempfile
from email import encoders
from email.mime.base import MIMEBase
from email.mime.multipart import MIMEMultipart
from email.mime.text import MIMEText
from pathlib import Path

import yaml

SEED = 20240607
CORPUS = Path(__file__).resolve().parent / "userdata_corpus"
WRITE_MIME_MULTIPART = "/usr/bin/write-mime-multipart"

# cloud-init's DECOMP_TYPES: parts of these types are gunzipped, then sniffed.
GZIP_TYPES = ["application/gzip", "application/gzip-compressed", "application/gzipped",
              "application/x-compress", "application/x-compressed", "application/x-gunzip",
              "application/x-gzip", "application/x-gzip-compressed"]

SCRIPTS = [
    "#!/bin/sh\necho one\n",
    "#!/bin/bash\nset -e\nfor i in 1 2 3; do echo \"$i\"; done\n",
    "#!/bin/sh\necho 'h\u00e9llo \u2713'\n",
    "  \n#!/usr/bin/env python3\nprint('leading blank line')\n",
    "#!/bin/sh\n# mime-version: mentioned in a comment past the first line\n",
]
BOOTHOOKS = ["#cloud-boothook\n#!/bin/sh\necho hook\n", "#cloud-boothook\necho plain hook\n", "#CLOUD-BOOTHOOK\necho upper\n"]
PART_HANDLER = "#part-handler\ndef list_types():\n    return []\n\ndef handle_part(data, ctype, filename, payload):\n    pass\n"
JINJA = "## template: jinja\n#cloud-config\nhostname: {{ v1.local_hostname }}\n"
INCLUDES = ["#include\nhttp://10.0.0.1/a.sh\nhttp://10.0.0.1/b.txt\n", "#include-once\nhttp://10.0.0.1/once\n",
            "#Include http://10.0.0.1/same-line\n"]
UNKNOWN = ["just some text\n", "# a comment, no marker\n", "echo no shebang\n", "", "{\"json\": true}\n"]
UNKNOWN_TYPES = ["application/octet-stream", "text/x-custom", "text/upstart-job", "text/html", "Application/JSON"]
WORDS = ["alpha", "beta", "gamma", "web", "db", "node", "alpine", "wheel", "docker", "nginx", "/etc/motd", "0644"]


def cloud_config(rng, marker="#cloud-config"):
    """A cloud-config whose top-level keys often repeat across parts, so that merging shows."""
    config = {}
    for key in rng.sample(["hostname", "runcmd", "packages", "timezone", "write_files", "bootcmd", "users",
                           "package_update", "final_message"], rng.randint(1, 4)):
        if key in ("hostname", "timezone", "final_message"):
            config[key] = rng.choice(WORDS) + "-" + str(rng.randint(1, 99))
        elif key in ("runcmd", "bootcmd", "packages"):
            config[key] = [rng.choice(WORDS) + " " + rng.choice(WORDS) for _ in range(rng.randint(1, 3))]
        elif key == "write_files":
            config[key] = [{"path": "/etc/" + rng.choice(WORDS).strip("/"), "content": rng.choice(WORDS) + "\n",
                            "permissions": "0644"}]
        elif key == "users":
            config[key] = ["default", {"name": rng.choice(WORDS).strip("/"), "groups": "wheel"}]
        else:
            config[key] = rng.choice([True, False])
    style = rng.choice([False, None, True])
    return marker + "\n" + yaml.safe_dump(config, default_flow_style=style, allow_unicode=True)


def random_part(rng):
    """(content type, text): what a user would put in one part, labelled as tools do."""
    choice = rng.randrange(14)
    if choice < 3:
        return rng.choice(["text/x-shellscript", "text/plain"]), rng.choice(SCRIPTS)
    if choice < 6:
        return rng.choice(["text/cloud-config", "text/plain", "text/x-shellscript"]), cloud_config(rng)
    if choice == 6:
        return rng.choice(["text/cloud-boothook", "text/plain"]), rng.choice(BOOTHOOKS)
    if choice == 7:
        return rng.choice(["text/x-shellscript-per-boot", "text/x-shellscript-per-instance",
                           "text/x-shellscript-per-once"]), rng.choice(SCRIPTS)
    if choice == 8:
        return rng.choice(["text/plain", "text/part-handler"]), PART_HANDLER
    if choice == 9:
        return rng.choice(["text/plain", "text/jinja2"]), JINJA
    if choice == 10:
        return "text/plain", rng.choice(INCLUDES)
    if choice == 11:
        return rng.choice(UNKNOWN_TYPES), rng.choice(UNKNOWN + SCRIPTS)
    if choice == 12:
        return "text/plain", rng.choice(UNKNOWN)
    return "text/x-shellscript", rng.choice(UNKNOWN[:3])


def fixed_boundaries(document):
    """Python's random boundaries (`===============123==`) numbered in order instead."""
    seen = {}
    return re.sub(rb"={15}\d+==", lambda m: seen.setdefault(m.group(0), b"===============%d==" % (len(seen) + 1)), document)


def write_mime_multipart(rng, index, compress):
    """cloud-image-utils' tool on files typed by their first line, or by `file:type`."""
    with tempfile.TemporaryDirectory() as scratch:
        arguments = []
        for number in range(rng.randint(1, 5)):
            ctype, text = random_part(rng)
            path = Path(scratch) / f"part-{number}.txt"
            path.write_text(text)
            explicit = rng.random() < 0.3 and ctype != "text/plain"
            arguments.append(f"{path}:{ctype}" if explicit else str(path))
        if rng.random() < 0.2:
            binary = Path(scratch) / "blob.bin"
            binary.write_bytes(bytes(rng.randrange(256) for _ in range(40)) + b"\xff")
            arguments.append(str(binary))
        command = [WRITE_MIME_MULTIPART, *(["--gzip"] if compress else []), *arguments]
        document = subprocess.run(command, check=True, capture_output=True).stdout
    if compress:
        # The gzip header holds a time and a name: made fixed, and the boundaries too.
        document = gzip.compress(fixed_boundaries(gzip.decompress(document)), mtime=0)
    return f"write-mime-multipart-{index:02d}" + ("-gzip" if compress else ""), fixed_boundaries(document)


def email_leaf(rng, ctype, text):
    maintype, subtype = ctype.lower().split("/", 1)
    roll = rng.random()
    # Non-ASCII text only base64'd: see test_documented_differences for the rest.
    if roll < 0.25 and text.isascii():
        part = MIMEBase("application", rng.choice(GZIP_TYPES).split("/", 1)[1])
        part.set_payload(gzip.compress(text.encode(), mtime=0))
        encoders.encode_base64(part)
    elif maintype == "text" and text.isascii() and roll < 0.7:
        part = MIMEText(text, subtype, "us-ascii")
    elif maintype == "text":
        part = MIMEText(text, subtype, "utf-8")
    else:
        part = MIMEBase(maintype, subtype)
        part.set_payload(text.encode())
        encoders.encode_base64(part)
    if rng.random() < 0.3:
        part.add_header("Content-Disposition", "attachment", filename=f"part-{rng.randint(1, 99)}.txt")
    return part


def email_tree(rng, depth, counter):
    subtype = rng.choice(["mixed", "mixed", "alternative"])
    counter[0] += 1
    outer = MIMEMultipart(subtype, boundary=f"==wisp-oracle-{counter[0]}==")
    for _ in range(rng.randint(1, 4)):
        if depth < 3 and rng.random() < 0.25:
            outer.attach(email_tree(rng, depth + 1, counter))
        else:
            outer.attach(email_leaf(rng, *random_part(rng)))
    return outer


def email_document(rng, index):
    """Python's email package: nested multiparts, base64 and gzip'd parts, LF or CRLF."""
    tree = email_tree(rng, 0, [0])
    crlf = rng.random() < 0.3
    document = tree.as_bytes(policy=email.policy.SMTP if crlf else email.policy.compat32)
    name = f"email-{index:02d}" + ("-crlf" if crlf else "")
    if rng.random() < 0.15:
        return name + "-gzip", gzip.compress(document, mtime=0)
    return name, document


def header_case(rng, name):
    return rng.choice([name, name.upper(), name.lower()])


def raw_document(rng, index):
    """Assembled byte by byte: header case, folding, preamble and epilogue, quoting."""
    newline = rng.choice(["\n", "\r\n"])
    boundary = rng.choice(["b", "==BOUNDARY==", "//", "a1b2c3-d4", "===============9213870938=="])
    quoted = f'"{boundary}"' if boundary == "//" or rng.random() < 0.6 else boundary
    fold = rng.random() < 0.4
    content_type = header_case(rng, "Content-Type")
    lines = [f"{content_type}: multipart/mixed;" + (newline + "\t" if fold else " ") + f"boundary={quoted}",
             f"{header_case(rng, 'MIME-Version')}: 1.0", ""]
    if rng.random() < 0.3:
        lines += ["This is a multi-part message in MIME format.", ""]
    for _ in range(rng.randint(1, 5)):
        ctype, text = random_part(rng)
        if rng.random() < 0.3:
            ctype = ctype.upper()
        headers = [f"{header_case(rng, 'Content-Type')}: {ctype}" + ('; charset="us-ascii"' if rng.random() < 0.5 else "")]
        body = text.replace("\n", newline)
        roll = rng.random()
        if not text.isascii():
            roll = 0.3
        if roll < 0.2:
            headers = [f"Content-Type: {rng.choice(GZIP_TYPES)}"]
            body = base64.encodebytes(gzip.compress(text.encode(), mtime=0)).decode().replace("\n", newline)
            headers.append(f"{header_case(rng, 'Content-Transfer-Encoding')}: base64")
        elif roll < 0.4:
            body = base64.encodebytes(body.encode()).decode().replace("\n", newline)
            headers.append(f"{header_case(rng, 'Content-Transfer-Encoding')}: {rng.choice(['base64', 'BASE64', 'Base64'])}")
        elif roll < 0.5:
            headers.append(f"Content-Transfer-Encoding: {rng.choice(['7bit', '8bit', 'binary'])}")
        if rng.random() < 0.3:
            headers.append(f'Content-Disposition: attachment; filename="s{rng.randint(1, 9)}.sh"')
        lines += [f"--{boundary}", *headers, "", body + ("" if body.endswith(newline) else newline)]
    lines.append(f"--{boundary}--")
    if rng.random() < 0.3:
        lines.append("epilogue text")
    document = newline.join(lines) + newline
    return f"raw-{index:02d}" + ("-crlf" if newline == "\r\n" else "") + ("-folded" if fold else ""), document.encode()


def single(rng, index):
    """A document that is one part, no MIME: as typed, gzip'd, or CRLF."""
    ctype, text = random_part(rng)
    while not text:  # empty user-data is none to wisp: see test_documented_differences
        ctype, text = random_part(rng)
    document = text.encode()
    if rng.random() < 0.3:
        document = document.replace(b"\n", b"\r\n")
    if rng.random() < 0.3:
        return f"single-{index:02d}-gzip", gzip.compress(document, mtime=0)
    return f"single-{index:02d}", document


def generated():
    """(name, document bytes) in a fixed order."""
    rng = random.Random(SEED)
    documents = []
    for index in range(16):
        documents.append(write_mime_multipart(rng, index, compress=index % 4 == 3))
    for index in range(36):
        documents.append(email_document(rng, index))
    for index in range(36):
        documents.append(raw_document(rng, index))
    for index in range(16):
        documents.append(single(rng, index))
    return documents


def handwritten():
    """(name, document bytes) of tests/userdata_corpus/*.txt."""
    return [(path.stem, path.read_bytes()) for path in sorted(CORPUS.glob("*.txt"))]


def multipart(*parts, boundary="b", head=""):
    """A multipart/mixed document of already-formatted parts (headers, blank line, body)."""
    body = "".join(f"--{boundary}\n{part}\n" for part in parts)
    return f"Content-Type: multipart/mixed; boundary=\"{boundary}\"\nMIME-Version: 1.0\n{head}\n{body}--{boundary}--\n".encode()


def nested(depth):
    """`depth` multiparts, one inside the other, around one script."""
    inner = "Content-Type: text/x-shellscript\n\n#!/bin/sh\necho deep\n"
    for level in range(depth - 1, 0, -1):
        inner = f"Content-Type: multipart/mixed; boundary=\"l{level}\"\n\n--l{level}\n{inner}\n--l{level}--"
    return multipart(inner, boundary="l0")


def rejected():
    """(name, document bytes, what wisp says, what cloud-init does): refused by wisp; the
    hand-written ones in tests/userdata_corpus/rejected/ carry their expectations in
    X-Wisp-Refuses and X-Cloud-Init headers."""
    script = "Content-Type: text/x-shellscript\n\n#!/bin/sh\necho hi\n"
    many = [script] * 65
    twenty = [f"Content-Type: text/cloud-config\n\n#cloud-config\nk{i}: {i}\n" for i in range(17)]
    documents = [
        ("bzip2-document", bz2.compress(b"#!/bin/sh\necho hi\n"), "user-data is bzip2-compressed", "reads 1 part"),
        ("xz-document", lzma.compress(b"#cloud-config\n{}\n"), "user-data is xz-compressed", "reads 1 part"),
        ("bzip2-part", multipart("Content-Type: application/x-bzip2\nContent-Transfer-Encoding: base64\n\n"
                                 + base64.b64encode(bz2.compress(b"#!/bin/sh\n")).decode()),
         "user-data part 1 is bzip2-compressed", "reads 1 part"),
        ("truncated-gzip-document", gzip.compress(b"#!/bin/sh\necho hi\n" * 20, mtime=0)[:-12],
         "user-data: gzip", "reads 1 part"),
        ("nested-5-deep", nested(5), "nested deeper than 4 levels", "reads 1 part"),
        ("parts-65", multipart(*many), "more than 64 parts", "reads 65 parts"),
        ("cloud-config-parts-17", multipart(*twenty), "more than 16 cloud-config parts", "reads 17 parts"),
        ("bad-base64", multipart("Content-Type: text/x-shellscript\nContent-Transfer-Encoding: base64\n\n"
                                 "IyEvYmluL3No*ZWNobyBoaQo=\n"), "user-data part 1: ", "reads 1 part"),
        ("gzip-type-not-gzip", multipart("Content-Type: application/x-gzip\n\n#!/bin/sh\necho not gzip\n"),
         "user-data part 1 is labelled application/x-gzip but is not gzip data", "refuses"),
    ]
    for path in sorted(CORPUS.glob("rejected/*.txt")):
        document = path.read_bytes()
        head = document.split(b"\n\n", 1)[0].decode()
        wisp = re.search(r"^X-Wisp-Refuses: (.*)$", head, re.M | re.I).group(1)
        cloud_init = re.search(r"^X-Cloud-Init: (.*)$", head, re.M | re.I).group(1)
        documents.append((path.stem, document, wisp, cloud_init))
    return documents


if __name__ == "__main__":
    out = Path(sys.argv[1])
    out.mkdir(parents=True, exist_ok=True)
    for name, document in generated():
        (out / name).write_bytes(document)
    for name, document, _, _ in rejected():
        (out / ("rejected-" + name)).write_bytes(document)
