"""The network with no tools: wisp takes a DHCP lease from Debian's dnsmasq across a veth
pair and bootstraps from the fake AWS metadata service on the other side.

Two namespaces: the server's (dnsmasq on its end of the veth, the fake IMDS on its lo at
169.254.169.254, as a cloud's host), and the instance's (the test's `netns`, where wisp
runs, with the metadata address taken off its lo so that only the link reaches it)."""

import base64
import json
import os
import secrets
import shutil
import signal
import subprocess
import time

import pytest

from conftest import FakeImds, Namespace, aws_metadata

pytestmark = pytest.mark.skipif(shutil.which("dnsmasq") is None, reason="dnsmasq (Debian's dnsmasq-base) is not installed: ci/test installs it")


class Link:
    """A veth pair: `server_if` in the server's namespace, `eth0` in the instance's."""

    def __init__(self, server, instance, subnet="10.77.0", name="eth0", mac="02:00:00:77:00:02"):
        tag = secrets.token_hex(3)
        self.server, self.instance = server, instance
        self.server_if = "vs" + tag
        subprocess.run(["ip", "link", "add", self.server_if, "type", "veth", "peer", "name", "vc" + tag], check=True)
        subprocess.run(["ip", "link", "set", self.server_if, "netns", server.name], check=True)
        subprocess.run(["ip", "link", "set", "vc" + tag, "netns", instance.name], check=True)
        instance.exec(["ip", "link", "set", "vc" + tag, "name", name], check=True)
        instance.exec(["ip", "link", "set", name, "address", mac], check=True)
        server.exec(["ip", "link", "set", self.server_if, "up"], check=True)
        self.set_subnet(subnet)

    def set_subnet(self, subnet):
        self.server.exec(["ip", "addr", "flush", "dev", self.server_if], check=True)
        self.server.exec(["ip", "addr", "add", subnet + ".1/24", "dev", self.server_if], check=True)


class Dnsmasq:
    def __init__(self, namespace, interface, directory, subnet="10.77.0", options=(), authoritative=False):
        self.log = directory / ("dnsmasq-" + secrets.token_hex(3) + ".log")
        command = ["dnsmasq", "--no-daemon", "--conf-file=/dev/null", "--port=0", "--log-dhcp",
                   "--user=root", "--interface=" + interface, "--bind-interfaces",
                   "--dhcp-leasefile=" + str(directory / "leases"),
                   f"--dhcp-range={subnet}.50,{subnet}.99,255.255.255.0,1h", *options]
        if authoritative:
            command.append("--dhcp-authoritative")
        self.process = subprocess.Popen(["ip", "netns", "exec", namespace.name, *command],
                                        stdout=subprocess.DEVNULL, stderr=open(self.log, "w"))
        deadline = time.monotonic() + 5
        while "started" not in self.log.read_text():
            assert self.process.poll() is None, "dnsmasq exited: " + self.log.read_text()
            assert time.monotonic() < deadline, "dnsmasq did not start"
            time.sleep(0.02)

    def stop(self):
        if self.process.poll() is None:
            self.process.send_signal(signal.SIGTERM)
            self.process.wait(timeout=5)


