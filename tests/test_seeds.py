"""NoCloud and ConfigDrive seeds made by the real tools (cloud-localds, genisoimage),
read by wisp straight from the image or a loop device: no mount, no blkid."""

import os
import subprocess

import pytest

from conftest import ECDSA, ED25519, leftover_temporaries

SCRIPT = "#!/bin/sh\necho ran > \"$(dirname \"$0\")/script-ran\"\n"
META_DATA = f"instance-id: iid-local01\nlocal-hostname: seeded-host\npublic-keys:\n  - {ED25519}\n  - {ECDSA}\n"


def local_root(root):
    """A root on no cloud with an IMDS: DMI says QEMU, and no metadata service runs."""
    (root / "sys/class/dmi/id/sys_vendor").write_text("QEMU\n")
    return root


def attach_image(root, image, name="sr0"):
    """Makes `image` the device /dev/<name> of the root, listed in /sys/class/block."""
    (root / "sys/class/block" / name).mkdir(parents=True, exist_ok=True)
    target = root / "dev" / name
    if target.exists() or target.is_symlink():
        target.unlink()
    os.symlink(image, target)


def cloud_localds(tmp_path, meta_data=META_DATA, user_data=SCRIPT, extra=(), network_config=None):
    directory = tmp_path / "seed-src"
    directory.mkdir(exist_ok=True)
    (directory / "meta-data").write_text(meta_data)
    (directory / "user-data").write_text(user_data)
    image = tmp_path / "seed.iso"
    network = []
    if network_config is not None:
        (directory / "network-config").write_text(network_config)
        network = ["--network-config", directory / "network-config"]
    subprocess.run(["cloud-localds", *extra, *network, image, directory / "user-data", directory / "meta-data"], check=True, capture_output=True)
    return image


def assert_bootstrapped(result, root, hostname="seeded-host", instance_id="iid-local01"):
    assert result.rc == 0, result
    assert result.hostname == hostname
    keys = (root / "home/alpine/.ssh/authorized_keys").read_text()
    assert ED25519 in keys and ECDSA in keys
    assert (root / "var/lib/cloud/script-ran").exists()
    assert (root / "var/lib/cloud/.instance-id").read_text() == instance_id + "\n"
    assert not leftover_temporaries(root)


def test_nocloud_from_a_cloud_localds_image(run, root, tmp_path):
    local_root(root)
    network = "version: 2\nethernets:\n  eth0:\n    dhcp4: true\n"
    attach_image(root, cloud_localds(tmp_path, network_config=network))
    result = run("bootstrap", root=root)
    assert_bootstrapped(result, root)
    assert "nocloud: seed /dev/sr0 (label cidata)" in result.stderr
    assert (root / "var/lib/cloud/.autodetect").read_text() == "CLOUD=nocloud\n"
    saved = root / "var/lib/cloud/network-config"
    assert saved.read_text() == network and (saved.stat().st_mode & 0o777) == 0o600
    assert (root / "var/lib/cloud/meta-data").read_text() == META_DATA


def test_nocloud_from_a_loop_device(run, root, tmp_path):
    local_root(root)
    image = cloud_localds(tmp_path)
    device = subprocess.run(["losetup", "-f", "--show", "-r", image], capture_output=True, text=True, check=True).stdout.strip()
    try:
        name = os.path.basename(device)
        attach_image(root, device, name)
        result = run("bootstrap", root=root)
        assert_bootstrapped(result, root)
        assert f"seed /dev/{name} (label cidata)" in result.stderr
    finally:
        subprocess.run(["losetup", "-d", device], capture_output=True)


def test_nocloud_seed_directory_and_json_meta_data(run, root):
    local_root(root)
    seed = root / "var/lib/cloud/seed/nocloud"
    seed.mkdir(parents=True)
    (seed / "meta-data").write_text('{"instance-id": "iid-local01", "local-hostname": "seeded-host", '
                                    f'"public-keys": {{"a": "{ED25519}", "b": "{ECDSA}"}}}}')
    (seed / "user-data").write_text(SCRIPT)
    result = run("bootstrap", root=root)
    assert_bootstrapped(result, root)


def test_command_line_tokens_override(run, root, tmp_path):
    local_root(root)
    seed = root / "srv/elsewhere"
    seed.mkdir(parents=True)
    (seed / "meta-data").write_text(META_DATA)
    (seed / "user-data").write_text(SCRIPT)
    # The seed path is the instance's: under --root it is taken under the root, and so is
    # the image's own absolute link to it.
    (root / "proc/cmdline").write_text("root=/dev/vda1 ds=nocloud;s=file:///seed/;h=from-cmdline;i=iid-cmdline quiet\n")
    os.symlink("/srv/elsewhere", root / "seed")
    result = run("bootstrap", root=root)
    assert_bootstrapped(result, root, hostname="from-cmdline", instance_id="iid-cmdline")


