"""#cloud-config end to end: documents built with write-mime-multipart and gzip, served by
the fake IMDS, applied by the real binary; every effect checked with its owner and mode."""

import base64
import gzip
import subprocess

import pytest

from conftest import ED25519, ECDSA, aws_metadata
from test_status import cloud_init_status
from test_userdata_parts import b64, multipart, ran, web  # noqa: F401 (web is a fixture)

RSA = ("ssh-rsa AAAAB3NzaC1yc2EAAAADAQABAAAAgQC5DAUS8OKi1H3mhEbX/OLSKFS+IBW08vSrA2i2e0ia/AtC4GZ6/tg7fotmEsVFl7UJRAjg3"
       "QlIrBhQVBYY4wVAeGFTY70KY0QBpjhYfaKs5wj95EdwMD9hKEp+UsC1s03xcec71DcnavA9kejGtqE7mrzU0GPyXUSXC0u/3zHeDQ== carol")

CONFIG = f"""#cloud-config
hostname: web-1
fqdn: web-1.example.internal
users:
  - default
  - name: carol
    gecos: Carol Example
    groups: [admins, docker]
    shell: /bin/ash
    sudo: ALL=(ALL) NOPASSWD:ALL
    lock_passwd: false
    passwd: $6$saltsalt$rGmGHbE8cVCUNUx/LjZ/Q0Tg6C1oztuvX9hZ3Qzqb2aDqCGAVZIuW4Mh06xGjAZk8fd8D.lQjRmF8u3d7Eq5e/
    ssh_authorized_keys:
      - {RSA}
  - name: svc
    system: true
    no_create_home: true
    shell: /sbin/nologin
ssh_authorized_keys:
  - {ECDSA}
write_files:
  - path: /etc/app/plain.conf
    content: |
      key = value
      other = 'quoted'
    permissions: '0640'
    owner: carol:admins
  - path: /etc/app/b64.bin
    encoding: b64
    content: {base64.b64encode(bytes(range(256))).decode()}
    permissions: 0600
  - path: /etc/app/gz.txt
    encoding: gz+b64
    content: {base64.b64encode(gzip.compress(b"compressed text" * 50)).decode()}
  - path: /etc/app/appended
    content: "second line\\n"
    append: true
  - path: /etc/app/late
    content: written in the final phase
    defer: true
    owner: carol
bootcmd:
  - echo boot >> /BOOTCMD_LOG
  - [sh, -c, "echo \\"it's quoted\\" >> /BOOTCMD_LOG"]
runcmd:
  - echo run >> /RUNCMD_LOG
  - [sh, -c, "test -e ROOTDIR/etc/app/late && echo late-exists >> /RUNCMD_LOG"]
"""


def document(tmp_path, root):
    """The issue's document: a script, the cloud-config and an include, MIME by
    write-mime-multipart, then gzip'd."""
    # Paths as the commands see them: chrooted into the root.
    config = CONFIG.replace("/BOOTCMD_LOG", "/bootcmd.log").replace("/RUNCMD_LOG", "/runcmd.log").replace("ROOTDIR", "")
    parts = [("script", "#!/bin/sh\necho script >> /script.log\n", "text/x-shellscript"),
             ("config", config, "text/cloud-config"),
             ("include", "http://169.254.169.254:8080/included.sh\n", "text/x-include-url")]
    args = ["write-mime-multipart"]
    for name, text, kind in parts:
        (tmp_path / name).write_text(text)
        args.append(f"{tmp_path / name}:{kind}")
    return gzip.compress(subprocess.run(args, capture_output=True, check=True).stdout)


def passwd_entry(root, name):
    for line in (root / "etc/passwd").read_text().splitlines():
        if line.split(":")[0] == name:
            return line.split(":")
    return None


def group_entry(root, name):
    for line in (root / "etc/group").read_text().splitlines():
        if line.split(":")[0] == name:
            return line.split(":")
    return None


def stat(path):
    s = path.lstat()
    return (s.st_mode & 0o7777, s.st_uid, s.st_gid)