@pytest.fixture
def network(netns, tmp_path):
    """The instance's namespace without the metadata address, joined to a server's."""
    netns.exec(["ip", "addr", "del", "169.254.169.254/32", "dev", "lo"], check=True)
    server = Namespace()
    link = Link(server, netns)
    started = []

    class Network:
        def __init__(self):
            self.server, self.instance, self.link = server, netns, link

        def dhcp(self, *options, subnet="10.77.0", authoritative=False):
            dnsmasq = Dnsmasq(server, link.server_if, tmp_path, subnet, options, authoritative)
            started.append(dnsmasq)
            return dnsmasq

        def imds(self, config):
            directory = tmp_path / ("imds-" + secrets.token_hex(3))
            directory.mkdir()
            return FakeImds(server, directory, config)

        def second_link(self, name, mac, subnet):
            return Link(server, netns, subnet, name, mac)

        def addresses(self, dev="eth0", family="-4"):
            out = netns.exec(["ip", "-j", family, "addr", "show", "dev", dev], capture_output=True, text=True, check=True).stdout
            return [(a["local"], a["prefixlen"]) for i in json.loads(out) for a in i["addr_info"] if a.get("scope") != "link"]

        def routes(self, dev="eth0", family="-4"):
            out = netns.exec(["ip", "-j", family, "route", "show", "dev", dev], capture_output=True, text=True, check=True).stdout
            return sorted((r["dst"], r.get("gateway"), r.get("protocol")) for r in json.loads(out))

        def mtu(self, dev="eth0"):
            out = netns.exec(["ip", "-j", "link", "show", "dev", dev], capture_output=True, text=True, check=True).stdout
            return json.loads(out)[0]["mtu"]

        def names(self):
            out = netns.exec(["ip", "-j", "link", "show"], capture_output=True, text=True, check=True).stdout
            return sorted(link["ifname"] for link in json.loads(out))

    yield Network()
    for dnsmasq in started:
        dnsmasq.stop()
    server.close()


DNS = ("--dhcp-option=option:router,10.77.0.1", "--dhcp-option=option:dns-server,10.77.0.1,10.77.0.2",
       "--dhcp-option=option:domain-name,wisp.test", "--dhcp-option=option:mtu,1400")


def test_lease_then_bootstrap_across_the_link(run, network, root):
    network.dhcp(*DNS)
    server = network.imds(aws_metadata())
    result = run("bootstrap", root=root)
    assert result.rc == 0, result
    [(address, prefix)] = network.addresses()
    assert address.startswith("10.77.0.") and prefix == 24
    assert network.routes() == [("10.77.0.0/24", None, "kernel"), ("default", "10.77.0.1", "dhcp")]
    assert network.mtu() == 1400
    assert (root / "etc/resolv.conf").read_text() == (
        "# Written by wisp from the DHCP lease on eth0.\nsearch wisp.test\nnameserver 10.77.0.1\nnameserver 10.77.0.2\n")
    assert (root / "var/lib/cloud/.dhcp-address").read_text() == address + "\n"
    assert f"boot/set_ephemeral_network: ok: eth0: {address}/24 from 10.77.0.1 for 3600 s, 1 routes, 2 DNS servers" in result.stderr
    # The metadata came across the link, from the lease's address.
    assert any(r["path"] == "/latest/meta-data/instance-id" for r in server.requests())
    assert result.hostname == "ip-10-0-1-23"

    # A rerun (and the next boot of this instance) finds the address and changes nothing.
    before = (network.addresses(), network.routes(), (root / "etc/resolv.conf").read_text())
    result = run("bootstrap", root=root)
    assert result.rc == 0, result
    assert f"boot/set_ephemeral_network: ok: {address} on eth0: already configured, left alone" in result.stderr
    assert (network.addresses(), network.routes(), (root / "etc/resolv.conf").read_text()) == before


def test_classless_routes_replace_the_router(run, network, root):
    network.dhcp("--dhcp-option=option:router,10.77.0.1",
                 "--dhcp-option=121,169.254.169.254/32,10.77.0.1,10.99.0.0/16,10.77.0.3")
    network.imds(aws_metadata())
    result = run("bootstrap", root=root)
    assert result.rc == 0, result
    # No default route: option 121 wins over option 3 (RFC 3442).
    assert network.routes() == [("10.77.0.0/24", None, "kernel"), ("10.99.0.0/16", "10.77.0.3", "dhcp"),
                                ("169.254.169.254", "10.77.0.1", "dhcp")]
    # A lease without DNS servers leaves resolv.conf alone.
    assert not (root / "etc/resolv.conf").exists()


def test_no_server_is_a_clear_error_within_the_deadline(run, network, root):
    (root / "etc/wisp.conf").write_text((root / "etc/wisp.conf").read_text() + "WISP_DHCP_MS=3000\n")
    result = run("boot", root=root)
    assert result.rc == 1, result
    assert "boot/set_ephemeral_network: failed: eth0: no DHCP lease within 3000 ms: no server answered" in result.stderr
    assert 3 <= result.seconds < 8, result.seconds
    assert network.addresses() == []


