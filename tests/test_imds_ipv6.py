"""AWS's IPv6 metadata address: an instance on an IPv6-only subnet (no route to
169.254.169.254) bootstraps from the service at [fd00:ec2::254]; with an IPv4 route the
IPv4 address is kept. Any AWS build does this (ci/test runs it against the AWS-only one)."""

from conftest import ED25519, ECDSA, aws_metadata

IPV6_IMDS = "fd00:ec2::254"


def ipv6_only(netns):
    """The namespace's IPv4 addresses but loopback's own removed: no IPv4 route leads to
    the metadata address; AWS's IPv6 address is on lo instead."""
    for address in ("169.254.169.254/32", "168.63.129.16/32", "169.254.42.42/32"):
        netns.exec(["ip", "addr", "del", address, "dev", "lo"], check=True)
    netns.exec(["ip", "-6", "addr", "add", IPV6_IMDS + "/128", "dev", "lo"], check=True)


def test_an_ipv6_only_instance_bootstraps_from_the_ipv6_address(run, imds, netns, root):
    ipv6_only(netns)
    routes = netns.exec(["ip", "route", "get", "169.254.169.254"], capture_output=True, text=True)
    assert routes.returncode != 0 and "unreachable" in routes.stderr, routes
    server = imds(aws_metadata(), bind=IPV6_IMDS)
    result = run("bootstrap", root=root)
    assert result.rc == 0, result
    assert result.hostname == "ip-10-0-1-23"
    keys = root / "home/alpine/.ssh/authorized_keys"
    assert keys.read_text() == ED25519 + "\n" + ECDSA + "\n"
    assert (root / "var/lib/cloud/.bootstrap-complete").exists()
    requests = server.requests()
    assert requests[0]["method"] == "PUT" and requests[0]["path"] == "/latest/api/token"
    assert {r["headers"].get("host") for r in requests} == {"[" + IPV6_IMDS + "]"}
    assert all(r["headers"].get("x-aws-ec2-metadata-token") for r in requests[1:])


def test_with_an_ipv4_route_the_ipv4_address_is_kept(run, imds, netns, root):
    netns.exec(["ip", "-6", "addr", "add", IPV6_IMDS + "/128", "dev", "lo"], check=True)
    ipv4 = imds(aws_metadata())
    ipv6 = imds(aws_metadata(), bind=IPV6_IMDS)
    result = run("bootstrap", root=root)
    assert result.rc == 0, result
    assert ipv4.requests() and ipv6.requests() == []
    assert {r["headers"].get("host") for r in ipv4.requests()} == {"169.254.169.254"}


def test_with_no_route_anywhere_the_error_is_network_unreachable(run, netns, root):
    for address in ("169.254.169.254/32", "168.63.129.16/32", "169.254.42.42/32"):
        netns.exec(["ip", "addr", "del", address, "dev", "lo"], check=True)
    result = run("bootstrap", root=root)
    assert result.rc != 0
    assert "metadata token: cannot connect: network unreachable" in result.stderr, result