def test_issue_document_end_to_end(run, imds, root, tmp_path, web):
    (web / "included.sh").write_text("#!/bin/sh\necho included >> /script.log\n")
    (root / "etc/app").mkdir(parents=True)
    (root / "etc/app/appended").write_text("first line\n")
    (root / "etc/sudoers.d").mkdir()
    server = imds(aws_metadata(user_data_b64=b64(document(tmp_path, root)), keys=[["alice", ED25519]]))
    result = run("bootstrap", root=root)
    assert result.rc == 0, result
    # Host name from cloud-config's fqdn, not the metadata's.
    assert result.hostname == "web-1"
    assert "127.0.1.1\tweb-1.example.internal web-1" in (root / "etc/hosts").read_text()
    # Users: the default one, carol with her groups, shell, gecos, password, keys, sudo; svc.
    alpine = passwd_entry(root, "alpine")
    carol = passwd_entry(root, "carol")
    assert carol[4:] == ["Carol Example", "/home/carol", "/bin/ash"]
    carol_uid, carol_gid = int(carol[2]), int(carol[3])
    assert group_entry(root, "carol")[2] == str(carol_gid)
    for name in ("admins", "docker"):
        assert "carol" in group_entry(root, name)[3].split(",")
    shadow = {line.split(":")[0]: line.split(":") for line in (root / "etc/shadow").read_text().splitlines()}
    assert shadow["carol"][1].startswith("$6$saltsalt$")
    assert shadow["alpine"][1] == "*"
    svc = passwd_entry(root, "svc")
    assert 100 <= int(svc[2]) <= 999 and svc[6] == "/sbin/nologin" and not (root / "home/svc").exists()
    assert (root / "etc/sudoers.d/wisp-users").read_text() == "carol ALL=(ALL) NOPASSWD:ALL\n"
    assert stat(root / "etc/sudoers.d/wisp-users")[0] == 0o440
    carol_keys = root / "home/carol/.ssh/authorized_keys"
    assert carol_keys.read_text().strip() == RSA
    assert stat(carol_keys) == (0o600, carol_uid, carol_gid)
    assert stat(root / "home/carol/.ssh") == (0o700, carol_uid, carol_gid)
    alpine_keys = (root / "home/alpine/.ssh/authorized_keys").read_text()
    assert ED25519 in alpine_keys and ECDSA in alpine_keys
    # write_files: content, encodings, modes, owners, append, defer.
    plain = root / "etc/app/plain.conf"
    assert plain.read_text() == "key = value\nother = 'quoted'\n"
    assert stat(plain) == (0o640, carol_uid, int(group_entry(root, "admins")[2]))
    assert (root / "etc/app/b64.bin").read_bytes() == bytes(range(256))
    assert stat(root / "etc/app/b64.bin") == (0o600, 0, 0)
    assert (root / "etc/app/gz.txt").read_bytes() == b"compressed text" * 50
    assert stat(root / "etc/app/gz.txt") == (0o644, 0, 0)
    assert (root / "etc/app/appended").read_text() == "first line\nsecond line\n"
    assert (root / "etc/app/late").read_text() == "written in the final phase"
    assert stat(root / "etc/app/late") == (0o644, carol_uid, carol_gid)
    # Commands and scripts: bootcmd in main, runcmd after the deferred files, the
    # user's script and the included one.
    assert (root / "bootcmd.log").read_text() == "boot\nit's quoted\n"
    assert (root / "runcmd.log").read_text() == "run\nlate-exists\n"
    assert (root / "script.log").read_text() == "script\nincluded\n"
    assert "SECRET" not in result.stderr
    assert int(alpine[2]) == 1000
    # What Packer and Terraform wait on: Debian's cloud-init reads wisp's status as done.
    waited = cloud_init_status(root, "--wait")
    assert waited.returncode == 0 and "status: done" in waited.stdout, waited

    # A rerun on the same instance changes nothing but bootcmd's every-boot output.
    before = {p: p.read_bytes() for p in (root / "etc").rglob("*") if p.is_file()}
    result = run("bootstrap", root=root)
    assert result.rc == 0, result
    assert {p: p.read_bytes() for p in (root / "etc").rglob("*") if p.is_file()} == before
    assert (root / "bootcmd.log").read_text() == "boot\nit's quoted\n" * 2
    assert (root / "runcmd.log").read_text() == "run\nlate-exists\n"
    assert (root / "script.log").read_text() == "script\nincluded\n"
    assert (root / "etc/app/appended").read_text() == "first line\nsecond line\n"

    # A new instance: the per-instance work runs again; append still adds nothing twice.
    server.update(instance_id="i-0000000000000000b")
    result = run("bootstrap", root=root)
    assert result.rc == 0, result
    assert (root / "runcmd.log").read_text() == "run\nlate-exists\n" * 2
    assert (root / "script.log").read_text() == "script\nincluded\n" * 2
    assert (root / "etc/app/appended").read_text() == "first line\nsecond line\n"
    assert passwd_entry(root, "carol") == carol