def test_nak_of_the_last_address_starts_over(run, network, root):
    first = network.dhcp(*DNS)
    network.imds(aws_metadata())
    assert run("boot", root=root).rc == 0
    old = (root / "var/lib/cloud/.dhcp-address").read_text().strip()
    # The instance boots again in another subnet: its address is gone, and the new
    # network's authoritative server refuses the old one.
    network.instance.exec(["ip", "addr", "flush", "dev", "eth0"], check=True)
    first.stop()
    network.link.set_subnet("10.88.0")
    network.dhcp("--dhcp-option=option:router,10.88.0.1", subnet="10.88.0", authoritative=True)
    result = run("boot", root=root)
    assert result.rc == 0, result
    assert "eth0: DHCPNAK from 10.88.0.1: discovering again" in result.stderr
    [(address, _)] = network.addresses()
    assert address.startswith("10.88.0.") and address != old
    assert ("default", "10.88.0.1", "dhcp") in network.routes()


def test_an_address_already_there_is_left_alone(run, network, root):
    network.instance.exec(["ip", "link", "set", "eth0", "up"], check=True)
    network.instance.exec(["ip", "addr", "add", "10.77.0.9/24", "dev", "eth0"], check=True)
    network.instance.exec(["ip", "route", "add", "default", "via", "10.77.0.1"], check=True)
    network.imds(aws_metadata())
    result = run("bootstrap", root=root)
    assert result.rc == 0, result
    assert "boot/set_ephemeral_network: ok: 10.77.0.9 on eth0: already configured, left alone" in result.stderr
    assert network.addresses() == [("10.77.0.9", 24)]
    assert network.routes() == [("10.77.0.0/24", None, "kernel"), ("default", "10.77.0.1", None)]


def test_a_local_seed_needs_no_network(run, network, root):
    (root / "etc/wisp.conf").write_text((root / "etc/wisp.conf").read_text().replace("CLOUD=auto", "CLOUD=nocloud"))
    result = run("boot", root=root)
    assert result.rc == 0, result
    assert "boot/set_ephemeral_network: ok: nocloud: the seed is local: no network needed" in result.stderr
    assert network.addresses() == []


def nocloud_seed(root, network_config):
    """A NoCloud seed directory with a network-config; DMI says QEMU (no metadata service)."""
    (root / "sys/class/dmi/id/sys_vendor").write_text("QEMU\n")
    seed = root / "var/lib/cloud/seed/nocloud"
    seed.mkdir(parents=True)
    (seed / "meta-data").write_text("instance-id: iid-net01\nlocal-hostname: netted\n")
    (seed / "user-data").write_text("#cloud-config\n{}\n")
    (seed / "network-config").write_text(network_config)


V1_STATIC = """version: 1
config:
  - type: physical
    name: eth0
    mac_address: "02:00:00:77:00:02"
    mtu: 1400
    subnets:
      - type: static
        address: 10.77.0.5
        netmask: 255.255.255.0
        gateway: 10.77.0.1
        routes:
          - network: 10.99.0.0
            netmask: 255.255.0.0
            gateway: 10.77.0.3
      - type: static6
        address: 2001:db8::5/64
  - type: bond
    name: bond0
  - type: nameserver
    address: [10.77.0.1]
    search: [wisp.test]
"""


