"""Growing partitions: tables made by sfdisk and sgdisk, grown by `wisp grow --image`
and by growpart on a copy, judged by sgdisk -v and sfdisk --verify; crash points; bad
input; and the real kernel on loop devices."""

import contextlib
import ctypes
import hashlib
import os
import re
import shutil
import struct
import subprocess
import time
import zlib

import pytest

from conftest import BINARY

MIB = 1 << 20


def sh(*command, **kwargs):
    return subprocess.run([str(c) for c in command], check=True, capture_output=True, text=True, **kwargs)


def wisp_grow(image, partition, env=None):
    return subprocess.run([str(BINARY), "grow", "--image", str(image), "--partition", str(partition)],
                          capture_output=True, text=True, env=env)


def digest(path):
    return hashlib.sha256(open(path, "rb").read()).hexdigest()


def sgdisk_problems(image):
    out = subprocess.run(["sgdisk", "-v", str(image)], capture_output=True, text=True).stdout
    return [line for line in out.splitlines() if line.startswith("Problem:")]


def extent(image, number):
    """(first, last) sector of a partition, as sfdisk reads it."""
    out = sh("sfdisk", "--dump", image).stdout
    for line in out.splitlines():
        match = re.match(rf"\S+?{number} : start=\s*(\d+), size=\s*(\d+)", line)
        if match:
            start, size = int(match[1]), int(match[2])
            return start, start + size - 1
    raise AssertionError(f"no partition {number} in\n{out}")


def gpt_image(path, size_mib, grown_mib, partitions):
    """sgdisk's table for a disk of size_mib, then the disk grows to grown_mib."""
    with open(path, "wb") as f:
        f.truncate(size_mib * MIB)
    args = ["sgdisk", "-o"]
    for number, (start, end) in enumerate(partitions, 1):
        args += ["-n", f"{number}:{start}:{end}", "-t", f"{number}:8300"]
    sh(*args, path)
    with open(path, "r+b") as f:
        f.truncate(grown_mib * MIB)


def mbr_image(path, size_mib, grown_mib, script):
    with open(path, "wb") as f:
        f.truncate(size_mib * MIB)
    sh("sfdisk", "-q", path, input=script)
    with open(path, "r+b") as f:
        f.truncate(grown_mib * MIB)


def aligned(end, sector_size=512):
    per_mib = MIB // sector_size
    return (end + 1) // per_mib * per_mib - 1


def check_against_growpart(tmp_path, image, number):
    copy = tmp_path / "growpart.img"
    shutil.copy(image, copy)
    result = wisp_grow(image, number)
    assert result.returncode == 0, result
    subprocess.run(["growpart", str(copy), str(number)], capture_output=True, text=True)
    ours, theirs = extent(image, number), extent(copy, number)
    assert ours[0] == theirs[0]
    # Equal, or differing only by the 1 MiB alignment growpart 0.33 does not do.
    assert ours[1] in (theirs[1], aligned(theirs[1])), (ours, theirs)
    return result


def test_gpt_one_partition(tmp_path):
    image = tmp_path / "disk.img"
    gpt_image(image, 64, 256, [(2048, "+20M")])
    assert len(sgdisk_problems(image)) == 1  # the backup header is mid-disk, as on a grown cloud volume
    result = check_against_growpart(tmp_path, image, 1)
    assert "partition 1 grown from 20 MiB to 254 MiB" in result.stdout
    assert sgdisk_problems(image) == []
    assert "No errors detected" in sh("sfdisk", "--verify", image).stdout
    assert extent(image, 1) == (2048, 522_239)
    again = wisp_grow(image, 1)
    assert again.returncode == 0 and "no change (less than 1 MiB to gain)" in again.stdout


def test_gpt_several_partitions_root_last(tmp_path):
    image = tmp_path / "disk.img"
    gpt_image(image, 64, 128, [(2048, "+8M"), (0, "+8M"), (0, "+20M")])
    check_against_growpart(tmp_path, image, 3)
    assert sgdisk_problems(image) == []
    assert extent(image, 1) == (2048, 18_431)


