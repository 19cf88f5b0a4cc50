"""A real aarch64 first boot: QEMU's `virt` machine (software emulation of a Cortex-A57)
with Debian's arm64 cloud kernel, booting the aarch64 release binary from an initramfs
against the same disk and fake IMDS as test_vm_grow's x86_64 boot: `wisp bootstrap`
grows the root partition and ext4, installs the keys, runs user-data, and the host
judges the image. `ci/aarch64` builds the binary and fetches the kernel and an arm64
busybox into target/vm-arm64."""

import json
import re
import subprocess
import sys
import time
from pathlib import Path

import pytest

sys.path.insert(0, str(Path(__file__).resolve().parent))
sys.path.insert(0, str(Path(__file__).resolve().parents[1]))

import vmlib  # noqa: E402
from conftest import aws_metadata, elf_is_static  # noqa: E402
from test_vm_grow import GUEST_SCRIPT, free_port, make_disk  # noqa: E402

ARM64 = vmlib.REPO / "target/vm-arm64"
BINARY = vmlib.REPO / "target/aarch64-unknown-linux-gnu/release/wisp"
# Debian's arm64 cloud kernel builds these as modules; `virt` has a PCIe bus.
MODULES = ["virtio_pci", "virtio_blk", "virtio_net"]


@pytest.fixture
def arm64_guest(monkeypatch):
    """vmlib's initramfs builder, pointed at the arm64 kernel and busybox."""
    for needed in (ARM64 / "kernel/root/lib/modules", ARM64 / "busybox/bin/busybox", BINARY):
        if not needed.exists():
            pytest.fail(f"{needed} is missing: run ci/aarch64")
    assert elf_is_static(BINARY)
    monkeypatch.setattr(vmlib, "KERNEL_ROOT", ARM64 / "kernel/root")
    monkeypatch.setattr(vmlib, "BUSYBOX", ARM64 / "busybox/bin/busybox")


def boot(tmp_path, image, netdev, timeout=600):
    initramfs = vmlib.build_initramfs(tmp_path, BINARY, GUEST_SCRIPT, MODULES)
    kernel = ARM64 / "kernel/root/boot" / f"vmlinuz-{vmlib.kernel_release()}"
    command = ["qemu-system-aarch64", "-accel", "tcg", "-M", "virt", "-cpu", "cortex-a57", "-m", "256", "-smp", "1",
               "-nodefaults", "-nographic", "-serial", "stdio", "-no-reboot",
               "-kernel", str(kernel), "-initrd", str(initramfs),
               "-append", "console=ttyAMA0 panic=-1 quiet loglevel=3",
               "-drive", f"file={image},if=none,id=d0,format=raw,cache=writeback",
               "-device", "virtio-blk-pci,drive=d0,serial=root",
               "-netdev", netdev, "-device", "virtio-net-pci,netdev=n0"]
    started = time.monotonic()
    process = subprocess.run(command, capture_output=True, text=True, timeout=timeout, stdin=subprocess.DEVNULL)
    console = process.stdout + process.stderr
    match = re.search(re.escape(vmlib.END_MARKER) + r"(\d+)", console)
    assert match, f"the guest ended without running the script (qemu exit {process.returncode}):\n{console[-3000:]}"
    return int(match[1]), console, time.monotonic() - started


def test_aarch64_first_boot_grows_root_and_bootstraps(arm64_guest, tmp_path):
    image, offset = make_disk(tmp_path, "gpt", ["-b", "4096"])
    # The image's own /bin/sh is busybox, for the guest's architecture: user-data runs
    # chrooted into the image (make_disk's root has the host's).
    for command in ("rm /bin/busybox", f"write {ARM64 / 'busybox/bin/busybox'} /bin/busybox", "sif /bin/busybox mode 0100755"):
        done = subprocess.run(["debugfs", "-w", "-R", command, f"{image}?offset={offset}"], capture_output=True, text=True)
        assert done.returncode == 0, done
    port = free_port()
    directory = tmp_path / "imds"
    directory.mkdir()
    (directory / "imds.json").write_text(json.dumps(aws_metadata(user_data="#!/bin/sh\necho user-data ran on aarch64\n")))
    server = subprocess.Popen([sys.executable, str(vmlib.REPO / "tests/fake_imds.py"), "--config", str(directory / "imds.json"),
                               "--log", str(directory / "requests.jsonl"), "--ready", str(directory / "ready"),
                               "--bind", "127.0.0.1", "--port", str(port)])
    try:
        while not (directory / "ready").exists():
            assert server.poll() is None
            time.sleep(0.02)
        netdev = (f"user,id=n0,restrict=on,net=169.254.169.0/24,host=169.254.169.2,dhcpstart=169.254.169.15,"
                  f"guestfwd=tcp:169.254.169.254:80-cmd:busybox nc 127.0.0.1 {port}")
        rc, console, seconds = boot(tmp_path, image, netdev)
    finally:
        server.terminate()
        server.wait()
    assert rc == 0 and "wisp exit: 0" in console, console[-3000:]
    assert "boot/expand_root: ok: vda1: partition 1 grown from 200 MiB to 2046 MiB; ext4 resized to" in console, console[-3000:]
    assert "ip-10-0-1-23" in console
    requests = [json.loads(line) for line in (directory / "requests.jsonl").read_text().splitlines()]
    assert any(r["path"] == "/latest/api/token" for r in requests)
    # The host judges the image the aarch64 guest wrote.
    assert "No problems found" in subprocess.run(["sgdisk", "-v", image], capture_output=True, text=True).stdout
    fsck = subprocess.run(["e2fsck", "-fn", f"{image}?offset={offset}"], capture_output=True, text=True)
    assert fsck.returncode == 0, fsck.stdout + fsck.stderr
    root = tmp_path / "check"
    subprocess.run(["debugfs", "-R", "dump /home/alpine/.ssh/authorized_keys " + str(root), f"{image}?offset={offset}"],
                   capture_output=True, check=True)
    assert "alice@laptop" in root.read_text()
    log = tmp_path / "user-data.log"
    subprocess.run(["debugfs", "-R", f"dump /var/log/user-data.log {log}", f"{image}?offset={offset}"],
                   capture_output=True, check=True)
    assert log.read_text() == "user-data ran on aarch64\n"
    print(f"aarch64 guest: {seconds:.1f} s")