def test_yaml_error_applies_nothing_but_the_owner_gets_in(run, imds, root):
    bad = "#cloud-config\nruncmd:\n  - echo one\nwrite_files:\n  - path: /etc/x\n    content: 'unterminated\n"
    imds(aws_metadata(user_data=bad))
    result = run("bootstrap", root=root)
    assert result.rc == 1
    assert "main/userdata_bootcmd: failed: user-data part 1: YAML line" in result.stderr, result.stderr
    assert not (root / "etc/x").exists()
    assert not (root / "var/lib/cloud/.bootstrap-complete").exists()
    # Metadata's user, host name and keys were applied before the user-data actions.
    assert (root / "home/alpine/.ssh/authorized_keys").exists()
    assert result.hostname == "ip-10-0-1-23"


@pytest.mark.parametrize("config, message", [
    ("write_files: {path: /x}\n", "cloud-config line 2 column 14: write_files: expected a list"),
    ("runcmd: echo hi\n", "runcmd: expected a list"),
    ("- just\n- a list\n", "the document is not a mapping of keys"),
    ("power_state: {mode: explode}\n", "power_state: mode must be poweroff, reboot or halt"),
    ("timezone: ../../etc/passwd\n", "timezone"),
])
def test_bad_cloud_config_names_the_problem(run, imds, root, config, message):
    imds(aws_metadata(user_data="#cloud-config\n" + config))
    result = run("bootstrap", root=root)
    assert result.rc == 1, result
    assert message in result.stderr, result.stderr
    assert not (root / "var/lib/cloud/.bootstrap-complete").exists()


def test_unknown_keys_warn_and_documents_merge(run, imds, root):
    first = "#cloud-config\nhostname: first\nruncmd: [echo first >> /merged]\nfrobnicate: 1\n"
    second = "#cloud-config\nruncmd: [echo second >> /merged]\n"
    imds(aws_metadata(user_data_b64=b64(multipart(("text/cloud-config", first, ""), ("text/cloud-config", second, "")))))
    result = run("bootstrap", root=root)
    assert result.rc == 0, result
    assert "wisp: warning: cloud-config line 4: frobnicate: not applied by wisp" in result.stderr
    # cloud-init's default merge: a later document's key replaces the earlier one's.
    assert (root / "merged").read_text() == "second\n"
    assert result.hostname == "first"


def test_users_without_default_and_preserve_hostname(run, imds, root):
    config = "#cloud-config\npreserve_hostname: true\nmanage_etc_hosts: false\nusers:\n  - name: dave\n"
    imds(aws_metadata(user_data=config))
    result = run("bootstrap", root=root)
    assert result.rc == 0, result
    assert passwd_entry(root, "alpine") is None and passwd_entry(root, "dave") is not None
    assert "cloud-config users lists no default: alpine not created" in result.stderr
    assert "preserve_hostname: left as it is" in result.stderr
    assert "127.0.1.1" not in (root / "etc/hosts").read_text()


def test_passwords_chpasswd_and_plain_text(run, imds, root):
    config = """#cloud-config
users:
  - default
  - name: erin
    plain_text_passwd: correct horse
    lock_passwd: true
chpasswd:
  expire: false
  users:
    - {name: alpine, password: "$6$abc$8bH.kx3CCSJxSSJ1kRjRwd1o6UVa1qzw5G/K7grKNy8vYJk2ckN7aSdmfgCP0zZ6vL1lYgfV7o5Sdu7sCiIRZ1", type: hash}
"""
    imds(aws_metadata(user_data=config))
    result = run("bootstrap", root=root)
    assert result.rc == 0, result
    shadow = {line.split(":")[0]: line.split(":") for line in (root / "etc/shadow").read_text().splitlines()}
    assert shadow["alpine"][1].startswith("$6$abc$8bH.")
    assert shadow["alpine"][2] != "0"
    erin = shadow["erin"][1]
    assert erin.startswith("!$6$") and len(erin.split("$")[2]) == 16
    # The hash is what Python's crypt (glibc) computes for the same salt.
    crypt = subprocess.run(["python3", "-c", "import crypt, sys; print(crypt.crypt('correct horse', sys.argv[1]))",
                            "$6$" + erin.split("$")[2]], capture_output=True, text=True)
    if crypt.returncode == 0:
        assert crypt.stdout.strip() == erin[1:]
    else:
        openssl = subprocess.run(["openssl", "passwd", "-6", "-salt", erin.split("$")[2], "correct horse"],
                                 capture_output=True, text=True, check=True)
        assert openssl.stdout.strip() == erin[1:]
    assert "correct horse" not in result.stderr + (root / "var/log/wisp.log").read_text()