def test_gpt_partition_after_the_root(tmp_path):
    image = tmp_path / "disk.img"
    gpt_image(image, 64, 128, [(2048, "+8M"), (40960, "+8M")])
    result = check_against_growpart(tmp_path, image, 1)
    assert extent(image, 1) == (2048, 40959)
    assert "grown from 8 MiB to 19 MiB" in result.stdout
    assert sgdisk_problems(image) == []
    # Directly followed by partition 2 now: nothing to gain, table unchanged.
    before = digest(image)
    result = wisp_grow(image, 1)
    assert result.returncode == 0 and "no change" in result.stdout and digest(image) == before


def test_mbr(tmp_path):
    image = tmp_path / "disk.img"
    mbr_image(image, 64, 256, "label: dos\nstart=2048, size=20MiB, type=83\n")
    result = check_against_growpart(tmp_path, image, 1)
    assert "grown from 20 MiB to 254 MiB" in result.stdout
    assert "No errors detected" in sh("sfdisk", "--verify", image).stdout
    assert extent(image, 1) == (2048, 522_239)


def test_mbr_logical_partition_is_skipped(tmp_path):
    image = tmp_path / "disk.img"
    mbr_image(image, 64, 128, "label: dos\nstart=2048, size=8MiB, type=83\nsize=40MiB, type=5\nsize=8MiB, type=83\n")
    before = digest(image)
    result = wisp_grow(image, 5)
    assert result.returncode == 0 and "a logical partition inside an extended one is not grown" in result.stdout
    result = wisp_grow(image, 2)
    assert result.returncode == 0 and "an extended partition is not grown" in result.stdout
    assert digest(image) == before


@contextlib.contextmanager
def loop_device(image, sector_size=512):
    device = sh("losetup", "-f", "--show", "--sector-size", str(sector_size), image).stdout.strip()
    name = os.path.basename(device)
    if any(entry.startswith(name + "p") for entry in os.listdir(f"/sys/block/{name}")):
        # The kernel keeps a partition added by BLKPG across the loop device's detach: a
        # device detached while its partition was busy comes back with it, at the extent
        # of its last user's image.
        sh("partx", "-d", device)
    try:
        yield device
    finally:
        subprocess.run(["partx", "-d", device], capture_output=True)
        subprocess.run(["losetup", "-d", device], capture_output=True)


def test_gpt_4096_byte_sectors(tmp_path):
    image = tmp_path / "disk.img"
    with open(image, "wb") as f:
        f.truncate(64 * MIB)
    with loop_device(image, 4096) as device:
        sh("sgdisk", "-o", "-n", "1:256:+20M", "-t", "1:8300", device)
    with open(image, "r+b") as f:
        f.truncate(256 * MIB)
    result = wisp_grow(image, 1)
    assert result.returncode == 0 and "grown from 20 MiB to 254 MiB" in result.stdout, result
    with loop_device(image, 4096) as device:
        assert sgdisk_problems(device) == []
        out = sh("sgdisk", "-i", "1", device).stdout
        assert "Last sector: 65279" in out, out


@pytest.mark.parametrize("crash_after", [1, 2, 3, 4])
def test_crash_at_each_write_then_rerun(tmp_path, crash_after):
    base = tmp_path / "base.img"
    gpt_image(base, 64, 256, [(2048, "+20M")])
    clean = tmp_path / "clean.img"
    shutil.copy(base, clean)
    assert wisp_grow(clean, 1).returncode == 0
    crashed = tmp_path / "crashed.img"
    shutil.copy(base, crashed)
    env = {**os.environ, "WISP_TEST_CRASH_AFTER_WRITES": str(crash_after)}
    result = wisp_grow(crashed, 1, env=env)
    assert result.returncode == 99, result
    # Either the table as it was (its backup mid-disk) or a sound new one.
    assert len(sgdisk_problems(crashed)) <= len(sgdisk_problems(base))
    assert wisp_grow(crashed, 1).returncode == 0
    assert digest(crashed) == digest(clean)


