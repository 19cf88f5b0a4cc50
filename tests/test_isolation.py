"""Issue 14: one bad datum or one failed action never locks the owner out. Each case of
the issue, against the fake IMDS, with the end state of every file it touches and the log.
"""

import base64
import datetime
import gzip
import json
import os
import time

from conftest import ALPINE_SHADOW, ECDSA, ED25519, aws_metadata, leftover_temporaries

# A third key, made with ssh-keygen -t ed25519 for these tests.
ED25519_B = "ssh-ed25519 AAAAC3NzaC1lZDI1NTE5AAAAIPlpbJ6qPHdU8G9BuD3H5pE6x3dFZDBbvybrXnxTjHEV carol@desk"
TRUNCATED = ED25519[:40]
KEYS = "home/alpine/.ssh/authorized_keys"


def stat(path):
    s = path.lstat()
    return (s.st_mode & 0o7777, s.st_uid, s.st_gid)


def log(root):
    return (root / "var/log/wisp.log").read_text()


def complete(root):
    return (root / "var/lib/cloud/.bootstrap-complete").exists()


def warning(result, root, text):
    """The one warning naming `text`, on standard error and in wisp.log."""
    lines = [line for line in result.stderr.splitlines() if text in line]
    assert len(lines) == 1, result.stderr
    [line] = lines
    assert line.startswith("wisp: warning: "), line
    assert line.removeprefix("wisp: ") in log(root)
    return line


def assert_keys_installed(root, *keys):
    path = root / KEYS
    assert path.read_text() == "".join(key + "\n" for key in keys)
    assert stat(path) == (0o600, 1000, 1000)
    assert stat(path.parent) == (0o700, 1000, 1000)
    assert stat(root / "home/alpine") == (0o755, 1000, 1000)


def test_a_malformed_key_between_two_good_ones_is_left_out(run, imds, root):
    imds(aws_metadata(keys=[["alice", ED25519], ["bad", "ssh-ed25519 AAAAC3NzaC1lZDI1NTE5AAAAIP6z"], ["bob", ECDSA]]))
    result = run("bootstrap", root=root)
    assert result.rc == 0, result
    warning(result, root, "set_ssh_keys: metadata key 2: key data is not a valid key of the named type: left out")
    assert "main/set_ssh_keys: ok: 2 keys for alpine" in result.stderr
    assert_keys_installed(root, ED25519, ECDSA)
    assert complete(root) and not leftover_temporaries(root)


def test_a_host_name_with_an_underscore_is_left_out_and_the_keys_go_in(run, imds, root):
    imds(aws_metadata(hostname="web_1.example", local_hostname="web_1.example"))
    result = run("bootstrap", root=root)
    assert result.rc == 0, result
    line = warning(result, root, "set_hostname: web_1 (web_1.example): hostname has byte 0x5f at position 3")
    assert line.endswith(": left out"), line
    assert (root / "etc/hostname").read_text() == "localhost\n"
    assert (root / "etc/hosts").read_text().count("127.0.1.1") == 0
    assert result.hostname != "web_1"
    assert_keys_installed(root, ED25519, ECDSA)
    assert complete(root)


def test_one_key_path_answering_garbage_keeps_the_others_and_retries(run, imds, root):
    server = imds(aws_metadata(keys=[["alice", ED25519], ["bob", ECDSA], ["carol", ED25519_B]],
                               faults={"garbage_paths": ["/latest/meta-data/public-keys/1/openssh-key"]}))
    result = run("bootstrap", root=root)
    assert result.rc == 1, result
    # The keys that arrived are in; the action fails, so the bootstrap stays incomplete.
    assert_keys_installed(root, ED25519, ED25519_B)
    assert "main/set_ssh_keys: failed: metadata openssh-key" in result.stderr
    assert "(applied what arrived: 2 keys for alpine)" in result.stderr
    # Every other action ran; only the completion marker and power were held back.
    for action in ("main/set_hostname: ok", "final/run_userdata: ok", "final/userdata_runcmd: ok"):
        assert action in result.stderr
    assert "final/bootstrap_complete: not run: an earlier action failed" in result.stderr
    assert not complete(root)
    assert (root / "etc/hostname").read_text() == "ip-10-0-1-23\n"
    # The next boot retries and completes.
    server.update(faults={})
    result = run("bootstrap", root=root)
    assert result.rc == 0, result
    assert_keys_installed(root, ED25519, ED25519_B, ECDSA)
    assert complete(root)


