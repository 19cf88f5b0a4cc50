"""wisp bootstrapping a scratch root against the fake AWS IMDS, end to end."""

import base64
import os
import stat
from pathlib import Path

import pytest

from conftest import ECDSA, ED25519, aws_metadata, leftover_temporaries, snapshot

SCRIPT = "#!/bin/sh\necho \"hello from user-data $$\"\necho ran > \"$(dirname \"$0\")/script-ran\"\nexit 0\n"


def mode(path):
    return stat.S_IMODE(os.lstat(path).st_mode)


def owner(path):
    st = os.lstat(path)
    return st.st_uid, st.st_gid


def without_logs(state):
    """Less the logs and cloud-init's status (rewritten with new times by every run)."""
    return {path: value for path, value in state.items() if not path.startswith(("var/log/", "run/cloud-init/"))}


def test_bootstrap_end_to_end(run, imds, root):
    server = imds(aws_metadata(user_data=SCRIPT))
    result = run("bootstrap", root=root)
    assert result.rc == 0, result

    # early: user-data saved, 0600.
    saved = root / "var/lib/cloud/user-data"
    assert saved.read_text() == SCRIPT
    assert mode(saved) == 0o600

    # main: the default user, created natively.
    passwd = (root / "etc/passwd").read_text()
    assert "alpine:x:1000:1000:Linux User,,,:/home/alpine:/bin/sh\n" in passwd
    assert "alpine:x:1000:\n" in (root / "etc/group").read_text()
    assert "wheel:x:10:root,alpine\n" in (root / "etc/group").read_text()
    shadow = (root / "etc/shadow").read_text()
    assert any(line.startswith("alpine:*:") for line in shadow.splitlines())
    assert mode(root / "etc/shadow") == 0o640 and owner(root / "etc/shadow") == (0, 42)
    assert (root / "etc/doas.d/wheel.conf").read_text() == "permit nopass :wheel\n"
    home = root / "home/alpine"
    assert owner(home) == (1000, 1000)

    # main: the hostname, in the kernel of this UTS namespace and in /etc.
    assert result.hostname == "ip-10-0-1-23"
    assert (root / "etc/hostname").read_text() == "ip-10-0-1-23\n"
    hosts = (root / "etc/hosts").read_text()
    assert hosts.count("127.0.1.1") == 1
    assert "127.0.1.1\tip-10-0-1-23.eu-west-1.compute.internal ip-10-0-1-23\n" in hosts

    # main: the keys.
    keys = home / ".ssh/authorized_keys"
    assert keys.read_text() == ED25519 + "\n" + ECDSA + "\n"
    assert mode(home / ".ssh") == 0o700 and mode(keys) == 0o600
    assert owner(home / ".ssh") == (1000, 1000) and owner(keys) == (1000, 1000)

    # final: the script ran, its output and exit code are logged, the bootstrap is complete.
    assert (root / "var/lib/cloud/script-ran").read_text() == "ran\n"
    assert (root / "var/log/user-data.log").read_text().startswith("hello from user-data")
    assert (root / "var/log/user-data.exit").read_text() == "0\n"
    assert (root / "var/lib/cloud/.bootstrap-complete").exists()
    assert (root / "var/lib/cloud/.instance-id").read_text() == "i-0123456789abcdef0\n"
    assert (root / "var/lib/cloud/.autodetect").read_text() == "CLOUD=aws\n"
    # boot: sshd enabled, interfaces written.
    assert os.readlink(root / "etc/runlevels/default/sshd") == "/etc/init.d/sshd"
    assert (root / "etc/network/interfaces").read_text() == \
        "auto lo\niface lo inet loopback\n\nauto eth0\niface eth0\n\tuse dhcp\n\n"

    # One line per action on stderr and in wisp.log, with its time.
    log = (root / "var/log/wisp.log").read_text()
    for action in ("boot/expand_root", "early/save_userdata", "main/create_default_user",
                   "main/set_hostname", "main/set_ssh_keys", "final/run_userdata",
                   "final/bootstrap_complete"):
        assert action in result.stderr and action in log
    assert "main/set_ssh_keys: ok: 2 keys for alpine" in log
    assert " ms)" in log
    assert not leftover_temporaries(root)

    # IMDSv2: one token for the whole run, every GET carries it.
    requests = server.requests()
    puts = [r for r in requests if r["method"] == "PUT"]
    assert len(puts) == 1 and puts[0]["headers"]["x-aws-ec2-metadata-token-ttl-seconds"] == "5"
    gets = [r for r in requests if r["method"] == "GET"]
    assert gets and all("x-aws-ec2-metadata-token" in r["headers"] for r in gets)
    assert all(r["status"] == 200 or r["status"] == 404 for r in requests)


