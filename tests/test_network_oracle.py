"""wisp's /etc/network/interfaces against cloud-init's, for the same network-config.

Debian's cloud-init renders each document of tests/network_corpus with `cloud-init devel
net-convert --output-kind eni`; wisp renders it in its boot phase from a NoCloud seed (in
a namespace without those interfaces, so nothing but the file is written; for
network_data.json, which names interfaces by MAC, veth links carry the MACs (this kernel has no dummy links)). The two files
must mean the same to ifupdown: the same interfaces, methods, addresses, gateways, MTUs,
routes and nameservers. Layout, comments and the order of stanzas may differ, and so does
one cloud-init slip: v2's `nameservers` also come out as a `dns {...}` line, which is no
ifupdown option and is ignored here."""

import ipaddress
import json
import re
import shutil
import subprocess
from pathlib import Path

import pytest

from test_network import nocloud_seed

CORPUS = sorted((Path(__file__).parent / "network_corpus").glob("*.*"))

pytestmark = pytest.mark.skipif(shutil.which("cloud-init") is None, reason="cloud-init is not installed: ci/test installs it")


def address(text):
    if "/" in text:
        return str(ipaddress.ip_interface(text))
    return str(ipaddress.ip_address(text))


def meaning(eni):
    """{(interface, family): {method, address list, gateway, mtu, routes}}, and the DNS."""
    stanzas, dns, auto = {}, {"nameservers": set(), "search": set()}, set()
    current = None
    for line in eni.splitlines():
        line = line.split("#", 1)[0].strip()
        if not line:
            continue
        words = line.split()
        if words[0] == "auto":
            auto.update(words[1:])
        elif words[0] == "iface":
            name, family, method = words[1], words[2], words[3]
            current = stanzas.setdefault((name, family), {"methods": set(), "addresses": set(), "gateway": None,
                                                          "routes": set()})
            current["methods"].add(method)
        elif words[0] == "address":
            current["addresses"].add(address(words[1]))
        elif words[0] == "gateway":
            current["gateway"] = address(words[1])
        elif words[0] == "dns-nameservers":
            dns["nameservers"].update(address(w) for w in words[1:])
        elif words[0] == "dns-search":
            dns["search"].update(words[1:])
        elif words[0] == "post-up":
            match = re.match(r"post-up route add (?:-A inet6 )?(?:-net )?(\S+) gw (\S+) \|\| true", line)
            assert match, line
            target = "default" if match[1] == "default" else str(ipaddress.ip_network(match[1]))
            current["routes"].add((target, address(match[2])))
    # A `gateway` line and a `post-up route add default` line mean the same route.
    for stanza in stanzas.values():
        if stanza["gateway"] is not None:
            stanza["routes"].add(("default", stanza["gateway"]))
        del stanza["gateway"]
    return {"stanzas": stanzas, "dns": dns, "auto": auto, "mtus": mtu_values(eni)}


def mtu_values(eni):
    """An MTU belongs to the interface, whichever of its stanzas carries it."""
    values, name = {}, None
    for line in eni.splitlines():
        words = line.split()
        if words[:1] == ["iface"]:
            name = words[1]
        elif words[:1] == ["mtu"]:
            values[name] = int(words[1])
    return values


@pytest.mark.parametrize("document", CORPUS, ids=[p.name for p in CORPUS])
def test_interfaces_mean_what_cloud_inits_mean(run, netns, root, tmp_path, document):
    out = tmp_path / "cloud-init"
    command = ["cloud-init", "devel", "net-convert", "--network-data", str(document), "--distro", "alpine",
               "--output-kind", "eni", "--directory", str(out)]
    if document.suffix == ".json":
        # network_data.json names links by MAC: the machine has them, as eth0, eth1...
        links = json.loads(document.read_text())["links"]
        for i, link in enumerate(l for l in links if l.get("type") not in ("bond", "vlan", "bridge")):
            name, mac = f"eth{i}", link["ethernet_mac_address"]
            netns.exec(["ip", "link", "add", name, "address", mac, "type", "veth", "peer", "name", f"peer{i}"],
                       check=True)
            command += ["--mac", f"{name},{mac}"]
        command += ["--kind", "network_data.json"]
    else:
        command += ["--kind", "yaml"]
    subprocess.run(command, check=True, capture_output=True, timeout=120)
    theirs = (out / "etc/network/interfaces").read_text()
    nocloud_seed(root, document.read_text())
    result = run("boot", root=root)
    assert result.rc == 0, result
    ours = (root / "etc/network/interfaces").read_text()
    assert meaning(ours) == meaning(theirs), f"wisp:\n{ours}\ncloud-init:\n{theirs}"