def test_a_key_path_that_hangs_holds_the_boot_once(run, imds, root):
    imds(aws_metadata(faults={"hang_paths": ["/latest/meta-data/public-keys/1/openssh-key"], "hang_s": 30}))
    result = run("bootstrap", root=root)
    assert result.rc == 1, result
    # WISP_HTTP_TOTAL_MS is 3 s in the tests: once, not once per phase.
    assert result.seconds < 3.0 + 2.5, result.seconds
    assert_keys_installed(root, ED25519)
    assert not complete(root)


def test_a_failed_action_holds_back_only_what_needs_it(run, imds, root):
    """create_default_user fails (an /etc/shadow over wisp's limit): set_ssh_keys needs it
    and is held back; the host name and the user-data still apply; exit 1, incomplete,
    and the next boot, once the cause is gone, completes."""
    original = (root / "etc/shadow").read_text()
    oversized = original + "#" * (33 * 1024) + "\n"
    (root / "etc/shadow").write_text(oversized)
    config = "#cloud-config\nwrite_files:\n  - path: /etc/app.conf\n    content: hello\nruncmd:\n  - echo ran >> /runcmd.log\n"
    imds(aws_metadata(user_data=config))
    result = run("bootstrap", root=root)
    assert result.rc == 1, result
    assert "main/create_default_user: failed: /etc/shadow is larger than 32768 bytes" in result.stderr
    assert "main/set_ssh_keys: not run: needs create_default_user" in result.stderr
    assert "main/set_hostname: ok" in result.stderr
    assert (root / "etc/hostname").read_text() == "ip-10-0-1-23\n"
    assert (root / "etc/app.conf").exists(), result.stderr
    assert (root / "etc/app.conf").read_text() == "hello"
    assert stat(root / "etc/app.conf") == (0o644, 0, 0)
    assert (root / "runcmd.log").read_text() == "ran\n"
    assert not (root / "home/alpine").exists()
    assert (root / "etc/shadow").read_text() == oversized
    assert "alpine" not in (root / "etc/passwd").read_text()
    assert not complete(root)
    assert "main: done, 1 failed" in log(root)
    # Recorded as cloud-init records errors: the cause only, not what it held back.
    import json
    result_json = json.loads((root / "run/cloud-init/result.json").read_text())
    assert result_json["v1"]["errors"] == ["main/create_default_user: /etc/shadow is larger than 32768 bytes"]

    (root / "etc/shadow").write_text(original)
    result = run("bootstrap", root=root)
    assert result.rc == 0, result
    assert_keys_installed(root, ED25519, ECDSA)
    # runcmd ran once: the first boot's run counts (work done is done).
    assert (root / "runcmd.log").read_text() == "ran\n"
    assert complete(root)


def test_hostname_and_fqdn_as_cloud_init_chooses(run, imds, root):
    imds(aws_metadata(user_data="#cloud-config\nhostname: alpha\nfqdn: beta.example.com\n"))
    result = run("bootstrap", root=root)
    assert result.rc == 0, result
    assert result.hostname == "alpha"
    assert (root / "etc/hostname").read_text() == "alpha\n"
    assert "127.0.1.1\tbeta.example.com alpha\n" in (root / "etc/hosts").read_text()
    assert (root / "etc/hosts").read_text().count("127.0.1.1") == 1
    assert stat(root / "etc/hostname") == stat(root / "etc/hosts") == (0o644, 0, 0)
    assert "main/set_hostname: ok" in log(root) and complete(root)


def test_prefer_fqdn_over_hostname(run, imds, root):
    imds(aws_metadata(user_data="#cloud-config\nhostname: alpha\nfqdn: beta.example.com\nprefer_fqdn_over_hostname: true\n"))
    result = run("bootstrap", root=root)
    assert result.rc == 0, result
    assert result.hostname == "beta.example.com"
    assert (root / "etc/hostname").read_text() == "beta.example.com\n"
    assert "127.0.1.1\tbeta.example.com alpha\n" in (root / "etc/hosts").read_text()
    assert stat(root / "etc/hostname") == stat(root / "etc/hosts") == (0o644, 0, 0)
    assert "main/set_hostname: ok" in log(root) and complete(root)