def fake_apk(root):
    """An image's /sbin/apk that records its arguments in apk.log."""
    (root / "sbin").mkdir()
    apk = root / "sbin/apk"
    apk.write_text("#!/bin/sh\necho \"$@\" >> /apk.log\n")
    apk.chmod(0o755)


def test_packages_through_apk(run, imds, root):
    fake_apk(root)
    config = "#cloud-config\npackage_update: true\npackages:\n  - nginx\n  - [curl, 8.5.0-r0]\n"
    imds(aws_metadata(user_data=config))
    result = run("bootstrap", root=root)
    assert result.rc == 0, result
    assert (root / "apk.log").read_text() == "update\nadd nginx curl=8.5.0-r0\n"


def test_packages_without_apk_is_a_clear_error(run, imds, root):
    imds(aws_metadata(user_data="#cloud-config\npackages: [nginx]\n"))
    result = run("bootstrap", root=root)
    assert result.rc == 1
    assert "packages: /sbin/apk not found (wisp installs packages with apk only)" in result.stderr


def test_timezone(run, imds, root):
    zoneinfo = root / "usr/share/zoneinfo/Europe"
    zoneinfo.mkdir(parents=True)
    (zoneinfo / "Berlin").write_bytes(b"TZif2 fake")
    imds(aws_metadata(user_data="#cloud-config\ntimezone: Europe/Berlin\n"))
    result = run("bootstrap", root=root)
    assert result.rc == 0, result
    import os
    assert os.readlink(root / "etc/localtime") == "/usr/share/zoneinfo/Europe/Berlin"
    assert (root / "etc/timezone").read_text() == "Europe/Berlin\n"


def test_timezone_missing_from_the_image(run, imds, root):
    imds(aws_metadata(user_data="#cloud-config\ntimezone: Mars/Olympus\n"))
    result = run("bootstrap", root=root)
    assert result.rc == 1
    assert "no /usr/share/zoneinfo/Mars/Olympus in the image (install tzdata)" in result.stderr


def test_power_state_runs_the_images_tool_after_completion(run, imds, root):
    (root / "sbin").mkdir()
    tool = root / "sbin/reboot"
    tool.write_text("#!/bin/sh\necho \"$0 $@\" >> /power.log\ntest -e /var/lib/cloud/.bootstrap-complete && echo complete >> /power.log\n")
    tool.chmod(0o755)
    server = imds(aws_metadata(user_data="#cloud-config\npower_state:\n  mode: reboot\n  delay: '+2'\n  message: bye\n  condition: true\n"))
    result = run("bootstrap", root=root)
    assert result.rc == 0, result
    assert (root / "power.log").read_text() == "/sbin/reboot -d 120\ncomplete\n"
    # A false condition (a command that fails) does nothing.
    (root / "power.log").unlink()
    server.update(instance_id="i-0000000000000000b",
                  user_data="#cloud-config\npower_state: {mode: reboot, condition: [test, -e, /nonexistent]}\n")
    result = run("bootstrap", root=root)
    assert result.rc == 0, result
    assert "condition exited non-zero: nothing done" in result.stderr
    assert not (root / "power.log").exists()