def test_configdrive(run, root, tmp_path):
    local_root(root)
    tree = tmp_path / "cd"
    latest = tree / "openstack/latest"
    latest.mkdir(parents=True)
    (latest / "meta_data.json").write_text(
        '{"uuid": "83679162-1378-4288-a2d4-70e13ec132aa", "hostname": "config-drive-host", '
        f'"public_keys": {{"mykey": "{ED25519}", "other": "{ECDSA}"}}, "name": "test"}}')
    (latest / "user_data").write_text(SCRIPT)
    (latest / "network_data.json").write_text('{"links": []}')
    image = tmp_path / "config.iso"
    subprocess.run(["genisoimage", "-quiet", "-o", image, "-V", "config-2", "-J", "-R", tree], check=True)
    attach_image(root, image, "sr1")
    result = run("bootstrap", root=root)
    assert result.rc == 0, result
    assert result.hostname == "config-drive-host"
    assert (root / "var/lib/cloud/.autodetect").read_text() == "CLOUD=configdrive\n"
    assert (root / "var/lib/cloud/.instance-id").read_text() == "83679162-1378-4288-a2d4-70e13ec132aa\n"
    assert (root / "var/lib/cloud/script-ran").exists()
    assert (root / "var/lib/cloud/network-config").read_text() == '{"links": []}'


def test_joliet_only_and_plain_iso_names(run, root, tmp_path):
    local_root(root)
    source = tmp_path / "src"
    source.mkdir()
    (source / "meta-data").write_text(META_DATA)
    (source / "user-data").write_text(SCRIPT)
    for flags, name in ((["-J"], "joliet.iso"), ([], "plain.iso")):
        image = tmp_path / name
        subprocess.run(["genisoimage", "-quiet", "-o", image, "-V", "cidata", *flags, source / "meta-data", source / "user-data"], check=True)
        attach_image(root, image)
        result = run("imds", "@instance-id", "@local-hostname", root=root)
        assert (result.rc, result.stdout) == (0, "iid-local01\nseeded-host\n"), (name, result)


def test_large_and_empty_user_data(run, root, tmp_path):
    local_root(root)
    big = "#!/bin/sh\n" + "# padding\n" * 10_000 + "echo ran > \"$(dirname \"$0\")/script-ran\"\n"
    assert len(big) > 64 * 1024
    attach_image(root, cloud_localds(tmp_path, user_data=big))
    result = run("bootstrap", root=root)
    assert result.rc == 0, result
    assert (root / "var/lib/cloud/user-data").read_text() == big
    (root / "var/lib/cloud/.bootstrap-complete").unlink()
    attach_image(root, cloud_localds(tmp_path, meta_data=META_DATA.replace("iid-local01", "iid-2"), user_data=""))
    result = run("bootstrap", root=root)
    assert result.rc == 0 and "user-data is empty or absent" in result.stderr, result


def test_corrupt_image_is_refused(run, root, tmp_path):
    local_root(root)
    image = cloud_localds(tmp_path)
    data = bytearray(image.read_bytes())
    # The primary descriptor's root record points far past the end of the image.
    data[16 * 2048 + 156 + 2:16 * 2048 + 156 + 6] = (10 ** 8).to_bytes(4, "little")
    image.write_bytes(bytes(data))
    attach_image(root, image)
    (root / "etc/wisp.conf").write_text((root / "etc/wisp.conf").read_text().replace("CLOUD=auto", "CLOUD=nocloud"))
    result = run("bootstrap", root=root)
    assert result.rc == 1, result
    assert "no NoCloud seed" in result.stderr
    assert not (root / "var/lib/cloud/.bootstrap-complete").exists()


def test_missing_and_invalid_meta_data(run, root):
    local_root(root)
    seed = root / "var/lib/cloud/seed/nocloud"
    seed.mkdir(parents=True)
    (seed / "user-data").write_text(SCRIPT)
    result = run("bootstrap", root=root)
    assert result.rc == 1 and "no meta-data" in result.stderr, result
    (seed / "meta-data").write_text("instance-id: iid-1\nlocal-hostname: [a, b]\n")
    result = run("bootstrap", root=root)
    assert result.rc == 1 and "meta-data line 2: YAML this reader does not take" in result.stderr, result
    (seed / "meta-data").write_text('{"instance-id": ')
    result = run("bootstrap", root=root)
    assert result.rc == 1 and "invalid JSON" in result.stderr, result
    assert not (root / "var/lib/cloud/.bootstrap-complete").exists()