def test_user_data_keys_with_options_and_a_truncated_one(run, imds, root):
    with_options = 'command="/usr/bin/true",no-pty,from="10.0.0.0/8" ' + ED25519_B
    config = f"#cloud-config\nssh_authorized_keys:\n  - {TRUNCATED}\n  - '{with_options}'\n"
    imds(aws_metadata(user_data=config))
    result = run("bootstrap", root=root)
    assert result.rc == 0, result
    warning(result, root, "cloud-config line 3: ssh_authorized_keys: key data is not a valid key of the named type: left out")
    # The metadata's keys, then the valid user-data key with its options kept verbatim.
    assert_keys_installed(root, ED25519, ECDSA, with_options)
    shown = run("userdata", "show", root / "var/lib/cloud/user-data", root=root)
    assert shown.rc == 0, shown
    assert "line 3: ssh_authorized_keys: key data is not a valid key" in shown.stderr, shown


def crash_userdata(counter):
    """Two MIME script parts, a per-instance part, and cloud-config with users, write_files
    (one appended) and runcmd: every per-instance piece appends its name to `counter`, a
    path inside the root (user-data runs chrooted into it)."""
    from test_userdata_parts import multipart
    config = f"""#cloud-config
users:
  - default
  - name: carol
    groups: [admins]
write_files:
  - path: /etc/app/a.conf
    content: a
    owner: carol:admins
    permissions: '0640'
  - path: /etc/app/log
    content: "appended\\n"
    append: true
runcmd:
  - echo runcmd >> {counter}
  - sleep 0.05
"""
    return multipart(
        ("text/x-shellscript", f"#!/bin/sh\necho part-one >> {counter}\n", ""),
        ("text/cloud-config", config, ""),
        ("text/x-shellscript-per-instance", f"#!/bin/sh\necho per-instance >> {counter}\n", ""),
        ("text/x-shellscript", f"#!/bin/sh\nsleep 0.05\necho part-two >> {counter}\n", ""),
    )


def without_volatile(state):
    """Less the logs and cloud-init's status (rewritten with new times by every run)."""
    return {path: value for path, value in state.items() if not path.startswith(("var/log/", "run/cloud-init/", "counter"))}


def test_a_crash_at_any_point_then_a_rerun_ends_as_a_clean_run(run, imds, root, tmp_path):
    """WISP_TEST_CRASH_AT=N stops wisp (exit 99, nothing cleaned up) at its N-th crash point:
    the start of each action and each piece of work just marked done. For every N, a rerun
    ends in the clean run's tree, and nothing that finished ran twice."""
    import shutil
    from conftest import make_root, snapshot
    from test_userdata_parts import b64
    counter = root / "counter"
    imds(aws_metadata(user_data_b64=b64(crash_userdata("/counter"))))
    env = {"PATH": os.environ["PATH"]}
    clean = run("bootstrap", root=root, env=env)
    assert clean.rc == 0, clean
    expected = without_volatile(snapshot(root))
    assert counter.read_text() == "per-instance\npart-one\npart-two\nruncmd\n"
    assert (root / "etc/app/log").read_text() == "appended\n"
    points = 0
    for n in range(1, 200):
        shutil.rmtree(root)
        make_root(root)
        crashed = run("bootstrap", root=root, env={**env, "WISP_TEST_CRASH_AT": str(n)})
        if crashed.rc != 99:
            assert crashed.rc == 0, crashed
            break
        points += 1
        rerun = run("bootstrap", root=root, env=env)
        assert rerun.rc == 0, (n, rerun)
        assert without_volatile(snapshot(root)) == expected, n
        runs = counter.read_text().splitlines() if counter.exists() else []
        assert sorted(runs) == sorted(["per-instance", "part-one", "part-two", "runcmd"]), (n, runs)
    # The 24 actions of the four phases in the tests' build, which has every feature
    # (set_ephemeral_network, set_ssh_host_keys, userdata_ssh_pwauth, userdata_ntp and
    # userdata_apk_repos come with opt-in ones), and the 4 pieces of work marked done
    # (three scripts, runcmd; `packages` marks nothing when it asks for none).
    assert points == 28, points


