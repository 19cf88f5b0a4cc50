"""Hetzner, DigitalOcean, Scaleway, Vultr and Incus (and LXD) end to end against strict fakes at
their real addresses, and CLOUD=auto detection of each."""

import json
import stat

import pytest

from conftest import ECDSA, ED25519, leftover_temporaries, snapshot
from test_clouds import SCRIPT, assert_bootstrapped, metadata

VENDORS = {"hetzner": "Hetzner", "digitalocean": "DigitalOcean", "scaleway": "Scaleway", "vultr": "Vultr"}
INSTANCE_IDS = {"hetzner": "4711", "digitalocean": "2756294", "scaleway": "5a1b2c3d-0000-4000-8000-123456789abc",
                "incus": "8c4b1b6e-5f0d-4c1e-9a55-0a2f7c1d2e3f", "vultr": "a747bfz6-385a-4f9c-8a35-f5b2c2bb3f1f"}


def set_vendor(root, vendor):
    for name in ("sys_vendor", "product_name", "product_uuid", "chassis_asset_tag"):
        path = root / "sys/class/dmi/id" / name
        if path.exists():
            path.unlink()
    (root / "sys/class/dmi/id/sys_vendor").write_text(vendor + "\n")


def start(imds, root, cloud, socket="dev/incus/sock", **overrides):
    config = metadata(cloud, instance_id=INSTANCE_IDS[cloud], **overrides)
    if cloud == "incus":
        set_vendor(root, "QEMU")
        (root / socket).parent.mkdir(parents=True, exist_ok=True)
        return imds(config, unix=root / socket)
    set_vendor(root, VENDORS[cloud])
    return imds(config, bind="169.254.42.42" if cloud == "scaleway" else "169.254.169.254")


def mode(path):
    return stat.S_IMODE(path.stat().st_mode)


@pytest.mark.parametrize("cloud", ["hetzner", "digitalocean", "scaleway", "incus", "vultr"])
def test_detection(cloud, run, imds, root):
    start(imds, root, cloud)
    result = run("imds", "@instance-id", root=root)
    assert (result.rc, result.stdout) == (0, INSTANCE_IDS[cloud] + "\n"), result
    # `imds` only reads; a phase remembers what it detected.
    assert not (root / "var/lib/cloud/.autodetect").exists()
    assert run("boot", root=root).rc == 0
    assert (root / "var/lib/cloud/.autodetect").read_text() == f"CLOUD={cloud}\n"


def test_lxd_socket_is_detected_as_incus(run, imds, root):
    start(imds, root, "incus", socket="dev/lxd/sock", incus_legacy_user_data=True, user_data=SCRIPT)
    result = run("imds", "@instance-id", "@userdata", root=root)
    assert (result.rc, result.stdout) == (0, INSTANCE_IDS["incus"] + "\n" + SCRIPT), result
    assert run("boot", root=root).rc == 0
    assert (root / "var/lib/cloud/.autodetect").read_text() == "CLOUD=incus\n"


def test_hetzner_end_to_end(run, imds, root, features):
    server = start(imds, root, "hetzner", hostname="web-1", user_data=SCRIPT)
    result = run("bootstrap", root=root)
    assert_bootstrapped(result, root, "web-1")
    assert {(r["method"], r["path"]) for r in server.requests()} == {("GET", "/hetzner/v1/metadata"), ("GET", "/hetzner/v1/userdata")}
    network = root / "var/lib/cloud/network-config"
    config = json.loads(network.read_text())
    assert config["version"] == 1 and config["config"][0]["mac_address"] == "96:00:00:1a:2b:3c"
    assert {"type": "static", "ipv6": True, "address": "2a01:4f8:c17:1234::1/64", "gateway": "fe80::1"} in config["config"][0]["subnets"]
    assert mode(network) == 0o600 and mode(root / "var/lib/cloud/meta-data") == 0o600
    assert "instance-id: 4711" in (root / "var/lib/cloud/meta-data").read_text()
    # The boot phase ran before the metadata was read: the saved network-config is applied
    # (and written as /etc/network/interfaces) from the next boot phase on, with the
    # network feature; a rerun after that changes nothing.
    unchanging = lambda state: {k: v for k, v in state.items() if "log" not in k and "status.json" not in k}
    for run_number in (2, 3):
        before = snapshot(root)
        (root / "var/lib/cloud/.bootstrap-complete").unlink()
        result = run("bootstrap", root=root)
        assert result.rc == 0, result
        after = snapshot(root)
        if run_number == 2 and "network" in features:
            # (Its interface matches by a MAC address the test's namespace does not have.)
            assert "from the instance's network configuration" in (root / "etc/network/interfaces").read_text()
            before.pop("etc/network/interfaces"), after.pop("etc/network/interfaces")
        assert unchanging(after) == unchanging(before)


def test_hetzner_without_keys_or_user_data(run, imds, root):
    start(imds, root, "hetzner", hostname="bare", keys=[])
    result = run("imds", "@ssh-keys", "@userdata", "@hostname", root=root)
    assert (result.rc, result.stdout) == (0, "bare\n"), result


