"""A newcomer's first hour (issue 20): the README's commands, the toolchain it names, and a
command line that never surprises: read-only commands write nothing, a mistyped --root
is an error, user-data's commands stay inside --root, errors name what and where."""

import os
import secrets
import shutil
import subprocess
import time
import tomllib
from pathlib import Path

from conftest import REPO, aws_metadata, snapshot

# The PATH of a plain Debian root shell, plus cargo: no other python3 before Debian's.
PLAIN_PATH = ":".join([str(Path(shutil.which("cargo")).parent), "/usr/local/sbin", "/usr/local/bin",
                       "/usr/sbin", "/usr/bin", "/sbin", "/bin"])


def demo_folders():
    return set(Path("/tmp").glob("wisp-demo.*"))


def test_demo_runs_first_cleans_up_and_names_owners_by_the_scratch_roots_passwd(wisp):
    before = demo_folders()
    env = {"PATH": PLAIN_PATH, "HOME": os.environ.get("HOME", "/root")}
    result = subprocess.run([REPO / "ci/demo"], capture_output=True, text=True, env=env, timeout=600)
    assert result.returncode == 0, result.stdout[-3000:] + result.stderr[-3000:]
    assert demo_folders() == before, "ci/demo left its scratch folder behind"
    listing = result.stdout.split("== what it wrote")[1].split("==")[0]
    owners = {line.split()[-1]: line.split()[1] for line in listing.strip().splitlines()}
    # uid 1000 is `alpine` in the scratch root, whoever it is on this machine.
    assert owners["home/alpine/.ssh/authorized_keys"] == "alpine:alpine", listing
    assert owners["etc/app/config.json"] == "ops:ops", listing
    assert owners["etc/shadow"] == "root:shadow", listing


def test_ci_installs_debian_packages_and_runs_debians_python():
    lib = (REPO / "ci/lib.sh").read_text()
    for script in ("ci/lib.sh", "ci/test", "ci/demo"):
        assert "-m pip" not in (REPO / script).read_text(), script
    assert "python3-pytest" in lib and "python3-yaml" in lib
    assert '"$PYTHON" -m pytest' in (REPO / "ci/test").read_text()
    probe = subprocess.run(["bash", "-c", 'source ci/lib.sh; install_test_tools >/dev/null; echo "$PYTHON";'
                            '"$PYTHON" -c "import pytest, yaml; print(pytest.__file__)"'],
                           cwd=REPO, capture_output=True, text=True, check=True).stdout.split()
    assert probe[0] == "/usr/bin/python3"
    assert probe[1].startswith("/usr/lib/python3/dist-packages/"), probe


def test_rust_version_is_the_pinned_toolchain_ci_builds_with():
    cargo = tomllib.loads((REPO / "Cargo.toml").read_text())
    toolchain = tomllib.loads((REPO / "rust-toolchain.toml").read_text())["toolchain"]
    rust_version = cargo["workspace"]["package"]["rust-version"]
    assert toolchain["channel"].rsplit(".", 1)[0] == rust_version, (toolchain, rust_version)
    # What builds here (and so in ci/test) is exactly that toolchain.
    rustc = subprocess.run(["rustc", "--version"], cwd=REPO, capture_output=True, text=True, check=True).stdout
    assert rustc.startswith(f"rustc {toolchain['channel']} "), rustc


def test_licenses():
    assert tomllib.loads((REPO / "Cargo.toml").read_text())["workspace"]["package"]["license"] == "MIT OR Apache-2.0"
    mit = (REPO / "LICENSE-MIT").read_text()
    assert "Copyright (c) the wisp developers" in mit and "Permission is hereby granted, free of charge" in mit
    apache = (REPO / "LICENSE-APACHE").read_text()
    assert "Apache License" in apache and "Version 2.0, January 2004" in apache and "END OF TERMS AND CONDITIONS" in apache


def test_read_only_commands_write_nothing(run, imds, root):
    imds()
    (root / "var/lib").mkdir(parents=True, exist_ok=True)
    before = snapshot(root)
    for args in (["status"], ["status", "--wait", "--timeout", "1"], ["imds", "@instance-id"],
                 ["--cloud", "aws", "imds", "@hostname"], ["userdata", "show"], ["--help"]):
        run(*args, root=root)
        assert snapshot(root) == before, args
    assert run("imds", "@instance-id", root=root).stdout == "i-0123456789abcdef0\n"
    result = run("status", root=root)
    assert (result.rc, result.stdout) == (1, "incomplete\n"), result


def test_plain_status_creates_nothing_on_the_machine(wisp):
    # Without --root, in a private mount namespace whose /var/lib starts empty.
    script = 'mount -t tmpfs tmpfs /var/lib && "$0" status; echo "rc=$?"; ls -A /var/lib'
    result = subprocess.run(["unshare", "--mount", "--propagation", "private", "sh", "-c", script, str(wisp)],
                            capture_output=True, text=True, timeout=30)
    assert result.stdout == "incomplete\nrc=1\n", result


def test_a_missing_root_is_an_error(run, tmp_path):
    missing = tmp_path / "no/such/dir"
    for args in (["status"], ["boot"], ["imds", "@hostname"], ["mark", "complete"], ["userdata", "show"]):
        result = run(*args, root=missing)
        assert result.rc == 2, (args, result)
        assert f"--root {missing}: no such directory" in result.stderr, (args, result.stderr)
    assert not (tmp_path / "no").exists()
    a_file = tmp_path / "file"
    a_file.write_text("")
    assert run("status", root=a_file).rc == 2