def test_cloud_init_forms_wisp_does_not_apply_are_named_and_left_out(run, imds, root):
    """`users: [default, {snapuser: ...}]`, `packages: [{apt: [mg]}]` and per-user keys
    wisp does not apply: valid cloud-init, each a warning with its line, at boot and in
    `wisp userdata show`; everything else applies."""
    config = """#cloud-config
users:
  - default
  - {snapuser: joe@example.com}
  - name: carol
    ssh_import_id: [gh:carol]
    selinux_user: staff_u
    expiredate: '2031-01-01'
    inactive: '5'
packages:
  - {apt: [mg]}
frobnicate: 1
"""
    imds(aws_metadata(user_data=config))
    result = run("bootstrap", root=root)
    assert result.rc == 0, result
    expected = [
        "cloud-config line 12: frobnicate: not applied by wisp",
        "cloud-config line 4: users: another module's form: not applied by wisp",
        "cloud-config line 6: users: carol: ssh_import_id: not applied by wisp",
        "cloud-config line 7: users: carol: selinux_user: not applied by wisp",
        "cloud-config line 11: packages: another module's form: not applied by wisp",
    ]
    for text in expected:
        warning(result, root, text)
    assert "main/userdata_packages: ok: no packages" in result.stderr
    assert "main/userdata_users: ok: 1 users" in result.stderr
    carol = [line for line in (root / "etc/passwd").read_text().splitlines() if line.startswith("carol:")]
    assert carol == ["carol:x:1001:1001::/home/carol:/bin/sh"]
    assert stat(root / "home/carol") == (0o755, 1001, 1001)
    # expiredate and inactive are applied (test_expiredate_and_inactive_in_etc_shadow).
    assert "expiredate" not in result.stderr and "inactive" not in result.stderr
    assert_keys_installed(root, ED25519, ECDSA)
    assert complete(root)
    shown = run("userdata", "show", root=root)
    assert shown.rc == 0, shown
    for text in expected:
        assert "wisp: warning: " + text in shown.stderr, shown.stderr


def shadow_line(root, name):
    [line] = [line for line in (root / "etc/shadow").read_text().splitlines() if line.startswith(name + ":")]
    return line.split(":")


def test_expiredate_and_inactive_in_etc_shadow(run, imds, root):
    """Per-user `expiredate` (YYYY-MM-DD: shadow's field 8, days since 1970-01-01) and
    `inactive` (days: field 7), as cloud-init sets them; a value that is not one is left
    out with a warning naming the user and the line, and the user is made without it. They
    go in with the account's shadow line, as cloud-init sets them on the users it makes:
    an account the image has keeps its fields, and a rerun changes nothing."""
    config = """#cloud-config
users:
  - default
  - name: carol
    expiredate: '2031-01-01'
    inactive: '5'
  - name: dave
    expiredate: 2030-02-30
    inactive: 12
  - {name: erin, expiredate: tomorrow, inactive: soon}
  - {name: nobody, no_create_home: true, expiredate: '2031-01-01', inactive: '5'}
"""
    imds(aws_metadata(user_data=config))
    result = run("bootstrap", root=root)
    assert result.rc == 0, result
    warning(result, root, "cloud-config line 8: users: dave: expiredate is not a date (YYYY-MM-DD): left out")
    warning(result, root, "cloud-config line 10: users: erin: expiredate is not a date (YYYY-MM-DD): left out")
    warning(result, root, "cloud-config line 10: users: erin: inactive is not a number of days: left out")
    epoch_day_2031 = (datetime.date(2031, 1, 1) - datetime.date(1970, 1, 1)).days
    carol = shadow_line(root, "carol")
    assert (carol[1], carol[6], carol[7]) == ("*", "5", str(epoch_day_2031))
    dave = shadow_line(root, "dave")
    assert (dave[6], dave[7]) == ("12", "")
    erin = shadow_line(root, "erin")
    assert (erin[6], erin[7]) == ("", "")
    alpine = shadow_line(root, "alpine")
    assert (alpine[6], alpine[7]) == ("", "")
    nobody_before = next(line for line in ALPINE_SHADOW.splitlines() if line.startswith("nobody:"))
    assert shadow_line(root, "nobody") == nobody_before.split(":")
    assert all(len(shadow_line(root, name)) == 9 for name in ("carol", "dave", "erin", "alpine"))
    assert stat(root / "etc/shadow") == (0o640, 0, 42)  # as the image had it
    assert "main/userdata_users: ok: 4 users" in result.stderr
    assert_keys_installed(root, ED25519, ECDSA)
    assert complete(root) and not leftover_temporaries(root)
    shown = run("userdata", "show", root=root)
    assert "wisp: warning: cloud-config line 8: users: dave: expiredate is not a date (YYYY-MM-DD): left out" in shown.stderr
    # The users action done, even forgetting that it ran changes nothing (the fields are
    # rewritten to what they are).
    before = (root / "etc/shadow").read_bytes()
    (root / "var/lib/cloud/.bootstrap-complete").unlink()
    for marker in (root / "var/lib/cloud/sem").iterdir():
        marker.unlink()
    again = run("bootstrap", root=root)
    assert again.rc == 0, again
    assert (root / "etc/shadow").read_bytes() == before


