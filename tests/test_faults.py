"""Faults and bad input: each ends in a clear error or a correct result, within the
configured deadline, with no half-written file and no completion marker."""

import os

from conftest import ED25519, aws_metadata, leftover_temporaries

# TEST_CONFIG's WISP_HTTP_TOTAL_MS, and room for start-up and the namespace tools.
DEADLINE_S = 3.0
MARGIN_S = 2.5


def assert_failed_cleanly(result, root, phase, message):
    assert result.rc == 1, result
    assert message in result.stderr, result.stderr
    assert f"{phase}: " in result.stderr
    assert not (root / "var/lib/cloud/.bootstrap-complete").exists()
    assert not leftover_temporaries(root)


def test_connection_refused(run, netns, root):
    # No server at all in the namespace: every connection is refused.
    result = run("bootstrap", root=root)
    assert_failed_cleanly(result, root, "early", "cannot connect: connection refused")
    assert result.seconds < DEADLINE_S + MARGIN_S
    assert not (root / "var/lib/cloud/user-data").exists()


def test_service_that_never_answers(run, imds, root):
    imds(aws_metadata(faults={"hang_paths": ["*"], "hang_s": 60}))
    result = run("bootstrap", root=root)
    assert_failed_cleanly(result, root, "early", "no complete answer within")
    assert result.seconds < DEADLINE_S + MARGIN_S


def test_500_then_200(run, imds, root):
    server = imds(aws_metadata(faults={"fail_first": {"*": 2}}))
    result = run("bootstrap", root=root)
    assert result.rc == 0, result
    statuses = [r["status"] for r in server.requests()]
    assert statuses.count(500) >= 2 and 200 in statuses
    assert (root / "var/lib/cloud/.bootstrap-complete").exists()


def test_500_forever(run, imds, root):
    imds(aws_metadata(faults={"fail_first": {"/latest/meta-data/instance-id": 10_000}}))
    result = run("bootstrap", root=root)
    assert_failed_cleanly(result, root, "early", "@instance-id: HTTP status 500")
    assert result.seconds < DEADLINE_S + MARGIN_S


def test_truncated_response(run, imds, root):
    imds(aws_metadata(faults={"truncate_paths": ["/latest/meta-data/instance-id"]}))
    result = run("bootstrap", root=root)
    assert_failed_cleanly(result, root, "early", "connection closed after 9 of 100 body bytes")


def test_garbage_response(run, imds, root):
    imds(aws_metadata(faults={"garbage_paths": ["/latest/user-data"]}))
    result = run("bootstrap", root=root)
    assert_failed_cleanly(result, root, "early", "not an HTTP response")
    assert not (root / "var/lib/cloud/user-data").exists()


def test_connection_closed_without_answer(run, imds, root):
    imds(aws_metadata(faults={"close_paths": ["/latest/api/token"]}))
    result = run("imds", "@instance-id", root=root)
    assert result.rc == 1 and "metadata token:" in result.stderr, result


def test_header_over_the_limit(run, imds, root):
    imds(aws_metadata(faults={"huge_header_paths": ["/latest/meta-data/hostname"], "huge_header_bytes": 70000}))
    result = run("bootstrap", root=root)
    assert_failed_cleanly(result, root, "main/set_hostname", "response head larger than 4096 bytes")
    # Limits are not retried: the failure is immediate.
    assert result.seconds < DEADLINE_S


def test_user_data_over_the_limit(run, imds, root):
    imds(aws_metadata(faults={"huge_body_paths": ["/latest/user-data"], "huge_body_bytes": 300 * 1024}))
    result = run("bootstrap", root=root)
    assert_failed_cleanly(result, root, "early", "response body larger than")
    assert not (root / "var/lib/cloud/user-data").exists()


