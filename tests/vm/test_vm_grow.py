"""A real first boot: QEMU with Debian's cloud kernel, root on /dev/vda1 of a 2 GiB disk
whose partition is 200 MiB. The guest mounts it, runs `wisp bootstrap` against the fake
IMDS (reached through QEMU's guestfwd on 169.254.169.254:80) and powers off; the host
then judges the image with sgdisk, sfdisk, e2fsck and dumpe2fs."""

import json
import re
import shutil
import socket
import subprocess
import sys
from pathlib import Path

import pytest

sys.path.insert(0, str(Path(__file__).resolve().parent))
sys.path.insert(0, str(Path(__file__).resolve().parents[1]))

import vmlib  # noqa: E402
from conftest import BINARY, aws_metadata, make_root  # noqa: E402

MIB = 1 << 20
PARTITION_START = 2048
PARTITION_MIB = 200


@pytest.fixture(scope="module")
def vm_ready():
    subprocess.run([str(vmlib.REPO / "ci/vm-setup")], check=True, capture_output=True)


def free_port():
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return s.getsockname()[1]


def make_disk(tmp_path, label, mkfs_options):
    """A cloud image: table and ext4 made for 256 MiB, then the volume is 2 GiB."""
    image = tmp_path / "disk.img"
    with open(image, "wb") as f:
        f.truncate(256 * MIB)
    if label == "gpt":
        subprocess.run(["sgdisk", "-o", "-n", f"1:{PARTITION_START}:+{PARTITION_MIB}M", "-t", "1:8300", image],
                       check=True, capture_output=True)
    else:
        subprocess.run(["sfdisk", "-q", image], input=f"label: dos\nstart={PARTITION_START}, size={PARTITION_MIB}MiB, type=83\n",
                       text=True, check=True, capture_output=True)
    root = make_root(tmp_path / "rootfs")
    (root / "etc/wisp.conf").write_text("CLOUD=aws\nWISP_HTTP_TOTAL_MS=20000\n")
    (root / "mnt-marker").write_text("root filesystem\n")
    offset = PARTITION_START * 512
    subprocess.run(["mkfs.ext4", "-q", "-F", *mkfs_options, "-d", root, "-E", f"offset={offset}", image,
                    f"{PARTITION_MIB}M"], check=True, capture_output=True)
    with open(image, "r+b") as f:
        f.truncate(2048 * MIB)
    return image, offset


GUEST_SCRIPT = """
set -e
ip link set lo up
ip link set eth0 up
ip addr add 169.254.169.15/24 dev eth0
ip route add default via 169.254.169.2
mount /dev/vda1 /mnt
for d in proc sys dev; do mount --bind /$d /mnt/$d; done
/wisp --root /mnt bootstrap
echo "wisp exit: $?"
df -k /mnt | tail -1
hostname
umount /mnt/proc /mnt/sys /mnt/dev
umount /mnt
"""


def boot_bootstrap(tmp_path, image):
    port = free_port()
    directory = tmp_path / "imds"
    directory.mkdir()
    (directory / "imds.json").write_text(json.dumps(aws_metadata(user_data="#!/bin/sh\necho user-data ran in the guest\n")))
    server = subprocess.Popen([sys.executable, str(vmlib.REPO / "tests/fake_imds.py"), "--config", str(directory / "imds.json"),
                               "--log", str(directory / "requests.jsonl"), "--ready", str(directory / "ready"),
                               "--bind", "127.0.0.1", "--port", str(port)])
    try:
        while not (directory / "ready").exists():
            assert server.poll() is None
        netdev = (f"user,id=n0,restrict=on,net=169.254.169.0/24,host=169.254.169.2,dhcpstart=169.254.169.15,"
                  f"guestfwd=tcp:169.254.169.254:80-cmd:busybox nc 127.0.0.1 {port}")
        result = vmlib.boot([("root", image)], GUEST_SCRIPT, payload=BINARY,
                            modules=vmlib.MODULES + ["virtio_net"], extra=["-netdev", netdev, "-device", "virtio-net-pci,netdev=n0"])
    finally:
        server.terminate()
        server.wait()
    requests = [json.loads(line) for line in (directory / "requests.jsonl").read_text().splitlines()] if (directory / "requests.jsonl").exists() else []
    return result, requests


def ext4(image, offset, *tool):
    return subprocess.run([*tool, f"{image}?offset={offset}"], capture_output=True, text=True)


def block_count(image, offset):
    out = ext4(image, offset, "dumpe2fs", "-h").stdout
    return int(re.search(r"Block count:\s+(\d+)", out)[1]), int(re.search(r"Block size:\s+(\d+)", out)[1])