def corrupt(image, offset, length=1):
    with open(image, "r+b") as f:
        f.seek(offset)
        data = bytearray(f.read(length))
        f.seek(offset)
        f.write(bytes(b ^ 0xff for b in data))


def refused(image, partition, message):
    before = digest(image)
    result = wisp_grow(image, partition)
    assert result.returncode == 1, result
    assert message in result.stderr, result.stderr
    assert digest(image) == before


def test_corrupt_primary_with_good_backup(tmp_path):
    image = tmp_path / "disk.img"
    gpt_image(image, 64, 64, [(2048, "+20M")])
    corrupt(image, 512 + 40)
    refused(image, 1, "GPT header CRC mismatch, but the backup at the end of the disk is sound")


def test_corrupt_backup_with_good_primary(tmp_path):
    image = tmp_path / "disk.img"
    gpt_image(image, 64, 128, [(2048, "+20M")])
    corrupt(image, 64 * MIB - 512 + 40)
    refused(image, 1, "backup GPT: GPT header CRC mismatch")


def test_entries_crc_mismatch(tmp_path):
    image = tmp_path / "disk.img"
    gpt_image(image, 64, 128, [(2048, "+20M")])
    corrupt(image, 1024 + 60)
    refused(image, 1, "GPT partition entries CRC mismatch")


def rewrite_gpt_entry(image, number, first, last):
    """Sets an entry's extent in both tables and fixes every CRC, as a buggy tool might."""
    with open(image, "r+b") as f:
        for header_lba in (1, None):
            if header_lba is None:
                f.seek(512 + 32)
                header_lba = struct.unpack("<Q", f.read(8))[0]
            f.seek(header_lba * 512)
            header = bytearray(f.read(92))
            entries_lba, count, size = struct.unpack_from("<QII", header, 72)
            f.seek(entries_lba * 512)
            entries = bytearray(f.read(count * size))
            struct.pack_into("<QQ", entries, (number - 1) * size + 32, first, last)
            struct.pack_into("<I", header, 88, zlib.crc32(entries))
            struct.pack_into("<I", header, 16, 0)
            struct.pack_into("<I", header, 16, zlib.crc32(header))
            f.seek(entries_lba * 512)
            f.write(entries)
            f.seek(header_lba * 512)
            f.write(header)


def test_overlapping_partitions(tmp_path):
    image = tmp_path / "disk.img"
    gpt_image(image, 64, 128, [(2048, "+8M"), (0, "+8M")])
    rewrite_gpt_entry(image, 2, 10000, 30000)
    refused(image, 1, "GPT partitions 1 and 2 overlap")


def test_mbr_with_a_garbage_signature(tmp_path):
    image = tmp_path / "disk.img"
    mbr_image(image, 64, 128, "label: dos\nstart=2048, size=20MiB, type=83\n")
    corrupt(image, 510, 2)
    refused(image, 1, "no partition table (MBR signature 55 AA missing)")


def test_disk_smaller_than_its_table(tmp_path):
    image = tmp_path / "disk.img"
    gpt_image(image, 64, 32, [(2048, "+20M")])
    refused(image, 1, "the disk is smaller than its GPT claims")
    image = tmp_path / "mbr.img"
    mbr_image(image, 64, 16, "label: dos\nstart=2048, size=20MiB, type=83\n")
    refused(image, 1, "the disk is smaller than its MBR claims")


def test_no_such_partition(tmp_path):
    image = tmp_path / "disk.img"
    gpt_image(image, 64, 128, [(2048, "+20M")])
    refused(image, 2, "GPT has no partition 2")


# The real kernel: mounted filesystems on partitions of loop devices, grown online.