def assert_left_out(result, root, message):
    """Data wrong for good: a warning in the log, the rest applied, the bootstrap done."""
    assert result.rc == 0, result
    warning = next(line for line in result.stderr.splitlines() if message in line)
    assert "warning: " in warning and warning.endswith("left out"), warning
    assert warning.removeprefix("wisp: ") in (root / "var/log/wisp.log").read_text()
    assert (root / "var/lib/cloud/.bootstrap-complete").exists()
    assert not leftover_temporaries(root)


def test_hostname_with_bad_characters(run, imds, root):
    imds(aws_metadata(hostname="bad_host;reboot.example.com"))
    result = run("bootstrap", root=root)
    assert_left_out(result, root, "hostname has byte 0x5f at position 3")
    assert "main/set_hostname: ok: left as it is" in result.stderr
    assert (root / "etc/hostname").read_text() == "localhost\n"
    assert "127.0.1.1" not in (root / "etc/hosts").read_text()
    assert result.hostname != "bad_host"
    assert (root / "home/alpine/.ssh/authorized_keys").exists()


def test_hostname_label_over_63_bytes(run, imds, root):
    imds(aws_metadata(hostname="a" * 64 + ".example.com"))
    result = run("bootstrap", root=root)
    assert_left_out(result, root, "hostname label 1 is longer than 63 bytes")
    assert (root / "etc/hostname").read_text() == "localhost\n"


def test_key_with_control_characters(run, imds, root):
    imds(aws_metadata(keys=[["alice", ED25519], ["evil", "ssh-ed25519 AAAAC3NzaC1lZDI1NTE5\x1b[2J x"]]))
    result = run("bootstrap", root=root)
    assert_left_out(result, root, "set_ssh_keys: metadata key 2: key line has a control character at position 32")
    assert "\x1b" not in result.stderr and "\x1b" not in (root / "var/log/wisp.log").read_text()
    assert (root / "home/alpine/.ssh/authorized_keys").read_text() == ED25519 + "\n"


def test_invalid_key_listing(run, imds, root):
    imds(aws_metadata(keys=[["alice", "not a key at all"]]))
    result = run("bootstrap", root=root)
    assert_left_out(result, root, "metadata key 1: key line options are not as sshd(8) reads them at position 0")
    assert "main/set_ssh_keys: ok: no keys in the metadata" in result.stderr
    assert not (root / "home/alpine/.ssh/authorized_keys").exists()


def test_symlink_at_dot_ssh_is_not_followed(run, imds, root, tmp_path):
    target = tmp_path / "elsewhere"
    target.mkdir()
    (root / "home/alpine").mkdir(parents=True)
    os.symlink(target, root / "home/alpine/.ssh")
    imds()
    result = run("bootstrap", root=root)
    assert_failed_cleanly(result, root, "main/set_ssh_keys", "a symlink is refused")
    assert list(target.iterdir()) == []
    assert os.path.islink(root / "home/alpine/.ssh")


def test_symlink_at_authorized_keys_is_not_followed(run, imds, root, tmp_path):
    secret = tmp_path / "secret"
    secret.write_text("root-only\n")
    ssh = root / "home/alpine/.ssh"
    ssh.mkdir(parents=True)
    os.symlink(secret, ssh / "authorized_keys")
    imds()
    result = run("bootstrap", root=root)
    assert_failed_cleanly(result, root, "main/set_ssh_keys", "a symlink is refused")
    assert secret.read_text() == "root-only\n"


def test_invalid_instance_id(run, imds, root):
    imds(aws_metadata(instance_id="../../etc/passwd"))
    result = run("bootstrap", root=root)
    assert_failed_cleanly(result, root, "early", "invalid instance-id")
    assert not (root / "var/lib/cloud/.instance-id").exists()


def test_complete_instance_with_imds_down_is_left_alone(run, imds, root, netns):
    server = imds()
    assert run("bootstrap", root=root).rc == 0
    server.stop()
    result = run("main", root=root)
    assert result.rc == 0, result
    assert "assuming the same instance" in result.stderr