def test_rerun_changes_nothing_and_asks_only_the_instance_id(run, imds, root, features):
    server = imds(aws_metadata(user_data=SCRIPT))
    assert run("bootstrap", root=root).rc == 0
    before = without_logs(snapshot(root))
    server.clear_log()
    result = run("bootstrap", root=root)
    assert result.rc == 0, result
    assert without_logs(snapshot(root)) == before
    paths = sorted(r["path"] for r in server.requests())
    # boot needs no network; each later phase asks for the instance-id only.
    assert set(paths) <= {"/latest/api/token", "/latest/meta-data/instance-id"}
    assert paths.count("/latest/api/token") == 1
    # boot brings the network up at every boot (here there is no interface to bring up).
    assert "boot: bootstrap complete: per-boot work only" in result.stderr
    # Later phases run only their every-boot actions (boothooks, bootcmd, per-boot
    # scripts), of which this user-data has none. A build without boothooks (userdata) and
    # bootcmd (cloud-config) has only the final phase's.
    per_boot = 3 if {"userdata", "cloud-config"} <= features else 1
    assert result.stderr.count("bootstrap complete for i-0123456789abcdef0: per-boot work only") == per_boot
    # Each phase alone, as the service scripts run them, is a no-op too.
    for phase in ("boot", "early", "main", "final"):
        result = run(phase, root=root)
        assert result.rc == 0 and ("nothing to do" in result.stderr or "per-boot work only" in result.stderr), result
    assert without_logs(snapshot(root)) == before


def test_new_instance_bootstraps_again(run, imds, root):
    server = imds(aws_metadata(user_data=SCRIPT))
    assert run("bootstrap", root=root).rc == 0
    (root / "var/lib/cloud/script-ran").unlink()
    server.update(instance_id="i-0fedcba9876543210", hostname="ip-10-0-9-9.ec2.internal",
                  keys=[["carol", ED25519]])
    result = run("bootstrap", root=root)
    assert result.rc == 0, result
    assert "new instance i-0fedcba9876543210 (was i-0123456789abcdef0)" in result.stderr
    assert (root / "var/lib/cloud/.instance-id").read_text() == "i-0fedcba9876543210\n"
    assert (root / "var/lib/cloud/script-ran").exists()
    assert result.hostname == "ip-10-0-9-9"
    hosts = (root / "etc/hosts").read_text()
    assert hosts.count("127.0.1.1") == 1 and "ip-10-0-9-9.ec2.internal" in hosts
    # The early phase ran the boot phase's actions for the new instance.
    assert "boot/expand_root" in result.stderr.split("new instance")[1]


def test_phases_one_by_one(run, imds, root):
    imds(aws_metadata(user_data=SCRIPT))
    for phase in ("boot", "early", "main"):
        result = run(phase, root=root)
        assert result.rc == 0, result
        assert not (root / "var/lib/cloud/.bootstrap-complete").exists()
    assert run("status", root=root).stdout == "incomplete i-0123456789abcdef0\n"
    result = run("final", root=root)
    assert result.rc == 0, result
    status = run("status", root=root)
    assert (status.rc, status.stdout) == (0, "complete i-0123456789abcdef0\n")


