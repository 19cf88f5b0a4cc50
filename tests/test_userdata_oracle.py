"""wisp reads user-data as cloud-init does. Every document of the corpus
(tests/userdata_corpus.py: written by cloud-image-utils' write-mime-multipart, plain and
gzip'd, by Python's email package, and byte by byte; and the hand-written ones in
tests/userdata_corpus/) goes through Debian's cloud-init 22.4 (its UserDataProcessor,
then its CloudConfigPartHandler merging the cloud-config parts with its default
mergers, run once for the whole corpus by tests/cloudinit_parts.py under
/usr/bin/python3) and through `wisp userdata show FILE`; both must end with the same
leaf parts, in order, of the same kinds and decoded lengths, and the same merged
cloud-config. Documents wisp refuses (tests/userdata_corpus.py's rejected(), and
tests/userdata_corpus/rejected/) exit with status 1 and the reason; what cloud-init does
with each is recorded too (it is often lenient).

Includes are listed by both, not fetched: cloud-init's `_do_include` is replaced by one
that records the include where it stands.

Differences, kept out of the agreeing corpus and checked on both sides in
test_documented_differences (cloud-init's behaviour is recorded, so a change on either
side shows):
- `text/cloud-config-archive` is exploded by cloud-init into its entries; wisp lists it
  as one part of its own, which it does not run.
- `text/cloud-config-jsonp` is a part for both, but cloud-init applies it as a JSON
  patch to the merged cloud-config; wisp leaves it out of the merge.
- `#alpine-config` (tiny-cloud's marker) is cloud-config to wisp, unknown text to
  cloud-init.
- A gzip'd part whose type is not one of cloud-init's gzip types (text/x-shellscript,
  application/octet-stream) is inflated and sniffed by wisp; cloud-init keeps the gzip
  bytes under the type given. (A part of one of those types that is not gzip is refused
  by both.)
- A MIME document that is not UTF-8 (a raw gzip part with no transfer encoding) is read
  by wisp; cloud-init's `message_from_string` cannot decode it and fails.
- Non-ASCII text in a part without base64 (8bit, or inside a gzip'd part): Python's
  email package turns it into bytes with `raw-unicode-escape` (é becomes the byte 0xe9,
  ✓ the six characters `\u2713`); wisp keeps the bytes as sent. The generator base64s
  non-ASCII parts.
- A `Merge-Type` header or `merge_how` key: cloud-init merges as it says; wisp always
  merges by cloud-init's default (later top-level keys replace earlier ones).
- Empty user-data: one empty part to cloud-init (which then does nothing with it), no
  part to wisp.
- A part with no lines at all (two delimiter lines in a row): Python's parser drops it;
  wisp reads an empty part.
- White space before a marker: cloud-init strips what Python's `str.lstrip` strips
  (vertical tab, \x1c-\x1f, Unicode spaces); wisp strips ASCII space, tab, CR, LF and
  form feed.
- Includes: listed by both here; in a boot, cloud-init fetches any URL, wisp fetches
  http:// URLs to IPv4 addresses (no TLS, no DNS) and refuses the rest.

Refused by wisp, read by cloud-init (test_wisp_refuses): bzip2/xz-compressed documents
and parts, truncated gzip, a missing closing boundary or boundary parameter, invalid
base64, quoted-printable, multipart nested deeper than 4 levels, more than 64 parts,
more than 16 cloud-config parts.
"""

import base64
import gzip
import json
import subprocess

import pytest

import userdata_corpus

CLOUD_INIT_PYTHON = "/usr/bin/python3"
DRIVER = userdata_corpus.CORPUS.parent / "cloudinit_parts.py"

ACCEPTED = userdata_corpus.generated() + userdata_corpus.handwritten()
REJECTED = userdata_corpus.rejected()

# cloud-init's final Content-Types, as wisp names the kinds; any other is unknown.
KINDS = {
    "text/x-shellscript": "script",
    "text/x-shellscript-per-boot": "script-per-boot",
    "text/x-shellscript-per-instance": "script-per-instance",
    "text/x-shellscript-per-once": "script-per-once",
    "text/cloud-config": "cloud-config",
    "text/cloud-boothook": "cloud-boothook",
    "text/x-include-url": "include",
    "text/x-include-once-url": "include-once",
    "text/part-handler": "part-handler",
    "text/jinja2": "jinja",
    "text/cloud-config-jsonp": "cloud-config-jsonp",
}