def test_mounts_written_to_fstab_and_mounted(run, imds, root, tmp_path):
    # An ext4 image on a loop device, as a VM runtime attaches a volume, and a tmpfs.
    content = tmp_path / "content"
    content.mkdir()
    (content / "hello").write_text("from the volume\n")
    image = tmp_path / "volume.img"
    subprocess.run(["truncate", "-s", "16M", image], check=True)
    subprocess.run(["mkfs.ext4", "-q", "-F", "-d", content, image], check=True)
    loop = subprocess.run(["losetup", "-f", "--show", image], capture_output=True, text=True, check=True).stdout.strip()
    try:
        subprocess.run(["cp", "-a", loop, root / "dev/"], check=True)
        # A device that exists but holds no filesystem: its mount fails.
        subprocess.run(["cp", "-a", "/dev/null", root / "dev/"], check=True)
        (root / "etc/fstab").write_text("/dev/vda1\t/\text4\tdefaults\t0\t1\n")
        config = f"""#cloud-config
mounts:
  - [{loop}, /data, ext4, "defaults,noatime"]
  - [tmpfs, /mnt/scratch, tmpfs, "size=1m,mode=0700"]
  - [/dev/null, /never, auto, "defaults,nofail"]
  - [swap, none, swap, sw]
runcmd:
  - cat /data/hello >> /mounted
  - stat -f -c %T /mnt/scratch >> /mounted
  - stat -c %a /mnt/scratch >> /mounted
"""
        server = imds(aws_metadata(user_data=config))
        result = run("bootstrap", root=root)
        assert result.rc == 0, result
        # runcmd runs chrooted into the root: what it sees at /data is the volume under root.
        assert (root / "mounted").read_text() == "from the volume\ntmpfs\n700\n"
        fstab = (root / "etc/fstab").read_text().splitlines()
        assert fstab[0] == "/dev/vda1\t/\text4\tdefaults\t0\t1"
        assert fstab[1:] == [f"{loop}\t/data\text4\tdefaults,noatime,comment=cloudconfig\t0\t2",
                             "tmpfs\t/mnt/scratch\ttmpfs\tsize=1m,mode=0700,comment=cloudconfig\t0\t2",
                             "/dev/null\t/never\tauto\tdefaults,nofail,comment=cloudconfig\t0\t2"]
        assert "mounts /never (nofail): mount" in result.stderr
        assert "mounts: entry 4 left out" in result.stderr
        # Again, on a new instance: the same file, nothing appended twice.
        server.update(instance_id="i-0000000000000000b")
        result = run("bootstrap", root=root)
        assert result.rc == 0, result
        assert (root / "etc/fstab").read_text().splitlines() == fstab
    finally:
        subprocess.run(["losetup", "-d", loop], check=False)


def test_a_mount_that_fails_without_nofail_fails_the_action(run, imds, root):
    subprocess.run(["cp", "-a", "/dev/null", root / "dev/"], check=True)
    imds(aws_metadata(user_data="#cloud-config\nmounts:\n  - [/dev/null, /data, ext4, defaults]\n"))
    result = run("bootstrap", root=root)
    assert result.rc == 1
    assert "main/userdata_mounts: failed: mounts /data: mount" in result.stderr, result.stderr
    assert "/dev/null\t/data\text4\tdefaults,comment=cloudconfig\t0\t2" in (root / "etc/fstab").read_text()


def test_user_options_groups_and_doas(run, imds, root):
    (root / "opt").mkdir()
    config = """#cloud-config
groups:
  - ops
  - admins: [alpine, ghost]
users:
  - default
  - name: frank
    uid: 2001
    primary_group: staff
    groups: ops, wheel
    homedir: /opt/frank
    doas: ["permit nopass frank as root", "permit frank cmd reboot"]
  - name: gina
    uid: 3000
    no-create-home: true
    sudo: ["ALL=(ALL) ALL", "ALL=(backup) NOPASSWD: /usr/bin/rsync"]
"""
    server = imds(aws_metadata(user_data=config))
    result = run("bootstrap", root=root)
    assert result.rc == 0, result
    frank = passwd_entry(root, "frank")
    staff = group_entry(root, "staff")
    assert frank[2] == "2001" and frank[3] == staff[2] and frank[5] == "/opt/frank"
    assert stat(root / "opt/frank") == (0o755, int(frank[2]), int(staff[2]))
    assert "frank" in group_entry(root, "ops")[3].split(",") and "frank" in group_entry(root, "wheel")[3].split(",")
    # Top-level groups: made, with members that exist; a missing user is left out.
    assert group_entry(root, "admins")[3] == "alpine"
    assert "groups: admins: no user ghost: not added" in result.stderr
    assert (root / "etc/doas.d/wisp-users.conf").read_text() == "permit nopass frank as root\npermit frank cmd reboot\n"
    assert stat(root / "etc/doas.d/wisp-users.conf")[0] == 0o440
    assert (root / "etc/sudoers.d/wisp-users").read_text() == "gina ALL=(ALL) ALL\ngina ALL=(backup) NOPASSWD: /usr/bin/rsync\n"
    # cloud-init reads `no-create-home` as `no_create_home`; a given uid is the own group's gid too.
    assert passwd_entry(root, "gina")[5] == "/home/gina" and not (root / "home/gina").exists()
    assert passwd_entry(root, "gina")[2:4] == ["3000", "3000"] and group_entry(root, "gina")[2] == "3000"
    # A rerun changes no account file; a new instance whose user-data has no sudo or doas
    # rules takes the rules files away.
    accounts = [(root / f"etc/{name}").read_text() for name in ("passwd", "group", "shadow")]
    assert run("bootstrap", root=root).rc == 0
    assert [(root / f"etc/{name}").read_text() for name in ("passwd", "group", "shadow")] == accounts
    server.update(instance_id="i-0000000000000000b", user_data="#cloud-config\nusers: [default, {name: frank}]\n")
    result = run("bootstrap", root=root)
    assert result.rc == 0, result
    assert not (root / "etc/sudoers.d/wisp-users").exists() and not (root / "etc/doas.d/wisp-users.conf").exists()