def test_failing_script_leaves_bootstrap_incomplete(run, imds, root):
    imds(aws_metadata(user_data="#!/bin/sh\necho failing >&2\nexit 3\n"))
    result = run("bootstrap", root=root)
    assert result.rc == 1, result
    assert "final/run_userdata: failed: user-data script exited with status 3" in result.stderr
    assert (root / "var/log/user-data.exit").read_text() == "3\n"
    assert "failing" in (root / "var/log/user-data.log").read_text()
    assert not (root / "var/lib/cloud/.bootstrap-complete").exists()
    assert run("status", root=root).rc == 1


def test_no_user_data_and_no_keys(run, imds, root):
    server = imds(aws_metadata(keys=[]))
    result = run("bootstrap", root=root)
    assert result.rc == 0, result
    saved = root / "var/lib/cloud/user-data"
    assert saved.read_bytes() == b"" and mode(saved) == 0o600
    assert "no keys in the metadata" in result.stderr
    assert not (root / "home/alpine/.ssh/authorized_keys").exists()
    assert any(r["path"] == "/latest/user-data" and r["status"] == 404 for r in server.requests())


def test_binary_user_data_is_saved_byte_for_byte_and_never_logged(run, imds, root):
    secret = b"password: hunter2-SECRET\n" + bytes(range(256))
    server = imds(aws_metadata(user_data_b64=base64.b64encode(secret).decode(), token="TOKEN-SECRET-abc"))
    result = run("bootstrap", root=root)
    assert result.rc == 0, result
    assert (root / "var/lib/cloud/user-data").read_bytes() == secret
    everything = result.stderr + result.stdout + (root / "var/log/wisp.log").read_text()
    assert "SECRET" not in everything
    assert "user-data part 1 (text/plain): unknown: not supported, not run" in result.stderr
    assert server.requests()


def test_existing_keys_are_kept(run, imds, root):
    imds(aws_metadata(keys=[["alice", ED25519]]))
    ssh = root / "home/alpine/.ssh"
    assert run("boot", root=root).rc == 0
    assert run("early", root=root).rc == 0
    # The user exists after main; plant an older authorized_keys first.
    assert run("main", root=root).rc == 0
    keys = ssh / "authorized_keys"
    mine = "# added by hand\n" + ECDSA + "\n" + ED25519.replace("alice@laptop", "other comment") + "\n"
    keys.write_text(mine)
    os.chmod(keys, 0o644)
    result = run("main", root=root)
    assert result.rc == 0, result
    assert keys.read_text() == mine
    assert mode(keys) == 0o600 and owner(keys) == (1000, 1000)


def test_existing_user_is_not_touched(run, imds, root):
    (root / "etc/passwd").write_text((root / "etc/passwd").read_text() + "alpine:x:1234:1234::/home/alpine:/bin/ash\n")
    (root / "etc/group").write_text((root / "etc/group").read_text().replace("wheel:x:10:root", "wheel:x:10:root,alpine")
                                    + "alpine:x:1234:\n")
    (root / "etc/shadow").write_text((root / "etc/shadow").read_text() + "alpine:$6$x$y:19000:0:99999:7:::\n")
    (root / "home/alpine").mkdir()
    imds()
    result = run("bootstrap", root=root)
    assert result.rc == 0, result
    # The user is kept; only the missing doas rule is added.
    assert "create_default_user: ok: alpine (uid 1234): doas (" in result.stderr, result.stderr
    assert [l for l in (root / "etc/passwd").read_text().splitlines() if l.startswith("alpine:")] == \
        ["alpine:x:1234:1234::/home/alpine:/bin/ash"]
    assert "alpine:$6$x$y:19000" in (root / "etc/shadow").read_text()
    assert owner(root / "home/alpine/.ssh/authorized_keys") == (1234, 1234)