def cloud_init(documents):
    """cloud-init's reading of each document, in one process."""
    encoded = json.dumps([base64.b64encode(document).decode() for document in documents])
    result = subprocess.run([CLOUD_INIT_PYTHON, str(DRIVER)], input=encoded, capture_output=True, text=True,
                            timeout=120, check=True)
    return json.loads(result.stdout)


@pytest.fixture(scope="module")
def cloud_init_reads():
    return dict(zip([name for name, _ in ACCEPTED], cloud_init([document for _, document in ACCEPTED])))


@pytest.fixture(scope="module")
def cloud_init_rejected():
    return dict(zip([name for name, *_ in REJECTED], cloud_init([document for _, document, *_ in REJECTED])))


def show(wisp, tmp_path, document):
    path = tmp_path / "user-data"
    path.write_bytes(document)
    # An empty root, so no configuration of the test machine is read; FILE is taken as given.
    empty_root = tmp_path / "root"
    empty_root.mkdir(exist_ok=True)
    return subprocess.run([str(wisp), "--root", str(empty_root), "userdata", "show", str(path)],
                          capture_output=True, text=True, timeout=30)


def test_corpus_size():
    assert len(ACCEPTED) >= 100 and len(userdata_corpus.handwritten()) >= 15 and len(REJECTED) >= 10
    assert len({name for name, _ in ACCEPTED}) == len(ACCEPTED)


@pytest.mark.parametrize("name,document", ACCEPTED, ids=[name for name, _ in ACCEPTED])
def test_wisp_reads_as_cloud_init(wisp, tmp_path, cloud_init_reads, name, document):
    expected = cloud_init_reads[name]
    assert "error" not in expected, expected
    result = show(wisp, tmp_path, document)
    assert result.returncode == 0, result.stderr
    shown = json.loads(result.stdout)
    assert [(part["kind"], part["bytes"]) for part in shown["parts"]] == \
        [(KINDS.get(part["type"], "unknown"), part["bytes"]) for part in expected["parts"]]
    assert shown["cloud_config"] == expected["cloud_config"]


@pytest.mark.parametrize("name,document,reason,cloud_init_does", REJECTED, ids=[name for name, *_ in REJECTED])
def test_wisp_refuses(wisp, tmp_path, cloud_init_rejected, name, document, reason, cloud_init_does):
    result = show(wisp, tmp_path, document)
    assert result.returncode == 1 and result.stdout == "", result
    assert result.stderr.startswith("wisp: ") and reason in result.stderr, result.stderr
    outcome = cloud_init_rejected[name]
    if "error" in outcome:
        assert cloud_init_does == "refuses", outcome
    else:
        count = len(outcome["parts"])
        assert cloud_init_does == f"reads {count} part" + ("s" if count != 1 else ""), outcome


def _mime(*parts):
    return userdata_corpus.multipart(*parts, boundary="d")


_SCRIPT_GZ = gzip.compress(b"#!/bin/sh\necho gzipped\n", mtime=0)
_NON_ASCII = "#!/bin/sh\necho 'h\u00e9llo \u2713'\n"

