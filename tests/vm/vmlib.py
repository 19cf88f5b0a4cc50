"""Boots Debian's cloud kernel under QEMU (software emulation: the nested KVM here cannot
boot a stock kernel) with a busybox initramfs that runs a script against virtio disks,
then powers off. `ci/vm-setup` installs QEMU and unpacks the kernel under target/vm."""

import os
import re
import shutil
import subprocess
import tempfile
import time
from pathlib import Path

REPO = Path(__file__).resolve().parents[2]
CACHE = REPO / "target/vm"
KERNEL_ROOT = CACHE / "kernel/root"
BUSYBOX = Path("/bin/busybox")
# The virtio block driver and what it needs, in load order (found with modinfo).
MODULES = ["virtio_blk", "virtio_pci", "xfs", "btrfs"]
END_MARKER = "WISP-VM-RC="


class VmError(Exception):
    pass


class Result:
    def __init__(self, console, rc, seconds):
        self.console = console
        self.rc = rc
        self.seconds = seconds

    def __repr__(self):
        return f"<vm rc={self.rc} {self.seconds:.1f}s console tail:\n{self.console[-3000:]}>"


def kernel_release():
    releases = list((KERNEL_ROOT / "lib/modules").iterdir()) if (KERNEL_ROOT / "lib/modules").exists() else []
    if not releases:
        raise VmError("no kernel under target/vm: run ci/vm-setup")
    return releases[0].name


def module_path(release, name):
    found = list((KERNEL_ROOT / "lib/modules" / release).rglob(name.replace("_", "?") + ".ko*"))
    matches = [p for p in found if p.name.split(".ko")[0].replace("-", "_") == name]
    if not matches:
        raise VmError(f"module {name} not found in the kernel package")
    return matches[0]


def module_info(path, key):
    """A field of a module's .modinfo section (NUL-separated key=value strings)."""
    data = path.read_bytes()
    if path.suffix in (".xz", ".zst"):
        tool = "xz" if path.suffix == ".xz" else "zstd"
        data = subprocess.run([tool, "-dc", str(path)], capture_output=True, check=True).stdout
    match = re.search(rb"\x00" + key + rb"=([^\x00]*)\x00", data)
    return match[1].decode() if match else ""


def load_order(release, names):
    """Modules with their dependencies first, each once."""
    order = []

    def visit(name):
        if name in order:
            return
        depends = module_info(module_path(release, name), b"depends")
        for dependency in filter(None, depends.split(",")):
            visit(dependency)
        order.append(name)

    for name in names:
        visit(name)
    return order


def build_initramfs(directory, payload, script, modules):
    release = kernel_release()
    tree = Path(directory) / "initramfs"
    for sub in ("bin", "dev", "proc", "sys", "mnt", "lib/modules"):
        (tree / sub).mkdir(parents=True, exist_ok=True)
    shutil.copy(BUSYBOX, tree / "bin/busybox")
    if payload:
        shutil.copy(payload, tree / "wisp")
    order = load_order(release, modules)
    for name in order:
        source = module_path(release, name)
        target = tree / "lib/modules" / (name + ".ko")
        if source.suffix == ".xz":
            target.write_bytes(subprocess.run(["xz", "-dc", str(source)], capture_output=True, check=True).stdout)
        elif source.suffix == ".zst":
            target.write_bytes(subprocess.run(["zstd", "-dc", str(source)], capture_output=True, check=True).stdout)
        else:
            shutil.copy(source, target)
    (tree / "script").write_text(script)
    inserts = "\n".join(f"insmod /lib/modules/{name}.ko" for name in order)
    init = f"""#!/bin/busybox sh
/bin/busybox --install -s /bin
mount -t proc proc /proc
mount -t sysfs sys /sys
mount -t devtmpfs dev /dev
{inserts}
n=0; while [ ! -e /dev/vda ] && [ $n -lt 100 ]; do sleep 0.05; n=$((n+1)); done
echo WISP-VM-START
sh /script
echo "{END_MARKER}$?"
sync
poweroff -f
"""
    (tree / "init").write_text(init)
    os.chmod(tree / "init", 0o755)
    archive = Path(directory) / "initramfs.cpio"
    files = subprocess.run(["find", "."], cwd=tree, capture_output=True, text=True, check=True).stdout
    with open(archive, "wb") as out:
        subprocess.run(["cpio", "-o", "-H", "newc", "--quiet"], cwd=tree, input=files.encode(), stdout=out, check=True)
    return archive


def boot(disks, script, payload=None, modules=MODULES, extra=(), timeout=180, memory_mib=256):
    """Boots with `disks` [(serial, image path)] as virtio disks vda, vdb, ...; runs
    `script` (busybox sh) in the initramfs; returns the console and the script's exit code."""
    if not shutil.which("qemu-system-x86_64"):
        raise VmError("qemu-system-x86_64 is missing: run ci/vm-setup")
    release = kernel_release()
    kernel = KERNEL_ROOT / "boot" / f"vmlinuz-{release}"
    with tempfile.TemporaryDirectory(prefix="wisp-vm-") as directory:
        initramfs = build_initramfs(directory, payload, script, modules)
        command = ["qemu-system-x86_64", "-accel", "tcg", "-M", "q35", "-m", str(memory_mib), "-smp", "1",
                   "-nodefaults", "-nographic", "-serial", "stdio", "-no-reboot",
                   "-kernel", str(kernel), "-initrd", str(initramfs),
                   "-append", "console=ttyS0 panic=-1 quiet loglevel=3"]
        for index, (serial, image) in enumerate(disks):
            command += ["-drive", f"file={image},if=none,id=d{index},format=raw,cache=writeback",
                        "-device", f"virtio-blk-pci,drive=d{index},serial={serial}"]
        command += list(extra)
        started = time.monotonic()
        try:
            process = subprocess.run(command, capture_output=True, text=True, timeout=timeout, stdin=subprocess.DEVNULL)
        except subprocess.TimeoutExpired as expired:
            console = (expired.stdout or b"").decode(errors="replace") if isinstance(expired.stdout, bytes) else (expired.stdout or "")
            raise VmError(f"the guest did not finish within {timeout} s; console tail:\n{console[-3000:]}")
        seconds = time.monotonic() - started
    console = process.stdout + process.stderr
    match = re.search(re.escape(END_MARKER) + r"(\d+)", console)
    if not match:
        raise VmError(f"the guest ended without running the script (qemu exit {process.returncode}); console tail:\n{console[-3000:]}")
    return Result(console, int(match[1]), seconds)
