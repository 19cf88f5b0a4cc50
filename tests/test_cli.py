"""The command-line contract and the configuration, from outside."""

import re

import pytest

from conftest import TEST_CONFIG, aws_metadata


def test_help_and_version(run):
    result = run("--help")
    assert result.rc == 0 and result.stdout.startswith("usage: wisp [--root DIR] [--config FILE] [--cloud NAME] COMMAND")
    for command in ("boot | early | main | final", "bootstrap", "imds KEY...", "status", "mark complete|incomplete", "grow"):
        assert command in result.stdout
    result = run("--version")
    assert result.rc == 0 and result.stdout.startswith("wisp ")
    # One line: the version, then the build's features in their Cargo order, each once.
    version, _, features = result.stdout.partition(" (")
    assert re.fullmatch(r"wisp \d+\.\d+\.\d+", version), result.stdout
    assert features.endswith(")\n") and features.count("\n") == 1, result.stdout
    names = features[:-2].split(" ")
    order = ["aws", "azure", "gcp", "oci", "nocloud", "configdrive", "userdata", "cloud-config", "cloud-init-status", "grow",
             "iso9660", "vfat", "udf", "network", "hetzner", "digitalocean", "scaleway", "incus", "vultr", "ssh", "ntp", "apk-repos"]
    assert "aws" in names and names == [name for name in order if name in names], result.stdout


def test_more_arguments_than_the_limit_are_refused_by_number(run, root):
    # `--root DIR` is two of them.
    result = run(*["boot"] * 63, root=root)
    assert result.rc == 2, result
    assert result.stderr.startswith("wisp: more than 64 arguments\n"), result.stderr
    # At the limit, the command line is read (and refused for what it says).
    result = run(*["boot"] * 62, root=root)
    assert result.rc == 2 and "more than" not in result.stderr and "unexpected argument boot" in result.stderr, result.stderr


def test_usage_errors_exit_2(run, root):
    cases = [
        ([], "no command given"),
        (["launch"], "unknown command launch"),
        (["--rooot", "/x", "boot"], "unknown option --rooot"),
        (["imds"], "imds needs at least one KEY"),
        (["mark", "done"], "mark takes complete or incomplete"),
        (["boot", "extra"], "unexpected argument extra"),
        (["grow", "--image", "disk.img"], "needs --partition"),
    ]
    for args, message in cases:
        result = run(*args, root=root)
        assert result.rc == 2, (args, result)
        assert message in result.stderr, (args, result.stderr)
        assert "wisp --help" in result.stderr


def test_malformed_config_names_file_and_line(run, root):
    (root / "etc/wisp.conf").write_text("CLOUD=aws\n# fine\nCLOUD_USER = alpine\n")
    result = run("boot", root=root)
    assert result.rc == 2, result
    assert f"{root}/etc/wisp.conf:3: no spaces allowed around '='" in result.stderr


def test_unknown_variable_is_a_warning(run, imds, root):
    imds()
    (root / "etc/wisp.conf").write_text(TEST_CONFIG + "FAVOURITE_COLOUR=blue\n")
    result = run("bootstrap", root=root)
    assert result.rc == 0, result
    assert f"{root}/etc/wisp.conf:7: unknown variable FAVOURITE_COLOUR (ignored)" in result.stderr


def test_tiny_cloud_config_files_are_read(run, imds, root):
    imds()
    (root / "etc/wisp.conf").unlink()
    (root / "etc/conf.d").mkdir()
    (root / "etc/conf.d/tiny-cloud").write_text("CLOUD_USER=legacy\n" + TEST_CONFIG)
    assert run("main", root=root).rc == 0
    assert "legacy:x:1000:1000:" in (root / "etc/passwd").read_text()
    # tiny-cloud 3.x's file comes before 2.x's.
    (root / "etc/tiny-cloud.conf").write_text("CLOUD_USER=modern\n" + TEST_CONFIG)
    assert run("main", root=root).rc == 0
    assert "modern:x:1001:1001:" in (root / "etc/passwd").read_text()


def test_explicit_config_file(run, imds, root, tmp_path):
    imds()
    config = tmp_path / "other.conf"
    config.write_text("CLOUD=aws\nCLOUD_USER=ops\n")
    (root / "sys/class/dmi/id/sys_vendor").write_text("QEMU\n")
    result = run("--config", config, "main", root=root)
    assert result.rc == 0, result
    assert "ops:x:1000:1000:" in (root / "etc/passwd").read_text()
    result = run("--config", tmp_path / "missing.conf", "main", root=root)
    assert result.rc == 2 and "missing.conf: no such file" in result.stderr