def test_imds_command(run, imds, root):
    imds(aws_metadata(user_data="#!/bin/sh\n"))
    result = run("imds", "@instance-id", "@hostname", "@ssh-keys", root=root)
    assert result.rc == 0, result
    assert result.stdout == ("i-0123456789abcdef0\nip-10-0-1-23.eu-west-1.compute.internal\n"
                             + ED25519 + "\n" + ECDSA + "\n")
    result = run("imds", "@userdata", root=root)
    assert (result.rc, result.stdout) == (0, "#!/bin/sh\n")
    result = run("imds", "/latest/meta-data/ami-id", root=root)
    assert (result.rc, result.stdout) == (0, "ami-0123456789abcdef0\n")
    result = run("imds", "latest/meta-data/nope", root=root)
    assert result.rc == 1 and "not found" in result.stderr
    result = run("imds", "@bogus", root=root)
    assert result.rc == 2 and "unknown key @bogus" in result.stderr


def test_expired_token_is_renewed_once(run, imds, root):
    # Tokens that die at once: every GET of the first round is refused with 401.
    server = imds(aws_metadata(token_lifetime_s=0))
    result = run("imds", "@instance-id", root=root)
    assert result.rc == 1, result
    puts = [r for r in server.requests() if r["method"] == "PUT"]
    assert len(puts) == 2, "one token, then exactly one renewal"
    assert "401" in result.stderr


def test_token_renewed_after_expiry_then_works(run, imds, root):
    server = imds(aws_metadata(token_lifetime_s=1))
    result = run("imds", "@instance-id", root=root)
    assert result.rc == 0
    assert len([r for r in server.requests() if r["method"] == "PUT"]) == 1


def test_disabled(run, imds, root):
    server = imds()
    (root / "etc/tiny-cloud.disabled").write_text("")
    result = run("bootstrap", root=root)
    assert result.rc == 0 and "disabled by /etc/tiny-cloud.disabled" in result.stderr
    assert server.requests() == []
    assert not (root / "var/lib/cloud/user-data").exists()


@pytest.mark.needs("userdata")
def test_gzip_user_data_is_saved_decompressed(run, imds, root):
    import gzip
    imds(aws_metadata(user_data_b64=base64.b64encode(gzip.compress(SCRIPT.encode())).decode()))
    result = run("bootstrap", root=root)
    assert result.rc == 0, result
    assert (root / "var/lib/cloud/user-data").read_text() == SCRIPT
    assert (root / "var/lib/cloud/script-ran").exists()


@pytest.mark.needs("userdata", "cloud-config")
def test_compressed_user_data_errors(run, imds, root):
    """User-data that does not decompress is kept as received and applies nothing; the
    instance still gets its user and keys, and the bootstrap stays incomplete."""
    import gzip
    bomb = gzip.compress(b"\0" * (17 << 20))
    server = imds(aws_metadata(user_data_b64=base64.b64encode(bomb).decode()))
    result = run("bootstrap", root=root)
    assert result.rc == 1, result
    assert "early/save_userdata: ok: saved" in result.stderr and "it does not decode: user-data: gzip data expands past 16777216 bytes" in result.stderr
    assert "main/userdata_bootcmd: failed: user-data: gzip data expands past 16777216 bytes" in result.stderr, result
    assert (root / "var/lib/cloud/user-data").read_bytes() == bomb
    assert (root / "home/alpine/.ssh/authorized_keys").exists()
    assert not (root / "var/lib/cloud/.bootstrap-complete").exists()
    truncated = gzip.compress(SCRIPT.encode())[:-6]
    server.update(user_data_b64=base64.b64encode(truncated).decode())
    result = run("bootstrap", root=root)
    assert result.rc == 1 and "user-data: gzip data is truncated" in result.stderr, result
    corrupt = bytearray(gzip.compress(SCRIPT.encode()))
    corrupt[-8] ^= 0xff  # the CRC32 in the trailer
    server.update(user_data_b64=base64.b64encode(bytes(corrupt)).decode())
    result = run("bootstrap", root=root)
    assert result.rc == 1 and "user-data: gzip CRC32 mismatch" in result.stderr, result
    server.update(user_data_b64=base64.b64encode(b"\xfd7zXZ\x00\x00rest").decode())
    result = run("bootstrap", root=root)
    assert result.rc == 1 and "user-data is xz-compressed: unsupported compression" in result.stderr, result
    assert not (root / "var/lib/cloud/script-ran").exists()
