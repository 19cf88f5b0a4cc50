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

Differences on purpose, kept out of the agreeing corpus and checked in
test_documented_differences:
- `text/cloud-config-archive` is exploded by cloud-init into its entries; wisp lists it
  as one part of its own, which it does not run.
- `text/cloud-config-jsonp` is a part for both, but cloud-init applies it as a JSON
  patch to the merged cloud-config; wisp leaves it out of the merge.
- `#alpine-config` (tiny-cloud's marker) is cloud-config to wisp, unknown text to
  cloud-init.
- A gzip'd part whose type is not one of cloud-init's gzip types (text/x-shellscript,
  application/octet-stream) is inflated and sniffed by wisp; cloud-init keeps the gzip
  bytes under the type given.
- A MIME document that is not UTF-8 (a raw gzip part with no transfer encoding) is read
  by wisp; cloud-init's `message_from_string` cannot decode it and fails.
- A `Merge-Type` header or `merge_how` key: cloud-init merges as it says; wisp always
  merges by its default (later top-level keys replace earlier).
"""

import base64
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