CLONE_NEWNS, MS_BIND, MS_REC, MS_PRIVATE = 0x20000, 0x1000, 0x4000, 0x40000
LIBC = ctypes.CDLL(None, use_errno=True)


def checked(result):
    if result != 0:
        raise OSError(ctypes.get_errno(), os.strerror(ctypes.get_errno()))


@contextlib.contextmanager
def private_mounts():
    """The test's mounts in a mount namespace of its own. Every `ip netns exec` and
    `unshare --mount` on the machine (a fake IMDS of any test run at the same time) copies
    the namespace it starts in, mounts included, and that copy keeps a filesystem mounted
    after the test's umount: xfs_repair then reads a grown xfs whose primary superblock is
    not yet written back, the partition stays busy, and the loop device keeps it after
    `losetup -d`. Mounts made here are in no namespace another process starts in.

    setns(2) into a mount namespace also sets the caller's root and working directory to
    that namespace's root: in a chroot (ci/fresh runs the suite in one) that is the host's
    /, so both are taken back from descriptors opened before, or every later test would
    run outside the chroot."""
    outside = os.open("/proc/self/ns/mnt", os.O_RDONLY)
    root = os.open("/", os.O_RDONLY | os.O_DIRECTORY)
    cwd = os.open(".", os.O_RDONLY | os.O_DIRECTORY)
    try:
        checked(LIBC.unshare(CLONE_NEWNS))
        checked(LIBC.mount(b"none", b"/", None, MS_REC | MS_PRIVATE, None))
        yield
    finally:
        # Back outside; the namespace, and whatever a failed test left mounted in it, ends.
        checked(LIBC.setns(outside, CLONE_NEWNS))
        os.fchdir(root)
        os.chroot(".")
        os.fchdir(cwd)
        for fd in (outside, root, cwd):
            os.close(fd)


def test_private_mounts_leaves_a_chrooted_process_in_its_root(tmp_path):
    # ci/fresh runs the suite chrooted, its / a bind mount in a mount namespace of its
    # own; a process so jailed here (forked, so that this one keeps its root whatever
    # happens) goes through private_mounts() and must still see the jail and its cwd.
    jail = tmp_path / "jail"
    (jail / "proc").mkdir(parents=True)
    (jail / "cwd").mkdir()
    reader, writer = os.pipe()
    pid = os.fork()
    if pid == 0:
        try:
            os.close(reader)
            checked(LIBC.unshare(CLONE_NEWNS))
            checked(LIBC.mount(b"none", b"/", None, MS_REC | MS_PRIVATE, None))
            checked(LIBC.mount(bytes(jail), bytes(jail), None, MS_BIND, None))
            checked(LIBC.mount(b"proc", bytes(jail / "proc"), b"proc", 0, None))
            os.chroot(jail)
            os.chdir("/cwd")
            with private_mounts():
                pass
            seen = repr((sorted(os.listdir("/")), os.getcwd()))
        except BaseException as e:
            seen = repr(e)
        finally:
            os.write(writer, seen.encode())
            os._exit(0)
    os.close(writer)
    with os.fdopen(reader) as pipe:
        seen = pipe.read()
    os.waitpid(pid, 0)
    assert seen == repr((["cwd", "proc"], "/cwd")), f"after private_mounts(), a chrooted process sees {seen}"


def unmount(mountpoint, device):
    """umount, then the device is free: an O_EXCL open fails with EBUSY while the
    filesystem is still mounted in any namespace."""
    sh("umount", mountpoint)
    try:
        os.close(os.open(device, os.O_RDONLY | os.O_EXCL))
    except OSError as e:
        raise AssertionError(f"{device} is still in use after umount (mounted in another namespace?): {e}") from e