# (name, document, cloud-init's (kind, bytes) parts, its cloud-config, wisp's parts, wisp's cloud-config);
# None for cloud-init's parts: it refuses the document.
DIFFERENCES = [
    ("archive-exploded-by-cloud-init",
     b"#cloud-config-archive\n- type: text/x-shellscript\n  content: \"#!/bin/sh\\necho a\\n\"\n"
     b"- \"#cloud-config\\nhostname: archived\\n\"\n",
     [("script", 17), ("cloud-config", 33)], {"hostname": "archived"}, [("cloud-config-archive", 122)], None),
    ("jsonp-patch-applied-by-cloud-init",
     _mime("Content-Type: text/cloud-config\n\n#cloud-config\nhostname: a\n",
           "Content-Type: text/plain\n\n#cloud-config-jsonp\n[{\"op\": \"replace\", \"path\": \"/hostname\", \"value\": \"b\"}]\n"),
     [("cloud-config", 26), ("cloud-config-jsonp", 75)], {"hostname": "b"},
     [("cloud-config", 26), ("cloud-config-jsonp", 75)], {"hostname": "a"}),
    ("alpine-config-is-wisps-own-marker", b"#alpine-config\nhostname: alp\n",
     [("unknown", 29)], None, [("cloud-config", 29)], {"hostname": "alp"}),
    ("gzip-under-x-shellscript-inflated-by-wisp",
     _mime("Content-Type: text/x-shellscript\nContent-Transfer-Encoding: base64\n\n" + base64.b64encode(_SCRIPT_GZ).decode()),
     [("script", len(_SCRIPT_GZ))], None, [("script", 23)], None),
    ("gzip-under-octet-stream-inflated-by-wisp",
     _mime("Content-Type: application/octet-stream\nContent-Transfer-Encoding: base64\n\n" + base64.b64encode(_SCRIPT_GZ).decode()),
     [("unknown", len(_SCRIPT_GZ))], None, [("script", 23)], None),
    ("raw-binary-part-not-utf8",
     b"Content-Type: multipart/mixed; boundary=d\nMIME-Version: 1.0\n\n--d\nContent-Type: application/x-gzip\n\n"
     + _SCRIPT_GZ + b"\n--d--\n", None, None, [("script", 23)], None),
    ("non-ascii-8bit-text-reencoded-by-python",
     _mime("Content-Type: text/x-shellscript; charset=utf-8\nContent-Transfer-Encoding: 8bit\n\n" + _NON_ASCII),
     [("script", 30)], None, [("script", 28)], None),
    ("merge-type-header-honoured-by-cloud-init",
     _mime("Content-Type: text/cloud-config\n\n#cloud-config\nruncmd: [a]\n",
           "Content-Type: text/cloud-config\nMerge-Type: list(append)+dict(recurse_array)+str()\n\n"
           "#cloud-config\nruncmd: [b]\n"),
     [("cloud-config", 26), ("cloud-config", 26)], {"runcmd": ["a", "b"]},
     [("cloud-config", 26), ("cloud-config", 26)], {"runcmd": ["b"]}),
    ("empty-user-data", b"", [("unknown", 0)], None, [], None),
    ("part-with-no-lines-dropped-by-python",
     b"Content-Type: multipart/mixed; boundary=d\nMIME-Version: 1.0\n\n--d\n--d\nContent-Type: text/x-shellscript\n\n"
     b"#!/bin/sh\n--d--\n", [("script", 9)], None, [("unknown", 0), ("script", 9)], None),
    ("vertical-tab-before-marker-stripped-by-python", b"\x0b#!/bin/sh\necho vt\n",
     [("script", 19)], None, [("unknown", 19)], None),
]


@pytest.fixture(scope="module")
def cloud_init_differs():
    return dict(zip([name for name, *_ in DIFFERENCES], cloud_init([document for _, document, *_ in DIFFERENCES])))


@pytest.mark.parametrize("name,document,ci_parts,ci_config,wisp_parts,wisp_config", DIFFERENCES,
                         ids=[name for name, *_ in DIFFERENCES])
def test_documented_differences(wisp, tmp_path, cloud_init_differs, name, document, ci_parts, ci_config, wisp_parts,
                                wisp_config):
    """What the module's docstring lists, as each reads it now: a change on either side shows here."""
    expected = cloud_init_differs[name]
    if ci_parts is None:
        assert "error" in expected, expected
    else:
        assert [(KINDS.get(part["type"], "unknown"), part["bytes"]) for part in expected["parts"]] == ci_parts
        assert expected["cloud_config"] == ci_config
    result = show(wisp, tmp_path, document)
    assert result.returncode == 0, result.stderr
    shown = json.loads(result.stdout)
    assert [(part["kind"], part["bytes"]) for part in shown["parts"]] == wisp_parts
    assert shown["cloud_config"] == wisp_config