def test_a_rule_with_a_line_break_is_refused(run, imds, root):
    imds(aws_metadata(user_data='#cloud-config\nusers:\n  - name: mallory\n    sudo: "ALL=(ALL) ALL\\nALL ALL=(ALL) NOPASSWD: ALL"\n'))
    result = run("bootstrap", root=root)
    assert result.rc == 1
    assert "users: a sudo or doas rule holds a line break" in result.stderr, result.stderr
    assert not (root / "etc/sudoers.d/wisp-users").exists()
    # Found before anything of the document is applied.
    assert "mallory" not in (root / "etc/passwd").read_text()


def test_power_state_without_the_tool_asks_the_kernel(wisp, netns, imds, root):
    """An image with no poweroff tool: wisp calls reboot(2) itself. Run in a PID namespace
    of its own, where reboot(2) ends that namespace's init (the shell here), never the
    machine: the shell is killed before it can print wisp's exit."""
    imds(aws_metadata(user_data="#cloud-config\npower_state: {mode: poweroff, message: going down}\n"))
    script = '"$@"; echo "wisp returned $?"'
    process = netns.exec(["unshare", "--pid", "--fork", "--uts", "--mount", "sh", "-c", script, "sh",
                          str(wisp), "--root", str(root), "bootstrap"], capture_output=True, text=True, timeout=60)
    assert "power_state: going down" in process.stderr, process.stderr
    assert "power_state: no /sbin/poweroff: poweroff with reboot(2) in 0 seconds" in process.stderr, process.stderr
    assert "wisp returned" not in process.stdout, process
    assert process.returncode != 0
    assert (root / "var/lib/cloud/.bootstrap-complete").exists()


def test_bootcmd_and_boothooks_see_the_instance_id(run, imds, root):
    config = "#cloud-config\nbootcmd:\n  - echo \"bootcmd $INSTANCE_ID\" >> /iid\n"
    hook = "#cloud-boothook\n#!/bin/sh\necho \"boothook $INSTANCE_ID\" >> /iid\n"
    imds(aws_metadata(user_data_b64=b64(multipart(("text/cloud-boothook", hook, ""), ("text/cloud-config", config, "")))))
    result = run("bootstrap", root=root)
    assert result.rc == 0, result
    assert (root / "iid").read_text() == "boothook i-0123456789abcdef0\nbootcmd i-0123456789abcdef0\n"


def test_many_packages_in_one_apk_add(run, imds, root):
    fake_apk(root)
    names = [f"pkg{i}" for i in range(30)]
    imds(aws_metadata(user_data="#cloud-config\npackages: [" + ", ".join(names) + "]\n"))
    result = run("bootstrap", root=root)
    assert result.rc == 0, result
    assert (root / "apk.log").read_text() == "add " + " ".join(names) + "\n"


@pytest.mark.parametrize("owner, reason", [
    ("ghost", "owner ghost: no such user"),
    ("root:ghosts", "owner root:ghosts: no such group"),
])
def test_write_files_with_an_unknown_owner_is_refused(run, imds, root, owner, reason):
    imds(aws_metadata(user_data=f"#cloud-config\nwrite_files:\n  - path: /etc/owned\n    content: x\n    owner: {owner}\n"))
    result = run("bootstrap", root=root)
    assert result.rc == 1
    assert f"write_files /etc/owned: {reason}" in result.stderr, result.stderr
    assert not (root / "etc/owned").exists()