def test_static_v1_applied_and_kept(run, network, root):
    nocloud_seed(root, V1_STATIC)
    result = run("boot", root=root)
    assert result.rc == 0, result
    assert network.addresses() == [("10.77.0.5", 24)]
    assert network.addresses(family="-6") == [("2001:db8::5", 64)]
    assert network.routes() == [("10.77.0.0/24", None, "kernel"), ("10.99.0.0/16", "10.77.0.3", None),
                                ("default", "10.77.0.1", None)]
    assert network.mtu() == 1400
    assert "network-config: bond bond0: not supported by wisp: skipped" in result.stderr
    assert "network-config: 1 of 1 interfaces applied" in result.stderr
    interfaces = (root / "etc/network/interfaces").read_text()
    assert "auto eth0\niface eth0 inet static\n    address 10.77.0.5/24\n    gateway 10.77.0.1\n    mtu 1400\n" in interfaces
    assert "iface eth0 inet6 static\n    address 2001:db8:0:0:0:0:0:5/64\n" in interfaces
    assert (root / "etc/resolv.conf").read_text() == (
        "# Written by wisp from the network configuration.\nsearch wisp.test\nnameserver 10.77.0.1\n")
    # ("boot", the protocol of static routes, is what `ip -j` leaves out.) The static
    # address is enough: no DHCP.
    assert "DHCP" not in result.stderr
    # A rerun changes nothing, in the kernel or in the files.
    before = (network.addresses(), network.addresses(family="-6"), network.routes(), interfaces,
              os.stat(root / "etc/network/interfaces").st_mtime_ns)
    result = run("boot", root=root)
    assert result.rc == 0, result
    assert (network.addresses(), network.addresses(family="-6"), network.routes(),
            (root / "etc/network/interfaces").read_text(), os.stat(root / "etc/network/interfaces").st_mtime_ns) == before


def test_v2_matched_by_mac_and_renamed_with_two_interfaces(run, network, root):
    network.second_link("eth1", "02:00:00:78:00:02", "10.78.0")
    nocloud_seed(root, """network:
  version: 2
  ethernets:
    uplink:
      match: {macaddress: "02:00:00:77:00:02"}
      set-name: lan0
      addresses: [10.77.0.6/24]
      gateway4: 10.77.0.1
      nameservers: {addresses: [10.77.0.2]}
    second:
      match: {name: eth1}
      addresses: [10.78.0.6/24]
      routes: [{to: 10.200.0.0/16, via: 10.78.0.1}]
""")
    result = run("bootstrap", root=root)
    assert result.rc == 0, result
    assert network.names() == ["lan0", "lo", "second"]
    assert network.addresses("lan0") == [("10.77.0.6", 24)]
    assert network.addresses("second") == [("10.78.0.6", 24)]
    assert ("default", "10.77.0.1", None) in network.routes("lan0")
    assert ("10.200.0.0/16", "10.78.0.1", None) in network.routes("second")
    interfaces = (root / "etc/network/interfaces").read_text()
    assert "auto lan0\niface lan0 inet static" in interfaces and "auto second\niface second inet static" in interfaces
    assert "nameserver 10.77.0.2" in (root / "etc/resolv.conf").read_text()
    # The rename is found by MAC on the next run: nothing changes.
    result = run("bootstrap", root=root)
    assert result.rc == 0, result
    assert network.names() == ["lan0", "lo", "second"]


def test_network_config_dhcp_on_a_local_seed(run, network, root):
    network.dhcp(*DNS)
    nocloud_seed(root, "version: 2\nethernets:\n  eth0:\n    dhcp4: true\n")
    result = run("boot", root=root)
    assert result.rc == 0, result
    [(address, _)] = network.addresses()
    assert address.startswith("10.77.0.")
    assert "auto eth0\niface eth0 inet dhcp\n" in (root / "etc/network/interfaces").read_text()


def test_slaac_is_the_kernels_and_dhcp6_is_said_not_applied(run, network, root):
    """dnsmasq advertises 2001:db8:77::/64 (router advertisements only): once wisp has
    brought eth0 up, the kernel configures its own address from them. wisp has no DHCPv6
    client: it says so once, naming the interface, and writes the stanza for the image's."""
    network.server.exec(["ip", "addr", "add", "2001:db8:77::1/64", "dev", network.link.server_if, "nodad"], check=True)
    network.dhcp("--enable-ra", "--dhcp-range=::,constructor:" + network.link.server_if + ",ra-only,64,1h")
    nocloud_seed(root, """version: 1
config:
  - type: physical
    name: eth0
    subnets:
      - type: static
        address: 10.77.0.8/24
      - type: ipv6_slaac
      - type: dhcp6
""")
    result = run("boot", root=root)
    assert result.rc == 0, result
    warning = "network-config: eth0: dhcp6 not applied: wisp has no DHCPv6 client (the kernel's SLAAC still runs)"
    assert result.stderr.count(warning) == 1, result.stderr
    interfaces = (root / "etc/network/interfaces").read_text()
    assert "iface eth0 inet6 dhcp\niface eth0 inet6 auto\n    dhcp 0\n" in interfaces, interfaces
    assert network.addresses() == [("10.77.0.8", 24)]
    deadline = time.monotonic() + 15
    while not any(a.startswith("2001:db8:77:") for a, _ in network.addresses(family="-6")):
        assert time.monotonic() < deadline, network.addresses(family="-6")
        time.sleep(0.2)
    [(slaac, prefix)] = network.addresses(family="-6")
    assert prefix == 64