def test_the_user_data_limit_binds_a_plain_script(run, imds, root):
    (root / "etc/wisp.conf").write_text((root / "etc/wisp.conf").read_text() + "WISP_USERDATA_LIMIT=1024\n")
    script = "#!/bin/sh\necho ran > \"$(dirname \"$0\")/script-ran\"\n" + "# padding\n" * 300
    assert len(script) > 3000
    imds(aws_metadata(user_data=script))
    result = run("bootstrap", root=root)
    assert result.rc == 1, result
    reason = "user-data: larger than WISP_USERDATA_LIMIT (1024 bytes)"
    # Refused by its first user-data action; the others are held back by it.
    assert f"main/userdata_bootcmd: failed: {reason}" in result.stderr, result.stderr
    assert "final/run_userdata: not run: the user-data's error is above" in result.stderr
    assert not (root / "var/lib/cloud/script-ran").exists()
    # Saved as received (0600), the owner still gets in, the bootstrap stays incomplete.
    assert (root / "var/lib/cloud/user-data").read_text() == script
    assert stat(root / "var/lib/cloud/user-data") == (0o600, 0, 0)
    assert_keys_installed(root, ED25519, ECDSA)
    assert not complete(root)


def test_chpasswd_is_checked_whole_before_any_password_changes(run, imds, root):
    config = """#cloud-config
chpasswd:
  expire: false
  users:
    - {name: root, password: s3cret, type: text}
    - {name: alpine, type: RANDOM}
"""
    imds(aws_metadata(user_data=config))
    shadow_before = (root / "etc/shadow").read_text()
    result = run("bootstrap", root=root)
    assert result.rc == 1, result
    assert "main/userdata_users: failed: cloud-config line 6: chpasswd: RANDOM passwords are not supported" in result.stderr
    # root's password is untouched: the refusal came before anything was set.
    shadow = (root / "etc/shadow").read_text()
    assert shadow.splitlines()[0] == shadow_before.splitlines()[0] == "root:*::0:::::"
    assert stat(root / "etc/shadow") == (0o640, 0, 42)
    assert_keys_installed(root, ED25519, ECDSA)
    assert not complete(root)