def test_user_data_commands_run_chrooted_into_the_root(run, imds, root):
    name = "wisp-chroot-" + secrets.token_hex(4)
    (root / "tmp").mkdir()
    config = f"#cloud-config\nbootcmd:\n  - echo bootcmd > /tmp/{name}.bootcmd\nruncmd:\n  - echo runcmd > /tmp/{name}.runcmd\n"
    imds(aws_metadata(user_data=config))
    try:
        result = run("bootstrap", root=root)
        assert result.rc == 0, result
        for what in ("bootcmd", "runcmd"):
            assert (root / f"tmp/{name}.{what}").read_text() == f"{what}\n"
            assert not Path(f"/tmp/{name}.{what}").exists(), f"{what} wrote to the host's /tmp"
    finally:
        for leaked in Path("/tmp").glob(name + ".*"):
            leaked.unlink()


def test_a_script_runs_with_the_images_interpreter(run, imds, root):
    # `#!/bin/sh` is the root's busybox, not the host's shell.
    imds(aws_metadata(user_data='#!/bin/sh\nls -l /bin/sh > "$(dirname "$0")/interpreter"\n'))
    result = run("bootstrap", root=root)
    assert result.rc == 0, result
    assert (root / "var/lib/cloud/interpreter").read_text().rstrip().endswith("/bin/sh -> busybox")


def test_an_interpreter_the_image_lacks_is_a_clear_failure(run, imds, root):
    # The machine has /bin/bash; the busybox image does not.
    assert Path("/bin/bash").exists() and not (root / "bin/bash").exists()
    imds(aws_metadata(user_data="#!/bin/bash\necho ran\n"))
    result = run("bootstrap", root=root)
    assert result.rc == 1, result
    assert "user-data script exited with status 127 (output in user-data.log)" in result.stderr, result.stderr
    log = (root / "var/log/user-data.log").read_text()
    assert log.startswith("wisp: cannot execute /bin/bash: "), log
    assert "ran" not in log


def test_unknown_action_names_file_line_and_word_for_every_command(run, root):
    (root / "etc/wisp.conf").write_text("CLOUD=aws\n# skip these\nSKIP_INIT_ACTIONS=\"expand_root set_hostnme\"\n")
    before = snapshot(root)
    for args in (["status"], ["boot"], ["bootstrap"], ["imds", "@hostname"], ["userdata", "show"]):
        result = run(*args, root=root)
        assert result.rc == 2, (args, result)
        expected = f"{root}/etc/wisp.conf:3: SKIP_INIT_ACTIONS names an unknown action 'set_hostnme'"
        assert expected in result.stderr, (args, result.stderr)
    (root / "etc/wisp.conf").write_text("CLOUD=aws\nINIT_ACTIONS_MAIN=create_default_user,set-hostname\n")
    result = run("status", root=root)
    assert result.rc == 2 and "wisp.conf:2: INIT_ACTIONS_MAIN names an unknown action 'set-hostname'" in result.stderr, result


def test_a_deadline_message_says_the_deadline_and_the_attempts(run, netns, root):
    # Packets to the metadata address vanish: routed to lo, where no address takes them.
    netns.exec(["ip", "addr", "del", "169.254.169.254/32", "dev", "lo"], check=True)
    netns.exec(["ip", "route", "add", "169.254.169.254/32", "dev", "lo"], check=True)
    started = time.monotonic()
    result = run("imds", "@hostname", root=root)
    assert result.rc == 1, result
    assert time.monotonic() - started < 3.0 + 2.5
    assert "metadata token: no connection within 300 ms; gave up after " in result.stderr, result.stderr
    attempts = int(result.stderr.split("gave up after ")[1].split()[0])
    assert attempts >= 3, result.stderr
    assert f"{attempts} attempts in the 3000 ms deadline (WISP_HTTP_TOTAL_MS)" in result.stderr


def test_status_wait_takes_a_limit(run, root):
    started = time.monotonic()
    result = run("status", "--wait", "--timeout", "1", root=root, timeout=20)
    assert result.rc == 1, result
    assert 1.0 <= time.monotonic() - started < 5
    assert "status --wait: no /run/cloud-init/result.json after 1 s (--timeout)" in result.stderr
    for args, message in ((["status", "--timeout", "1"], "status --timeout needs --wait"),
                          (["status", "--wait", "--timeout", "0"], "--timeout takes whole seconds from 1 to 86400, not 0")):
        result = run(*args, root=root)
        assert result.rc == 2 and message in result.stderr, (args, result)


def test_cloud_names_are_checked_the_same_way_by_every_command(run, root):
    for args in (["status"], ["imds", "@hostname"], ["boot"], ["mark", "complete"], ["userdata", "show"], ["grow"]):
        result = run("--cloud", "mars", *args, root=root)
        assert result.rc == 2, (args, result)
        assert "--cloud mars: expected auto, aws, azure, gcp, oci, nocloud, configdrive, openstack, hetzner, digitalocean, scaleway, incus or vultr" in result.stderr, (args, result)