def test_config_disabled_leaves_the_network_alone(run, network, root):
    network.dhcp(*DNS)
    nocloud_seed(root, "network: {config: disabled}\n")
    (root / "etc/network").mkdir(parents=True)
    (root / "etc/network/interfaces").write_text("# the image's own\n")
    result = run("boot", root=root)
    assert result.rc == 0, result
    assert "network-config: config disabled: the network is left alone" in result.stderr
    assert network.addresses() == []
    assert (root / "etc/network/interfaces").read_text() == "# the image's own\n"


def test_kernel_command_line_network_config_wins(run, network, root):
    # An AWS instance told its static address on the kernel command line: applied, no
    # DHCP, and the metadata comes across the link through the configured gateway.
    network.imds(aws_metadata())
    document = "version: 2\nethernets:\n  eth0:\n    addresses: [10.77.0.7/24]\n    gateway4: 10.77.0.1\n"
    encoded = base64.b64encode(document.encode()).decode()
    (root / "proc/cmdline").write_text(f"root=/dev/vda1 network-config={encoded} console=ttyS0\n")
    result = run("bootstrap", root=root)
    assert result.rc == 0, result
    assert network.addresses() == [("10.77.0.7", 24)]
    assert "DHCP" not in result.stderr
    assert result.hostname == "ip-10-0-1-23"
    (root / "proc/cmdline").write_text("root=/dev/vda1 network-config=!!!\n")
    result = run("boot", root=root)
    assert result.rc == 1 and "network-config= on the kernel command line: " in result.stderr, result


def test_configdrive_network_data_json(run, network, root, tmp_path):
    (root / "sys/class/dmi/id/sys_vendor").write_text("QEMU\n")
    latest = tmp_path / "cd/openstack/latest"
    latest.mkdir(parents=True)
    (latest / "meta_data.json").write_text('{"uuid": "83679162-1378-4288-a2d4-70e13ec132aa", "hostname": "cd-host"}')
    (latest / "user_data").write_text("#cloud-config\n{}\n")
    (latest / "network_data.json").write_text(json.dumps({
        "links": [{"id": "tap1a2b", "type": "ovs", "ethernet_mac_address": "02:00:00:77:00:02", "mtu": 1450},
                  {"id": "bond0", "type": "bond", "ethernet_mac_address": "02:00:00:00:00:09"}],
        "networks": [{"id": "network0", "type": "ipv4", "link": "tap1a2b", "ip_address": "10.77.0.8",
                      "netmask": "255.255.255.0",
                      "routes": [{"network": "0.0.0.0", "netmask": "0.0.0.0", "gateway": "10.77.0.1"}]}],
        "services": [{"type": "dns", "address": "10.77.0.1"}]}))
    image = tmp_path / "config.iso"
    subprocess.run(["genisoimage", "-quiet", "-o", image, "-V", "config-2", "-J", "-R", tmp_path / "cd"], check=True)
    (root / "sys/class/block/sr1").mkdir(parents=True)
    os.symlink(image, root / "dev/sr1")
    result = run("boot", root=root)
    assert result.rc == 0, result
    # Found by MAC, keeping the machine's name for it.
    assert network.names() == ["eth0", "lo"]
    assert network.addresses() == [("10.77.0.8", 24)]
    assert ("default", "10.77.0.1", None) in network.routes()
    assert network.mtu() == 1450
    assert "network-config: bond bond0: not supported by wisp: skipped" in result.stderr
    assert "auto eth0\niface eth0 inet static\n    address 10.77.0.8/24\n    gateway 10.77.0.1\n    mtu 1450\n" in (
        root / "etc/network/interfaces").read_text()
    assert "nameserver 10.77.0.1\n" in (root / "etc/resolv.conf").read_text()


