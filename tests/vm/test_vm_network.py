"""A first boot of an image with no DHCP client and no network tool: wisp brings eth0 up
from QEMU's own DHCP server, then bootstraps from the fake AWS on the host."""

import json
import subprocess
import sys

import vmlib
from test_vm_grow import BINARY, aws_metadata, ext4, free_port, make_disk, vm_ready  # noqa: F401

# The guest's busybox only reports what wisp did: nothing configures eth0 but wisp.
GUEST_SCRIPT = """
ip link set lo up
mount /dev/vda1 /mnt
for d in proc sys dev; do mount --bind /$d /mnt/$d; done
/wisp --root /mnt bootstrap
echo "wisp exit: $?"
echo "addresses:"; ip -4 addr show dev eth0
echo "routes:"; ip -4 route
umount /mnt/proc /mnt/sys /mnt/dev
umount /mnt
"""


def test_first_boot_takes_a_lease_from_qemu(vm_ready, tmp_path):  # noqa: F811
    image, offset = make_disk(tmp_path, "gpt", ["-b", "4096"])
    port = free_port()
    directory = tmp_path / "imds"
    directory.mkdir()
    (directory / "imds.json").write_text(json.dumps(aws_metadata()))
    server = subprocess.Popen([sys.executable, str(vmlib.REPO / "tests/fake_imds.py"), "--config", str(directory / "imds.json"),
                               "--log", str(directory / "requests.jsonl"), "--ready", str(directory / "ready"),
                               "--bind", "127.0.0.1", "--port", str(port)])
    try:
        while not (directory / "ready").exists():
            assert server.poll() is None
        netdev = (f"user,id=n0,restrict=on,net=169.254.169.0/24,host=169.254.169.2,dhcpstart=169.254.169.15,"
                  f"guestfwd=tcp:169.254.169.254:80-cmd:busybox nc 127.0.0.1 {port}")
        result = vmlib.boot([("root", image)], GUEST_SCRIPT, payload=BINARY, modules=vmlib.MODULES + ["virtio_net"],
                            extra=["-netdev", netdev, "-device", "virtio-net-pci,netdev=n0"])
    finally:
        server.terminate()
        server.wait()
    assert result.rc == 0, result
    assert "wisp exit: 0" in result.console, result
    assert "boot/set_ephemeral_network: ok: eth0: 169.254.169.15/24 from 169.254.169.2" in result.console, result
    assert "inet 169.254.169.15/24" in result.console, result
    # QEMU's DHCP server with restrict=on offers neither a router nor DNS: the metadata
    # address is on the leased subnet, reached on-link.
    assert "for 86400 s, 0 routes, 0 DNS servers" in result.console, result
    assert "169.254.169.0/24 dev eth0" in result.console, result
    requests = [json.loads(line) for line in (directory / "requests.jsonl").read_text().splitlines()]
    assert any(r["path"] == "/latest/meta-data/instance-id" for r in requests)
    # The host judges the disk afterwards: the lease's address is remembered there.
    saved = ext4(image, offset, "debugfs", "-R", "cat /var/lib/cloud/.dhcp-address")
    assert saved.stdout.strip() == "169.254.169.15", saved