def test_a_mount_whose_device_does_not_exist_is_left_out(run, imds, root):
    config = """#cloud-config
mounts:
  - [ /dev/ephemeral0, /mnt, auto, "defaults,noexec" ]
  - [ tmpfs, /mnt/scratch, tmpfs, "size=1m" ]
"""
    (root / "etc/fstab").write_text("/dev/vda1\t/\text4\tdefaults\t0\t1\n")
    imds(aws_metadata(user_data=config))
    result = run("bootstrap", root=root)
    assert result.rc == 0, result
    warning(result, root, "cloud-config line 3: mounts: /dev/ephemeral0: no such device: left out")
    assert (root / "etc/fstab").read_text() == (
        "/dev/vda1\t/\text4\tdefaults\t0\t1\n"
        "tmpfs\t/mnt/scratch\ttmpfs\tsize=1m,comment=cloudconfig\t0\t2\n")
    assert stat(root / "etc/fstab") == (0o644, 0, 0)
    assert "main/userdata_mounts: ok: 1 entries in /etc/fstab, 1 mounted" in result.stderr
    assert complete(root)


def test_write_files_entries_that_are_wrong_are_left_out(run, imds, root):
    config = """#cloud-config
write_files:
  - path: /etc/app/good.conf
    content: good
    permissions: '0640'
  - content: no path here
  - path: /etc/app/zstd.bin
    encoding: zstd
    content: KLUv
  - path: relative/x
  - path: /etc/app/mode
    permissions: rwx
  - path: /etc/app/late.conf
    content: late
    defer: true
"""
    imds(aws_metadata(user_data=config))
    result = run("bootstrap", root=root)
    assert result.rc == 0, result
    for text in ("cloud-config line 6 column 5: write_files: an entry has no path: left out",
                 "cloud-config line 8 column 15: write_files: unknown encoding (text/plain, b64, gzip, gz+b64): left out",
                 "cloud-config line 10 column 11: write_files: path must be an absolute file path without ., .. or //: left out",
                 "cloud-config line 12 column 18: write_files: permissions are not an octal mode: left out"):
        warning(result, root, text)
    assert (root / "etc/app/good.conf").read_text() == "good"
    assert stat(root / "etc/app/good.conf") == (0o640, 0, 0)
    assert (root / "etc/app/late.conf").read_text() == "late"
    assert stat(root / "etc/app/late.conf") == (0o644, 0, 0)
    assert sorted(p.name for p in (root / "etc/app").iterdir()) == ["good.conf", "late.conf"]
    assert "main/userdata_write_files: ok: 1 files written" in result.stderr
    assert "final/userdata_write_files_deferred: ok: 1 files written" in result.stderr
    assert complete(root)
    shown = run("userdata", "show", root=root)
    assert "wisp: warning: cloud-config line 6 column 5: write_files: an entry has no path: left out" in shown.stderr


def test_write_files_gzip_binary_beside_a_good_entry_and_one_without_path(run, imds, root):
    """The issue's document: one good entry, one without `path`, one `encoding: gzip`
    with `content: !!binary |` (as cloud-init's and tiny-cloud's documentation write it).
    The good and the gzip'd entries are written, the gunzipped bytes exactly; bytes
    without an encoding are written as they are."""
    payload = bytes(range(256)) + b"#!/bin/sh\necho from gzip\n"
    gzipped = base64.encodebytes(gzip.compress(payload, mtime=0)).decode()
    config = "#cloud-config\nwrite_files:\n  - path: /etc/app/good.conf\n    content: good\n  - content: no path here\n" \
        "  - path: /usr/local/bin/from-gzip\n    encoding: gzip\n    permissions: '0755'\n    owner: alpine:alpine\n" \
        "    content: !!binary |\n" + "".join("      " + line + "\n" for line in gzipped.splitlines()) + \
        "  - path: /etc/app/raw.bin\n    content: !!binary AAEC/w==\n"
    imds(aws_metadata(user_data=config))
    result = run("bootstrap", root=root)
    assert result.rc == 0, result
    warning(result, root, "cloud-config line 5 column 5: write_files: an entry has no path: left out")
    assert (root / "etc/app/good.conf").read_text() == "good"
    assert stat(root / "etc/app/good.conf") == (0o644, 0, 0)
    assert (root / "usr/local/bin/from-gzip").read_bytes() == payload
    assert stat(root / "usr/local/bin/from-gzip") == (0o755, 1000, 1000)
    assert (root / "etc/app/raw.bin").read_bytes() == bytes([0, 1, 2, 255])
    assert stat(root / "etc/app/raw.bin") == (0o644, 0, 0)
    assert "main/userdata_write_files: ok: 3 files written" in result.stderr
    assert complete(root) and not leftover_temporaries(root)
    shown = run("userdata", "show", root=root)
    assert shown.rc == 0, shown
    files = json.loads(shown.stdout)["cloud_config"]["write_files"]
    assert files[2]["content"] == "ci-b64:" + base64.b64encode(gzip.compress(payload, mtime=0)).decode()
    assert files[3]["content"] == "ci-b64:AAEC/w=="