def test_hetzner_bad_yaml_is_named(run, imds, root):
    start(imds, root, "hetzner", raw_document="hostname: &anchor web\ninstance-id: 1\n")
    result = run("imds", "@hostname", root=root)
    assert result.rc == 1 and "metadata @hostname: YAML line 1 column 11" in result.stderr, result


def test_digitalocean_end_to_end(run, imds, root):
    server = start(imds, root, "digitalocean", hostname="droplet-1", user_data=SCRIPT)
    result = run("bootstrap", root=root)
    assert_bootstrapped(result, root, "droplet-1")
    assert {r["path"] for r in server.requests()} == {"/metadata/v1.json"}
    saved = json.loads((root / "var/lib/cloud/meta-data").read_text())
    assert saved["interfaces"]["public"][0]["ipv6"]["cidr"] == 64 and saved["dns"]["nameservers"]
    assert mode(root / "var/lib/cloud/meta-data") == 0o600
    assert not (root / "var/lib/cloud/network-config").exists()
    assert (root / "var/lib/cloud/.instance-id").read_text().strip() == "2756294"


def test_digitalocean_bad_document(run, imds, root):
    start(imds, root, "digitalocean", raw_document='{"droplet_id": 1, "hostname": ["x"]}')
    result = run("imds", "@hostname", root=root)
    assert result.rc == 1 and "metadata @hostname: JSON value is not a string" in result.stderr, result


def test_scaleway_end_to_end_user_data_from_a_privileged_port(run, imds, root):
    server = start(imds, root, "scaleway", hostname="scw-web", user_data=SCRIPT)
    result = run("bootstrap", root=root)
    assert_bootstrapped(result, root, "scw-web")
    requests = server.requests()
    assert {r["path"] for r in requests} == {"/conf?format=json", "/user_data/cloud-init"}
    user_data = [r for r in requests if r["path"] == "/user_data/cloud-init"]
    assert all(r["status"] == 200 and r["client_port"] < 1024 for r in user_data), user_data
    assert json.loads((root / "var/lib/cloud/meta-data").read_text())["ipv6"]["address"] == "2001:bc8:1::1"


def test_scaleway_fake_refuses_unprivileged_ports(netns, imds, root):
    # The fake is as strict as Scaleway: user-data to a port >= 1024 is refused.
    start(imds, root, "scaleway", user_data=SCRIPT)
    probe = ("import socket; s = socket.create_connection(('169.254.42.42', 80)); "
             "s.sendall(b'GET /user_data/cloud-init HTTP/1.0\\r\\n\\r\\n'); print(s.recv(100).split()[1].decode())")
    out = netns.exec(["python3", "-c", probe], capture_output=True, text=True)
    assert out.stdout.strip() == "403", out


def test_scaleway_without_user_data(run, imds, root):
    start(imds, root, "scaleway")
    result = run("imds", "@userdata", "@ssh-keys", root=root)
    assert (result.rc, result.stdout) == (0, f"{ED25519}\n{ECDSA}\n"), result


def test_incus_end_to_end(run, imds, root):
    network = "version: 2\nethernets:\n  eth0:\n    dhcp4: true\n"
    server = start(imds, root, "incus", hostname="c1", user_data=SCRIPT, network_config=network)
    result = run("bootstrap", root=root)
    # Incus gives no keys: the user comes without authorized_keys.
    assert result.rc == 0, result
    assert result.hostname == "c1"
    assert (root / "var/lib/cloud/script-ran").exists()
    assert not (root / "home/alpine/.ssh/authorized_keys").exists()
    assert (root / "var/lib/cloud/network-config").read_text() == network
    assert mode(root / "var/lib/cloud/network-config") == 0o600
    paths = {r["path"] for r in server.requests()}
    assert paths == {"/1.0/meta-data", "/1.0/config/cloud-init.user-data", "/1.0/config/cloud-init.network-config"}
    assert not leftover_temporaries(root)


def test_incus_socket_missing(run, root):
    set_vendor(root, "QEMU")
    result = run("--cloud", "incus", "imds", "@instance-id", root=root)
    assert result.rc == 1 and "cannot connect" in result.stderr, result


def test_vultr_end_to_end(run, imds, root):
    server = start(imds, root, "vultr", hostname="vultr-web", user_data=SCRIPT)
    result = run("bootstrap", root=root)
    assert_bootstrapped(result, root, "vultr-web")
    assert all(r["path"] == "/v1.json" and r["headers"].get("metadata-token") == "cloudinit" for r in server.requests())
    assert json.loads((root / "var/lib/cloud/meta-data").read_text())["interfaces"][0]["ipv6"]["prefix"] == "64"


def test_vultr_without_user_data_or_hostname(run, imds, root):
    start(imds, root, "vultr", hostname="")
    result = run("imds", "@userdata", "@hostname", root=root)
    assert (result.rc, result.stdout) == (0, "guest\n"), result