def test_net_sync_adds_and_removes_secondary_addresses(run, network, root):
    instance = network.instance
    instance.exec(["ip", "link", "set", "eth0", "up"], check=True)
    for address in ("10.77.0.5/24", "10.77.0.30/24"):
        instance.exec(["ip", "addr", "add", address, "dev", "eth0"], check=True)
    instance.exec(["ip", "route", "add", "default", "via", "10.77.0.1"], check=True)
    server = network.imds(aws_metadata(macs={"02:00:00:77:00:02": {
        "local-ipv4s": ["10.77.0.5", "10.77.0.20", "10.77.0.21"], "subnet-ipv4-cidr-block": "10.77.0.0/24",
        "ipv6s": ["2001:db8::20"], "subnet-ipv6-cidr-blocks": "2001:db8::/64"}}))
    result = run("net-sync", root=root)
    assert result.rc == 0, result
    assert "net-sync: eth0: 3 added, 1 removed" in result.stderr
    assert sorted(network.addresses()) == [("10.77.0.20", 24), ("10.77.0.21", 24), ("10.77.0.5", 24)]
    assert network.addresses(family="-6") == [("2001:db8::20", 64)]
    # Idempotent: a second run changes nothing.
    result = run("net-sync", root=root)
    assert result.rc == 0 and "net-sync: eth0: 0 added, 0 removed" in result.stderr, result
    # An address the metadata no longer lists goes.
    server.update(macs={"02:00:00:77:00:02": {"local-ipv4s": ["10.77.0.5"], "subnet-ipv4-cidr-block": "10.77.0.0/24"}})
    result = run("net-sync", root=root)
    assert result.rc == 0 and "net-sync: eth0: 0 added, 2 removed" in result.stderr, result
    assert network.addresses() == [("10.77.0.5", 24)]
    # Without ipv6s in the metadata, IPv6 is left as it is.
    assert network.addresses(family="-6") == [("2001:db8::20", 64)]


def test_net_sync_is_for_aws(run, root):
    (root / "sys/class/dmi/id/sys_vendor").write_text("QEMU\n")
    (root / "etc/wisp.conf").write_text((root / "etc/wisp.conf").read_text().replace("CLOUD=auto", "CLOUD=gcp"))
    result = run("net-sync", root=root)
    assert result.rc == 1 and "net-sync: gcp: only AWS's metadata lists an interface's addresses" in result.stderr, result


def test_the_images_own_cloud_cfg_wins_over_the_seed(run, network, root):
    # An image moved from cloud-init keeps its cloud.cfg.d: `network: {config: disabled}`
    # there leaves the network alone whatever the seed says; a later file's network wins.
    nocloud_seed(root, V1_STATIC)
    cfg = root / "etc/cloud/cloud.cfg.d"
    cfg.mkdir(parents=True)
    (root / "etc/cloud/cloud.cfg").write_text("datasource_list: [NoCloud, None]\nnetwork:\n  version: 2\n"
                                             "  ethernets: {eth0: {addresses: [10.77.0.40/24]}}\n")
    (cfg / "50-other.cfg").write_text("manage_etc_hosts: true\n")
    (cfg / "99-disable-network-config.cfg").write_text("network: {config: disabled}\n")
    result = run("boot", root=root)
    assert result.rc == 0, result
    assert "network-config: config disabled: the network is left alone" in result.stderr
    assert network.addresses() == []
    (cfg / "99-disable-network-config.cfg").unlink()
    result = run("boot", root=root)
    assert result.rc == 0, result
    assert network.addresses() == [("10.77.0.40", 24)]