def test_a_write_that_fails_fails_the_action_after_the_others(run, imds, root):
    config = """#cloud-config
write_files:
  - path: /etc/app/owned
    content: x
    owner: nobody-here
  - path: /etc/app/after.conf
    content: after
"""
    imds(aws_metadata(user_data=config))
    result = run("bootstrap", root=root)
    assert result.rc == 1, result
    assert "main/userdata_write_files: failed: write_files /etc/app/owned: owner nobody-here: no such user" in result.stderr
    assert not (root / "etc/app/owned").exists()
    assert (root / "etc/app/after.conf").read_text() == "after"
    assert stat(root / "etc/app/after.conf") == (0o644, 0, 0)
    assert not complete(root)


def test_users_entries_one_wrong_one_failing_the_others_made(run, imds, root):
    config = """#cloud-config
users:
  - default
  - {name: dave, uid: many}
  - {name: erin, uid: 22}
  - name: frank
    shell: /bin/ash
"""
    imds(aws_metadata(user_data=config))
    result = run("bootstrap", root=root)
    assert result.rc == 1, result
    warning(result, root, "cloud-config line 4: users: uid is not a number: left out")
    # (uid 0 would be refused with the whole document, as an attack: test_hostile.py.)
    assert "main/userdata_users: failed: user erin: uid 22 is taken" in result.stderr
    passwd = (root / "etc/passwd").read_text()
    assert "dave" not in passwd and "erin:" not in passwd
    # The refused user left nothing behind: its uid was checked before its group was made.
    assert "erin:" not in (root / "etc/group").read_text()
    assert "frank:x:1001:1001::/home/frank:/bin/ash\n" in passwd
    assert stat(root / "home/frank") == (0o755, 1001, 1001)
    assert_keys_installed(root, ED25519, ECDSA)
    assert not complete(root)
    shown = run("userdata", "show", root=root)
    assert "wisp: warning: cloud-config line 4: users: uid is not a number: left out" in shown.stderr


def test_kill_9_at_increasing_delays_then_a_rerun_ends_as_a_clean_run(wisp, netns, run, imds, root, tmp_path):
    """The whole process group (wisp and any script it runs) killed with SIGKILL at
    increasing delays, as a power loss would stop it, then a rerun: the tree ends as a
    clean run's. (That nothing finished runs twice is the fault-injection test's: a kill
    between a script's last line and its marker can land in a window no file can close.)"""
    import shutil
    import signal
    import subprocess
    import time
    from conftest import make_root, snapshot
    from test_userdata_parts import b64
    counter = root / "counter"
    imds(aws_metadata(user_data_b64=b64(crash_userdata("/counter"))))
    env = {"PATH": os.environ["PATH"]}
    clean = run("bootstrap", root=root, env=env)
    assert clean.rc == 0, clean
    expected = without_volatile(snapshot(root))
    killed = 0
    for step in range(30):
        shutil.rmtree(root)
        make_root(root)
        if counter.exists():
            counter.unlink()
        process = subprocess.Popen(
            ["ip", "netns", "exec", netns.name, "unshare", "--uts", "--mount", "--fork",
             str(wisp), "--root", str(root), "bootstrap"],
            env=env, stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL, start_new_session=True)
        time.sleep(0.005 * step)
        os.killpg(process.pid, signal.SIGKILL)
        killed += process.wait() == -signal.SIGKILL
        rerun = run("bootstrap", root=root, env=env)
        assert rerun.rc == 0, (step, rerun)
        assert without_volatile(snapshot(root)) == expected, step
        runs = counter.read_text().splitlines() if counter.exists() else []
        assert set(runs) == {"per-instance", "part-one", "part-two", "runcmd"}, (step, runs)
    assert killed >= 10, killed