def test_nocloud_from_a_vfat_seed(run, root, tmp_path):
    local_root(root)
    image = cloud_localds(tmp_path, extra=["-f", "vfat"])
    assert b"CIDATA" in image.read_bytes()[:512] or b"cidata" in image.read_bytes()[:512]
    attach_image(root, image)
    result = run("bootstrap", root=root)
    assert_bootstrapped(result, root)
    assert "(label cidata)" in result.stderr.lower()


@pytest.mark.parametrize("bits,mib", [(12, 4), (16, 20), (32, 48)])
def test_vfat_seed_with_long_names_in_subdirectories(run, root, tmp_path, bits, mib):
    local_root(root)
    image = tmp_path / "fat.img"
    with open(image, "wb") as f:
        f.truncate(mib << 20)
    subprocess.run(["mkfs.vfat", "-F", str(bits), "-n", "config-2", image], check=True, capture_output=True)
    tree = tmp_path / "cd"
    latest = tree / "openstack/latest"
    latest.mkdir(parents=True)
    (latest / "meta_data.json").write_text('{"uuid": "fat-uuid-1", "hostname": "fat-host", '
                                          f'"public_keys": {{"k": "{ED25519}"}}}}')
    big = "#!/bin/sh\n" + "# a long line of padding to push the script past several clusters\n" * 1500
    (latest / "user_data").write_text(big)
    subprocess.run(["mcopy", "-s", "-i", image, tree / "openstack", "::/"], check=True, capture_output=True)
    attach_image(root, image, "vdb")
    result = run("bootstrap", root=root)
    assert result.rc == 0, result
    assert result.hostname == "fat-host"
    assert (root / "var/lib/cloud/user-data").read_text() == big
    assert (root / "var/lib/cloud/.autodetect").read_text() == "CLOUD=configdrive\n"


def test_nocloud_seed_over_http(run, netns, root, tmp_path):
    # A plain HTTP server in the test's namespace serves the seed, as `s=http://` names it.
    local_root(root)
    served = tmp_path / "served/seed"
    served.mkdir(parents=True)
    (served / "meta-data").write_text(META_DATA)
    (served / "user-data").write_text(SCRIPT)
    netns.exec(["ip", "addr", "add", "10.99.0.1/32", "dev", "lo"], check=True)
    server = subprocess.Popen(["ip", "netns", "exec", netns.name, "python3", "-m", "http.server", "--bind", "10.99.0.1", "8000"],
                              cwd=tmp_path / "served", stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)
    try:
        (root / "proc/cmdline").write_text("ds=nocloud;s=http://10.99.0.1:8000/seed/\n")
        for _ in range(100):
            if run("imds", "@instance-id", root=root).rc == 0:
                break
        result = run("bootstrap", root=root)
        assert_bootstrapped(result, root)
        assert "nocloud: seed http://10.99.0.1:8000/seed/" in result.stderr
        (root / "proc/cmdline").write_text("ds=nocloud;s=http://seed.example/\n")
        (root / "var/lib/cloud/.bootstrap-complete").unlink()
        result = run("early", root=root)
        assert result.rc == 1 and "wisp has no DNS resolver" in result.stderr, result
    finally:
        server.terminate()
        server.wait()


def test_configdrive_with_only_a_dated_version(run, root, tmp_path):
    local_root(root)
    tree = tmp_path / "cd"
    for version, host in (("2013-10-17", "older-host"), ("2016-06-30", "dated-host")):
        directory = tree / "openstack" / version
        directory.mkdir(parents=True)
        (directory / "meta_data.json").write_text(f'{{"uuid": "u-{version}", "hostname": "{host}", "public_keys": {{"k": "{ED25519}"}}}}')
        (directory / "user_data").write_text(SCRIPT)
    image = tmp_path / "config.iso"
    subprocess.run(["genisoimage", "-quiet", "-o", image, "-V", "config-2", "-J", "-R", tree], check=True)
    attach_image(root, image, "sr1")
    result = run("bootstrap", root=root)
    assert result.rc == 0, result
    assert result.hostname == "dated-host"
    assert (root / "var/lib/cloud/.instance-id").read_text() == "u-2016-06-30\n"
    assert (root / "var/lib/cloud/script-ran").exists()


def test_later_boots_without_the_seed_disk(run, root, tmp_path):
    local_root(root)
    attach_image(root, cloud_localds(tmp_path))
    assert run("bootstrap", root=root).rc == 0
    (root / "dev/sr0").unlink()
    for phase in ("boot", "early", "main", "final"):
        result = run(phase, root=root)
        assert result.rc == 0, (phase, result)
    assert "assuming the same instance" in result.stderr
    # Before the bootstrap completed, a missing seed is a failure.
    (root / "var/lib/cloud/.bootstrap-complete").unlink()
    result = run("early", root=root)
    assert result.rc == 1 and "no NoCloud seed" in result.stderr, result
