"""User-data as cloud-init's tools write it: MIME multipart documents (made with
write-mime-multipart, the reference tool) whose script parts run in order."""

import base64
import gzip
import subprocess

from conftest import aws_metadata

FIRST = "#!/bin/sh\necho first >> \"$(dirname \"$0\")/../order\"\n"
SECOND = "#!/bin/sh\necho second >> \"$(dirname \"$0\")/../order\"\n"
CONFIG = "#cloud-config\nhostname: from-config\n"


def mime(tmp_path, *parts):
    """write-mime-multipart over files holding `parts` ([(text, type or None)])."""
    args = ["write-mime-multipart"]
    for i, (text, kind) in enumerate(parts):
        path = tmp_path / f"part{i}"
        path.write_text(text)
        args.append(f"{path}:{kind}" if kind else str(path))
    return subprocess.run(args, capture_output=True, check=True).stdout


def test_mime_scripts_run_in_order(run, imds, root, tmp_path):
    document = mime(tmp_path, (FIRST, "text/x-shellscript"), (CONFIG, None), (SECOND, None))
    assert b"MIME-Version" in document
    imds(aws_metadata(user_data_b64=base64.b64encode(document).decode()))
    result = run("bootstrap", root=root)
    assert result.rc == 0, result
    assert (root / "var/lib/cloud/order").read_text() == "first\nsecond\n"
    assert "final/run_userdata: ok: 2 scripts ran, 0 had run already, 0 parts not supported" in result.stderr
    assert sorted(p.name for p in (root / "var/lib/cloud/scripts").iterdir()) == ["part0", "part2", "per-boot", "per-instance", "per-once"]
    assert (root / "var/log/user-data.exit").read_text() == "0\n"


def test_gzip_mime_and_base64_parts(run, imds, root, tmp_path):
    # A part with base64 transfer encoding, the whole document gzip'd (as `write-mime-multipart -z` would).
    document = (b"Content-Type: multipart/mixed; boundary=\"XYZ\"\nMIME-Version: 1.0\n\n"
                b"--XYZ\nContent-Type: text/x-shellscript\nContent-Transfer-Encoding: base64\n\n"
                + base64.encodebytes(FIRST.encode()) + b"--XYZ--\n")
    imds(aws_metadata(user_data_b64=base64.b64encode(gzip.compress(document)).decode()))
    result = run("bootstrap", root=root)
    assert result.rc == 0, result
    assert (root / "var/lib/cloud/order").read_text() == "first\n"


def test_failing_part_stops_and_nothing_runs_from_a_broken_document(run, imds, root, tmp_path):
    failing = "#!/bin/sh\nexit 4\n"
    server = imds(aws_metadata(user_data_b64=base64.b64encode(mime(tmp_path, (failing, "text/x-shellscript"), (SECOND, None))).decode()))
    result = run("bootstrap", root=root)
    assert result.rc == 1
    assert "final/run_userdata: failed: part0 exited with status 4" in result.stderr, result.stderr
    assert not (root / "var/lib/cloud/order").exists()
    assert (root / "var/log/user-data.exit").read_text() == "4\n"
    # A document without its closing boundary: nothing of it runs.
    document = mime(tmp_path, (FIRST, "text/x-shellscript"), (SECOND, None))
    cut = document[:document.rindex(b"--")]
    server.update(user_data_b64=base64.b64encode(cut).decode(), instance_id="i-0000000000000000b")
    result = run("bootstrap", root=root)
    assert result.rc == 1 and "user-data: multipart MIME without its closing boundary" in result.stderr, result.stderr
    assert not (root / "var/lib/cloud/order").exists()
    # Bad base64 in a part: nothing runs either.
    bad = (b"Content-Type: multipart/mixed; boundary=\"B\"\nMIME-Version: 1.0\n\n--B\nContent-Type: text/x-shellscript\n\n"
           + FIRST.encode() + b"\n--B\nContent-Type: text/x-shellscript\nContent-Transfer-Encoding: base64\n\n!!!\n--B--\n")
    server.update(user_data_b64=base64.b64encode(bad).decode(), instance_id="i-0000000000000000c")
    result = run("bootstrap", root=root)
    assert result.rc == 1 and "user-data part 2: invalid base64" in result.stderr, result.stderr
    assert not (root / "var/lib/cloud/order").exists()
