"""`wisp clean` before capturing an image: the instance's state goes, the image's own
files stay, and the next boot of the image is a first boot again."""

import base64
import os
import stat

from conftest import aws_metadata, snapshot
from test_userdata import mime

# User-data runs chrooted into --root: the scripts write into the scratch root.
SCRIPT = "#!/bin/sh\necho script >> /wisp-clean-order\n"
PER_INSTANCE = "#!/bin/sh\necho per-instance >> /wisp-clean-order\n"


def bootstrapped(run, imds, root, tmp_path):
    """A root after one bootstrap, with a script and a per-instance script in its user-data."""
    document = mime(tmp_path, (SCRIPT, "text/x-shellscript"), (PER_INSTANCE, "text/x-shellscript-per-instance"))
    imds(aws_metadata(user_data_b64=base64.b64encode(document).decode()))
    (root / "var/lib/cloud/seed/nocloud").mkdir(parents=True)
    (root / "var/lib/cloud/seed/nocloud/meta-data").write_text("instance-id: image-builder\n")
    result = run("bootstrap", root=root)
    assert result.rc == 0, result
    assert (root / "wisp-clean-order").read_text() == "per-instance\nscript\n"
    return root


def test_clean_makes_the_next_boot_a_first_boot(run, imds, root, tmp_path):
    bootstrapped(run, imds, root, tmp_path)
    var = root / "var/lib/cloud"
    for name in (".bootstrap-complete", ".instance-id", "user-data", "scripts", ".per-instance-done"):
        assert (var / name).exists(), name
    # Without clean, the same instance's next boot runs no user-data again.
    again = run("bootstrap", root=root)
    assert again.rc == 0 and (root / "wisp-clean-order").read_text() == "per-instance\nscript\n", again

    result = run("clean", root=root)
    assert result.rc == 0 and result.stdout == "" and result.stderr == "", result
    assert sorted(p.name for p in var.iterdir()) == ["seed"]
    assert (var / "seed/nocloud/meta-data").read_text() == "instance-id: image-builder\n"
    # The logs stay without --logs.
    assert (root / "var/log/wisp.log").exists() and (root / "var/log/user-data.exit").exists()
    status = run("status", root=root)
    assert status.rc == 1 and status.stdout == "incomplete\n", status

    # The image's next boot, on the same instance even, is a first boot.
    first = run("bootstrap", root=root)
    assert first.rc == 0, first
    assert "final/run_userdata: ok: 2 scripts ran" in first.stderr, first.stderr
    assert (root / "wisp-clean-order").read_text() == "per-instance\nscript\n" * 2
    assert run("status", root=root).stdout == "complete i-0123456789abcdef0\n"


def test_clean_is_idempotent_and_needs_nothing(run, imds, root, tmp_path):
    bootstrapped(run, imds, root, tmp_path)
    assert run("clean", root=root).rc == 0
    after_one = snapshot(root)
    assert run("clean", root=root).rc == 0
    assert snapshot(root) == after_one
    # A root wisp never ran in: nothing to do, nothing created.
    empty = tmp_path / "empty"
    empty.mkdir()
    (empty / "etc").mkdir()
    result = run("clean", "--logs", "--ssh-host-keys", "--machine-id", root=empty)
    assert result.rc == 0, result
    assert snapshot(empty) == {"etc": ("dir", "0o755", 0, 0)}


def test_logs_host_keys_and_machine_id(run, imds, root, tmp_path):
    bootstrapped(run, imds, root, tmp_path)
    ssh = root / "etc/ssh"
    ssh.mkdir()
    keep = ["sshd_config", "moduli", "ssh_host_rsa_key.bak"]
    gone = ["ssh_host_ed25519_key", "ssh_host_ed25519_key.pub", "ssh_host_rsa_key", "ssh_host_rsa_key.pub",
            "ssh_host_ecdsa_key-cert.pub"]
    for name in keep + gone:
        (ssh / name).write_text(name + "\n")
    (root / "etc/machine-id").write_text("0123456789abcdef0123456789abcdef\n")
    (root / "var/log/messages").write_text("not wisp's\n")

    # Without the flags, none of them is touched.
    assert run("clean", root=root).rc == 0
    assert sorted(os.listdir(ssh)) == sorted(keep + gone)
    assert (root / "etc/machine-id").read_text() == "0123456789abcdef0123456789abcdef\n"

    result = run("clean", "--logs", "--ssh-host-keys", "--machine-id", root=root)
    assert result.rc == 0, result
    assert sorted(os.listdir(ssh)) == sorted(keep)
    machine_id = root / "etc/machine-id"
    assert machine_id.read_bytes() == b"" and stat.S_IMODE(machine_id.stat().st_mode) == 0o444
    assert sorted(os.listdir(root / "var/log")) == ["messages"]
    assert not list(root.rglob("*.wisp-new"))


def test_a_file_that_cannot_go_fails_with_its_path(run, imds, root, tmp_path):
    bootstrapped(run, imds, root, tmp_path)
    # A directory where wisp keeps a file, nested deeper than wisp ever writes: refused, named.
    (root / "var/lib/cloud/includes/a/b/c").mkdir(parents=True)
    result = run("clean", root=root)
    assert result.rc == 1, result
    # Named as the instance sees it: `--root` is where the image is mounted.
    assert "clean: /var/lib/cloud/includes: is a directory\n" in result.stderr, result.stderr
    # The marker went first: whatever else stayed, the next boot is a first boot.
    assert not (root / "var/lib/cloud/.bootstrap-complete").exists()


def test_usage_errors(run, root):
    for args in (["clean", "--seed"], ["clean", "/var/lib/cloud"]):
        result = run(*args, root=root)
        assert result.rc == 2 and "wisp --help" in result.stderr, result