def test_no_cloud_detected(run, root):
    (root / "sys/class/dmi/id/sys_vendor").write_text("QEMU\n")
    result = run("early", root=root)
    assert result.rc == 2, result
    assert "CLOUD=auto found no known cloud" in result.stderr
    assert f"set CLOUD in {root}/etc/wisp.conf" in result.stderr


def test_cloud_option_and_detection_cache(run, imds, root):
    imds()
    (root / "sys/class/dmi/id/sys_vendor").write_text("QEMU\n")
    result = run("--cloud", "aws", "imds", "@instance-id", root=root)
    assert (result.rc, result.stdout) == (0, "i-0123456789abcdef0\n")
    result = run("--cloud", "mars", "imds", "@instance-id", root=root)
    assert result.rc == 2 and "--cloud mars" in result.stderr
    # Detected once from DMI by a phase, then remembered even if DMI changes.
    (root / "sys/class/dmi/id/sys_vendor").write_text("Amazon EC2\n")
    assert run("boot", root=root).rc == 0
    (root / "sys/class/dmi/id/sys_vendor").write_text("QEMU\n")
    assert run("imds", "@instance-id", root=root).rc == 0
    assert (root / "var/lib/cloud/.autodetect").read_text() == "CLOUD=aws\n"


def test_ec2_uuid_detection(run, imds, root):
    imds()
    (root / "sys/class/dmi/id/sys_vendor").write_text("Xen\n")
    (root / "sys/class/dmi/id/product_uuid").write_text("ec2e1916-9099-7caf-fd21-012345678902\n")
    assert run("imds", "@instance-id", root=root).rc == 0


def test_mark_and_status(run, root):
    result = run("status", root=root)
    assert (result.rc, result.stdout) == (1, "incomplete\n")
    assert run("mark", "complete", root=root).rc == 0
    result = run("status", root=root)
    assert (result.rc, result.stdout) == (0, "complete\n")
    assert run("mark", "incomplete", root=root).rc == 0
    assert run("status", root=root).rc == 1
    assert run("mark", "incomplete", root=root).rc == 0


def test_skip_and_init_actions(run, imds, root):
    imds()
    (root / "etc/wisp.conf").write_text(TEST_CONFIG + "SKIP_INIT_ACTIONS='set_hostname enable_sshd'\nINIT_ACTIONS_FINAL=bootstrap_complete\n")
    result = run("bootstrap", root=root)
    assert result.rc == 0, result
    assert "set_hostname" not in result.stderr and "enable_sshd" not in result.stderr
    assert "run_userdata" not in result.stderr
    assert (root / "etc/hostname").read_text() == "localhost\n"
    assert not (root / "etc/runlevels").exists()


def test_unknown_action_is_a_configuration_error(run, root):
    (root / "etc/wisp.conf").write_text(TEST_CONFIG + "SKIP_INIT_ACTIONS=set_hostnam\n")
    result = run("main", root=root)
    assert result.rc == 2 and "SKIP_INIT_ACTIONS names an unknown action" in result.stderr


def test_unsupported_tiny_cloud_actions_fail_with_a_reason(run, root):
    (root / "etc/wisp.conf").write_text(TEST_CONFIG + "INIT_ACTIONS_BOOT=install_hotplugs\n")
    result = run("boot", root=root)
    assert result.rc == 1
    assert "boot/install_hotplugs: failed: not supported" in result.stderr
    # Skipping them, as images that disable tiny-cloud's do, is fine.
    (root / "etc/wisp.conf").write_text(TEST_CONFIG + "SKIP_INIT_ACTIONS='install_hotplugs set_ephemeral_network'\n")
    assert run("boot", root=root).rc == 0


@pytest.mark.needs("network")
def test_ephemeral_network_with_no_interface_is_a_no_op(run, root):
    # The test namespace has only lo: nothing to bring up, and nothing fails.
    result = run("boot", root=root)
    assert result.rc == 0, result
    assert "boot/set_ephemeral_network: ok: no ethernet interface: nothing to bring up" in result.stderr


def test_boot_phase_without_network(run, root):
    # boot needs no metadata service: it runs in a namespace with nothing listening.
    result = run("boot", root=root)
    assert result.rc == 0, result
    assert "boot: done" in result.stderr