@contextlib.contextmanager
def mounted_partition(tmp_path, label, mkfs, size_mib=400, grown_mib=800, sector_size=512):
    image = tmp_path / "disk.img"
    with open(image, "wb") as f:
        f.truncate(size_mib * MIB)
    if label == "gpt":
        sh("sgdisk", "-o", "-n", f"1:{MIB // sector_size}:0", "-t", "1:8300", image) if sector_size == 512 else None
    else:
        sh("sfdisk", "-q", image, input="label: dos\nstart=2048, type=83\n")
    with loop_device(image, sector_size) as device:
        if label == "gpt" and sector_size != 512:
            sh("sgdisk", "-o", "-n", f"1:{MIB // sector_size}:0", "-t", "1:8300", device)
        sh("partx", "-a", device)
        partition = device + "p1"
        sh(*mkfs, partition)
    with open(image, "r+b") as f:
        f.truncate(grown_mib * MIB)
    mountpoint = tmp_path / "mnt"
    mountpoint.mkdir()
    with loop_device(image, sector_size) as device, private_mounts():
        subprocess.run(["partx", "-a", device], capture_output=True)
        partition = device + "p1"
        sh("mount", partition, mountpoint)
        try:
            yield image, device, partition, mountpoint
        finally:
            subprocess.run(["umount", str(mountpoint)], capture_output=True)


def sysfs_size(partition):
    name = os.path.basename(partition)
    return int(open(f"/sys/class/block/{name}/size").read()) * 512


@pytest.mark.parametrize("label", ["gpt", "mbr"])
def test_xfs_online_on_a_loop_device(tmp_path, label):
    with mounted_partition(tmp_path, label, ["mkfs.xfs", "-q", "-f"]) as (image, device, partition, mountpoint):
        before = os.statvfs(mountpoint)
        result = subprocess.run([str(BINARY), "grow", str(mountpoint)], capture_output=True, text=True)
        assert result.returncode == 0, result
        # 800 MiB less the GPT backup (or the room MBR keeps for one), aligned to a MiB.
        assert "partition 1 grown from" in result.stdout and "to 798 MiB; xfs grown from" in result.stdout
        assert sysfs_size(partition) == 798 * MIB
        after = os.statvfs(mountpoint)
        assert after.f_blocks * after.f_frsize > 1.8 * before.f_blocks * before.f_frsize
        again = subprocess.run([str(BINARY), "grow", str(mountpoint)], capture_output=True, text=True)
        assert again.returncode == 0 and "no change" in again.stdout and "already fills" in again.stdout
        unmount(mountpoint, partition)
        sh("xfs_repair", "-n", partition)
    if label == "gpt":
        assert sgdisk_problems(image) == []
    else:
        assert "No errors detected" in sh("sfdisk", "--verify", image).stdout


def test_a_copy_of_the_outer_mount_namespace_does_not_keep_the_filesystem(tmp_path):
    # What a test run at the same time does while this one's xfs is mounted: `ip netns
    # exec` copies the mount namespace it starts in. Before the tests mounted in their own
    # namespace, that copy kept xfs mounted past the umount and xfs_repair -n failed
    # ("would write modified primary superblock").
    outside = os.open("/proc/self/ns/mnt", os.O_RDONLY)
    try:
        with mounted_partition(tmp_path, "gpt", ["mkfs.xfs", "-q", "-f"]) as (image, device, partition, mountpoint):
            # --root=/: nsenter's setns would otherwise move it to that namespace's root,
            # out of a chroot (see private_mounts).
            copy = subprocess.Popen(["nsenter", f"--mount=/proc/self/fd/{outside}", "--root=/",
                                     "unshare", "--mount", "sleep", "60"], pass_fds=[outside])
            try:
                while open(f"/proc/{copy.pid}/comm").read() != "sleep\n":
                    assert copy.poll() is None, "nsenter or unshare failed"
                    time.sleep(0.01)
                result = subprocess.run([str(BINARY), "grow", str(mountpoint)], capture_output=True, text=True)
                assert result.returncode == 0 and "xfs grown from" in result.stdout, result
                unmount(mountpoint, partition)
                sh("xfs_repair", "-n", partition)
            finally:
                copy.kill()
                copy.wait()
    finally:
        os.close(outside)