def test_kill_9_inside_runcmd_runs_no_finished_part_again(wisp, netns, run, imds, root):
    """The issue's case: the process group killed while `runcmd` runs; at the next boot
    the MIME script parts that had finished do not run again, `runcmd`, cut short, runs
    again to its end, and the bootstrap completes."""
    import signal
    import subprocess
    from test_userdata_parts import b64, multipart
    config = """#cloud-config
runcmd:
  - echo runcmd-started >> /counter
  - test -e /runcmd-was-killed || { touch /runcmd-was-killed; sleep 60; }
  - echo runcmd >> /counter
"""
    user_data = multipart(
        ("text/x-shellscript", "#!/bin/sh\necho part-one >> /counter\n", ""),
        ("text/cloud-config", config, ""),
        ("text/x-shellscript", "#!/bin/sh\necho part-two >> /counter\n", ""),
    )
    imds(aws_metadata(user_data_b64=b64(user_data)))
    env = {"PATH": os.environ["PATH"]}
    process = subprocess.Popen(
        ["ip", "netns", "exec", netns.name, "unshare", "--uts", "--mount", "--fork",
         str(wisp), "--root", str(root), "bootstrap"],
        env=env, stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL, start_new_session=True)
    deadline = time.monotonic() + 30
    while not (root / "runcmd-was-killed").exists():
        assert process.poll() is None and time.monotonic() < deadline, "runcmd never started"
        time.sleep(0.02)
    os.killpg(process.pid, signal.SIGKILL)
    assert process.wait() == -signal.SIGKILL
    assert (root / "counter").read_text() == "part-one\npart-two\nruncmd-started\n"
    assert not complete(root)
    result = run("bootstrap", root=root, env=env)
    assert result.rc == 0, result
    assert (root / "counter").read_text() == "part-one\npart-two\nruncmd-started\nruncmd-started\nruncmd\n"
    assert "final/run_userdata: ok" in result.stderr
    assert (root / "var/log/user-data.exit").read_text().strip() == "0"
    markers = sorted(p.name.split(".")[0] for p in (root / "var/lib/cloud/sem").iterdir())
    assert markers.count("runcmd") == 1, markers
    assert_keys_installed(root, ED25519, ECDSA)
    assert complete(root) and not leftover_temporaries(root)


def test_a_home_a_crash_left_root_owned_gets_its_owner(run, imds, root):
    """What a crash inside create_default_user leaves (the account written, the home made,
    not yet given to the user): the rerun gives the home its owner, so sshd (StrictModes)
    takes the keys."""
    with open(root / "etc/passwd", "a") as f:
        f.write("alpine:x:1000:1000:Linux User,,,:/home/alpine:/bin/sh\n")
    (root / "etc/group").write_text((root / "etc/group").read_text().replace("wheel:x:10:root\n", "wheel:x:10:root,alpine\n") + "alpine:x:1000:\n")
    with open(root / "etc/shadow", "a") as f:
        f.write("alpine:*:20000:0:99999:7:::\n")
    (root / "home/alpine").mkdir(mode=0o755)
    assert stat(root / "home/alpine")[1:] == (0, 0)
    imds(aws_metadata())
    result = run("bootstrap", root=root)
    assert result.rc == 0, result
    assert_keys_installed(root, ED25519, ECDSA)
    assert complete(root)


def test_packages_installed_once_per_instance(run, imds, root):
    """apk ran to success: a rerun before the bootstrap was marked complete (a crash)
    does not run it again."""
    from test_cloud_config import fake_apk
    fake_apk(root)
    config = "#cloud-config\npackages:\n  - nginx\n"
    imds(aws_metadata(user_data=config))
    assert run("bootstrap", root=root).rc == 0
    assert (root / "apk.log").read_text() == "add nginx\n"
    (root / "var/lib/cloud/.bootstrap-complete").unlink()
    result = run("bootstrap", root=root)
    assert result.rc == 0, result
    assert "main/userdata_packages: ok: ran already for this instance" in result.stderr
    assert (root / "apk.log").read_text() == "add nginx\n"
    assert (root / "var/lib/cloud/sem/packages.i-0123456789abcdef0").exists()