def seed_boot_script(*unmount_first):
    """The guest's script for a first boot from a seed disk: root mounted on /mnt with the
    kernel's filesystems, `wisp bootstrap` there, then everything unmounted (`unmount_first`
    before the rest) so the host reads clean disks."""
    unmounts = "".join(f"umount {path}\n" for path in unmount_first)
    return ("mount /dev/vda1 /mnt\nfor d in proc sys dev; do mount --bind /$d /mnt/$d; done\n"
            "/wisp --root /mnt bootstrap\necho \"wisp exit: $?\"\nhostname\n"
            + unmounts + "umount /mnt/proc /mnt/sys /mnt/dev\numount /mnt\n")


def local_seed(tmp_path, seed_dir):
    """A NoCloud seed image of seed_dir's user-data and meta-data, by cloud-localds."""
    seed = tmp_path / "seed.iso"
    subprocess.run(["cloud-localds", seed, seed_dir / "user-data", seed_dir / "meta-data"], check=True, capture_output=True)
    return seed


@pytest.mark.parametrize("label", ["gpt", "mbr"])
def test_first_boot_grows_root_and_bootstraps(vm_ready, tmp_path, label):
    image, offset = make_disk(tmp_path, label, ["-b", "4096"])
    result, requests = boot_bootstrap(tmp_path, image)
    assert result.rc == 0, result
    assert "wisp exit: 0" in result.console, result
    assert "boot/expand_root: ok: vda1: partition 1 grown from 200 MiB to 2046 MiB; ext4 resized to" in result.console, result
    assert "ip-10-0-1-23" in result.console
    assert any(r["path"] == "/latest/api/token" for r in requests)
    # The host judges the image.
    if label == "gpt":
        out = subprocess.run(["sgdisk", "-v", image], capture_output=True, text=True).stdout
        assert "No problems found" in out, out
    out = subprocess.run(["sfdisk", "--verify", image], capture_output=True, text=True)
    assert "No errors detected" in out.stdout + out.stderr
    listing = subprocess.run(["sfdisk", "-l", "-o", "Device,Start,End,Sectors", image], capture_output=True, text=True).stdout
    assert re.search(r"disk\.img1\s+2048\s+4192255\s+4190208", listing), listing
    fsck = ext4(image, offset, "e2fsck", "-fn")
    assert fsck.returncode == 0, fsck.stdout + fsck.stderr
    blocks, size = block_count(image, offset)
    assert (blocks, size) == (4190208 * 512 // 4096, 4096)
    # wisp's files are on the grown root.
    files = subprocess.run(["debugfs", "-R", "cat /var/lib/cloud/.bootstrap-complete", f"{image}?offset={offset}"],
                           capture_output=True, text=True)
    assert files.returncode == 0 and "File not found" not in files.stderr, files.stderr


@pytest.mark.parametrize("features", [["-b", "1024"], ["-b", "1024", "-O", "^resize_inode"]],
                         ids=["1k-blocks", "1k-blocks-no-resize-inode"])
def test_ext4_with_1k_blocks(vm_ready, tmp_path, features):
    image, offset = make_disk(tmp_path, "gpt", features)
    script = """
mount /dev/vda1 /mnt
/wisp grow /mnt
echo "wisp exit: $?"
umount /mnt
"""
    result = vmlib.boot([("root", image)], script, payload=BINARY)
    assert result.rc == 0, result
    # The partition always grows; the kernel grows ext4 online, or wisp says why not.
    assert "vda1: partition 1 grown from 200 MiB to 2046 MiB" in result.console, result
    blocks, size = block_count(image, offset)
    if "wisp exit: 0" in result.console:
        assert blocks * size > 2000 * MIB
    else:
        assert "resize" in result.console and "ext4" in result.console, result
        assert blocks * size == PARTITION_MIB * MIB
    fsck = ext4(image, offset, "e2fsck", "-fn")
    assert fsck.returncode == 0, fsck.stdout + fsck.stderr


def test_first_boot_from_a_nocloud_seed_disk(vm_ready, tmp_path):
    image, offset = make_disk(tmp_path, "gpt", ["-b", "4096"])
    # CLOUD=auto, QEMU's DMI: the seed disk is what the guest finds.
    subprocess.run(["debugfs", "-w", "-R", "rm /etc/wisp.conf", f"{image}?offset={offset}"], check=True, capture_output=True)
    seed_dir = tmp_path / "seed-src"
    seed_dir.mkdir()
    (seed_dir / "meta-data").write_text("instance-id: iid-vm01\nlocal-hostname: seeded-vm\n")
    (seed_dir / "user-data").write_text("#!/bin/sh\necho user-data ran from the seed\n")
    seed = local_seed(tmp_path, seed_dir)
    result = vmlib.boot([("root", image), ("seed", seed)], seed_boot_script(), payload=BINARY)
    assert result.rc == 0, result
    assert "wisp exit: 0" in result.console, result
    assert "nocloud: seed /dev/vdb (label cidata)" in result.console, result
    assert "seeded-vm" in result.console
    assert "boot/expand_root: ok: vda1: partition 1 grown" in result.console
    fsck = ext4(image, offset, "e2fsck", "-fn")
    assert fsck.returncode == 0, fsck.stdout + fsck.stderr
    log = subprocess.run(["debugfs", "-R", "cat /var/log/user-data.log", f"{image}?offset={offset}"], capture_output=True, text=True)
    assert "user-data ran from the seed" in log.stdout


def test_first_boot_applies_cloud_config_with_a_volume(vm_ready, tmp_path):
    """cloud-config in a real guest: a NoCloud seed whose MIME user-data (write-mime-multipart)
    holds a cloud-config and a script; the cloud-config creates a user, writes files, mounts
    a third disk as a VM runtime would attach a volume, and its runcmd (chrooted into the
    root on /mnt, which has the kernel's filesystems bound in) writes into that volume.
    The host then reads the disks."""
    image, offset = make_disk(tmp_path, "gpt", ["-b", "4096"])
    subprocess.run(["debugfs", "-w", "-R", "rm /etc/wisp.conf", f"{image}?offset={offset}"], check=True, capture_output=True)
    volume = tmp_path / "volume.img"
    with open(volume, "wb") as f:
        f.truncate(64 * MIB)
    subprocess.run(["mkfs.ext4", "-q", "-F", "-L", "data", volume], check=True, capture_output=True)
    config = """#cloud-config
hostname: vm-config
users:
  - default
  - name: deploy
    groups: [wheel]
write_files:
  - path: /etc/app.conf
    content: "answer = 42\\n"
    permissions: '0600'
    owner: deploy
mounts:
  - [vdc, /data, ext4, "defaults,noatime"]
runcmd:
  - echo "written by runcmd" > /data/hello
  - [sh, -c, "grep -c ' /data ' /proc/mounts > /data/mounted"]
"""
    seed_dir = tmp_path / "seed-src"
    seed_dir.mkdir()
    (seed_dir / "config").write_text(config)
    (seed_dir / "script").write_text("#!/bin/sh\necho script ran in the guest\n")
    user_data = subprocess.run(["write-mime-multipart", f"{seed_dir / 'config'}:text/cloud-config",
                                f"{seed_dir / 'script'}:text/x-shellscript"], capture_output=True, check=True).stdout
    (seed_dir / "user-data").write_bytes(user_data)
    (seed_dir / "meta-data").write_text("instance-id: iid-vm02\n")
    seed = local_seed(tmp_path, seed_dir)
    result = vmlib.boot([("root", image), ("seed", seed), ("data", volume)], seed_boot_script("/mnt/data"), payload=BINARY)
    assert result.rc == 0, result
    assert "wisp exit: 0" in result.console, result
    assert "vm-config" in result.console
    assert "main/userdata_mounts: ok: 1 entries in /etc/fstab, 1 mounted" in result.console, result

    def cat(path, disk=image, at=offset):
        target = f"{disk}?offset={at}" if at else str(disk)
        return subprocess.run(["debugfs", "-R", f"cat {path}", target], capture_output=True, text=True).stdout

    assert cat("/hello", volume, 0) == "written by runcmd\n"
    assert cat("/mounted", volume, 0) == "1\n"
    assert "/dev/vdc\t/data\text4\tdefaults,noatime,comment=cloudconfig\t0\t2" in cat("/etc/fstab")
    assert cat("/etc/app.conf") == "answer = 42\n"
    assert "deploy:x:1001:1001::/home/deploy:/bin/sh" in cat("/etc/passwd")
    assert "script ran in the guest" in cat("/var/log/user-data.log")
    for disk, at in ((image, offset), (volume, 0)):
        target = f"{disk}?offset={at}" if at else str(disk)
        fsck = subprocess.run(["e2fsck", "-fn", target], capture_output=True, text=True)
        assert fsck.returncode == 0, fsck.stdout + fsck.stderr