def test_btrfs_online_with_4096_byte_sectors(tmp_path):
    with mounted_partition(tmp_path, "gpt", ["mkfs.btrfs", "-q", "-f"], sector_size=4096) as (image, device, partition, mountpoint):
        result = subprocess.run([str(BINARY), "grow", str(mountpoint)], capture_output=True, text=True)
        assert result.returncode == 0, result
        assert "btrfs resized" in result.stdout
        assert sysfs_size(partition) == 798 * MIB
        usage = sh("btrfs", "filesystem", "show", "--raw", mountpoint).stdout
        assert f"size {798 * MIB} " in usage, usage
        unmount(mountpoint, partition)
        sh("btrfs", "check", "--readonly", partition)


def test_ext4_on_a_loop_device_names_the_refusal(tmp_path):
    # The sandbox lacks CAP_SYS_RESOURCE: the partition grows, ext4's online resize is
    # refused, and wisp says why (ext4 growth itself is proven in the VM).
    with mounted_partition(tmp_path, "gpt", ["mkfs.ext4", "-q", "-F", "-b", "4096"]) as (image, device, partition, mountpoint):
        result = subprocess.run([str(BINARY), "grow", str(mountpoint)], capture_output=True, text=True)
        assert sysfs_size(partition) == 798 * MIB
        if result.returncode != 0:
            assert "EXT4_IOC_RESIZE_FS needs CAP_SYS_RESOURCE" in result.stderr, result
        unmount(mountpoint, partition)
        sh("e2fsck", "-fn", partition)
    assert sgdisk_problems(image) == []


def test_overlay_and_tmpfs_are_skipped(tmp_path):
    mountpoint = tmp_path / "tmp"
    mountpoint.mkdir()
    with private_mounts():
        sh("mount", "-t", "tmpfs", "tmpfs", mountpoint)
        result = subprocess.run([str(BINARY), "grow", str(mountpoint)], capture_output=True, text=True)
        assert result.returncode == 0 and "skipped" in result.stdout and "memory filesystem" in result.stdout
        sh("umount", mountpoint)


def test_filesystem_on_a_whole_disk(tmp_path):
    # No partition table: only the filesystem grows, to the size the kernel reports.
    image = tmp_path / "disk.img"
    with open(image, "wb") as f:
        f.truncate(400 * MIB)
    mountpoint = tmp_path / "mnt"
    mountpoint.mkdir()
    with loop_device(image) as device, private_mounts():
        sh("mkfs.xfs", "-q", "-f", device)
        sh("mount", device, mountpoint)
        try:
            with open(image, "r+b") as f:
                f.truncate(800 * MIB)
            sh("losetup", "-c", device)
            result = subprocess.run([str(BINARY), "grow", str(mountpoint)], capture_output=True, text=True)
            assert result.returncode == 0, result
            assert "partition" not in result.stdout and "xfs grown from 102400 to 204800 blocks" in result.stdout, result
        finally:
            subprocess.run(["umount", str(mountpoint)], capture_output=True)


def test_kernel_told_after_a_crash_before_blkpg(tmp_path):
    # The table was grown (as by a run that crashed before BLKPG) while the kernel still
    # knows the old size: a rerun sees no change in the table, and still tells the kernel.
    with mounted_partition(tmp_path, "gpt", ["mkfs.xfs", "-q", "-f"]) as (image, device, partition, mountpoint):
        before = sysfs_size(partition)
        assert wisp_grow(image, 1).returncode == 0
        assert sysfs_size(partition) == before
        result = subprocess.run([str(BINARY), "grow", str(mountpoint)], capture_output=True, text=True)
        assert result.returncode == 0, result
        assert "no change" in result.stdout and "the kernel is now told the table's size" in result.stdout
        assert sysfs_size(partition) == 798 * MIB and "xfs grown from" in result.stdout
