"""cloud-config `ntp` and `apk_repos` (and tiny-cloud's `apk: repositories:`), with
cloud-init's own templates, rendered by the installed cloud-init, as the oracle."""

import json
import os
import stat
import subprocess

from conftest import aws_metadata
from test_clouds import set_dmi

ORACLE = """
import json, sys
from cloudinit import templater
from cloudinit.config.cc_apk_configure import REPOSITORIES_TEMPLATE
kind, params = sys.argv[1], json.loads(sys.argv[2])
template = REPOSITORIES_TEMPLATE if kind == "apk" else open(f"/etc/cloud/templates/{kind}.conf.alpine.tmpl").read()
sys.stdout.write(templater.render_string(template, params))
"""


def cloud_init_renders(kind, **params):
    # cloud-init is a Debian package: its Python is the system's.
    return subprocess.run(["/usr/bin/python3", "-c", ORACLE, kind, json.dumps(params)],
                          capture_output=True, text=True, check=True).stdout


def directives(text):
    return [line for line in text.splitlines() if line.strip() and not line.startswith("#")]


def bootstrap(run, imds, root, cloud_config, **overrides):
    server = imds(aws_metadata(user_data="#cloud-config\n" + cloud_config, **overrides))
    result = run("bootstrap", root=root)
    return server, result


def with_chrony(root):
    for path in ("usr/sbin/chronyd", "etc/init.d/chronyd"):
        (root / path).parent.mkdir(parents=True, exist_ok=True)
        (root / path).write_text("#!/bin/sh\n")


def test_ntp_chrony_as_cloud_init_configures_it(run, imds, root):
    with_chrony(root)
    server, result = bootstrap(run, imds, root, "ntp:\n  servers: [ntp1.example.com, 10.0.0.1]\n  pools: [pool.example.org]\n")
    assert result.rc == 0, result
    conf = root / "etc/chrony/chrony.conf"
    expected = cloud_init_renders("chrony", servers=["ntp1.example.com", "10.0.0.1"], pools=["pool.example.org"])
    assert directives(conf.read_text()) == directives(expected)
    assert stat.S_IMODE(conf.stat().st_mode) == 0o644
    assert os.readlink(root / "etc/runlevels/default/chronyd") == "/etc/init.d/chronyd"
    # A rerun (new instance) leaves the file as it is.
    before = conf.stat().st_mtime_ns
    server.update(instance_id="i-0fedcba9876543210")
    result = run("bootstrap", root=root)
    assert result.rc == 0 and conf.stat().st_mtime_ns == before, result


def test_ntp_on_aws_defaults_to_amazon_time_sync(run, imds, root):
    with_chrony(root)
    _, result = bootstrap(run, imds, root, "ntp: {enabled: true}\n")
    assert result.rc == 0, result
    assert "server 169.254.169.123 iburst" in directives((root / "etc/chrony/chrony.conf").read_text())
    assert not any(line.startswith("pool ") for line in directives((root / "etc/chrony/chrony.conf").read_text()))


def test_ntp_busybox_elsewhere_gets_cloud_init_defaults(run, imds, root):
    set_dmi(root, "gcp")
    imds(aws_metadata(mode="gcp", user_data="#alpine-config\nntp:\n  enabled: yes\n  ntp_client: busybox\n"))
    result = run("bootstrap", root=root)
    assert result.rc == 0, result
    expected = cloud_init_renders("ntp", servers=[f"{i}.pool.ntp.org" for i in range(4)], pools=[])
    assert directives((root / "etc/ntp.conf").read_text()) == directives(expected)
    assert "ntpd not installed" in result.stderr


def test_ntp_disabled_and_bad(run, imds, root):
    server, result = bootstrap(run, imds, root, "ntp: {enabled: false, servers: [a]}\n")
    assert result.rc == 0 and "userdata_ntp: ok: ntp disabled" in result.stderr, result
    assert not (root / "etc/ntp.conf").exists()
    server.update(instance_id="i-2", user_data="#cloud-config\nntp:\n  servers: ['a b']\n")
    result = run("bootstrap", root=root)
    assert result.rc == 1 and "cloud-config line 3 column 13: ntp: a server or pool is a host name or address" in result.stderr, result.stderr


def test_apk_repos_as_cloud_init_writes_them(run, imds, root):
    (root / "etc/apk").mkdir(parents=True)
    (root / "etc/apk/repositories").write_text("https://dl-cdn.alpinelinux.org/alpine/v3.19/main\n")
    config = ("apk_repos:\n  alpine_repo:\n    base_url: https://mirror.example/alpine\n    version: 'v3.20'\n"
              "    community_enabled: true\n    testing_enabled: true\n  local_repo_base_url: https://local.example/repo\n")
    server, result = bootstrap(run, imds, root, config)
    assert result.rc == 0, result
    expected = cloud_init_renders("apk", alpine_baseurl="https://mirror.example/alpine", alpine_version="v3.20",
                                  community_enabled=True, testing_enabled=True, local_repo="https://local.example/repo")
    repositories = root / "etc/apk/repositories"
    assert repositories.read_text() == expected
    assert stat.S_IMODE(repositories.stat().st_mode) == 0o644
    before = repositories.stat().st_mtime_ns
    server.update(instance_id="i-2")
    result = run("bootstrap", root=root)
    assert result.rc == 0 and repositories.stat().st_mtime_ns == before, result


def test_apk_repos_before_packages(run, imds, root, tmp_path):
    # The fake apk records the repositories file it sees when it installs.
    (root / "sbin").mkdir(exist_ok=True)
    # (apk runs chrooted into the root: its paths are the image's.)
    (root / "sbin/apk").write_text("#!/bin/sh\ncp /etc/apk/repositories /seen-by-apk\n")
    os.chmod(root / "sbin/apk", 0o755)
    config = "packages: [htop]\napk_repos:\n  alpine_repo:\n    version: edge\n"
    _, result = bootstrap(run, imds, root, config)
    assert result.rc == 0, result
    expected = cloud_init_renders("apk", alpine_baseurl="https://alpine.global.ssl.fastly.net/alpine", alpine_version="edge",
                                  community_enabled=None, testing_enabled=None, local_repo="")
    assert (root / "seen-by-apk").read_text() == expected


def test_apk_repositories_tiny_cloud_form(run, imds, root):
    (root / "etc/apk").mkdir(parents=True)
    (root / "etc/apk/repositories").write_text("https://cdn.example/alpine/v3.20/main\n")
    (root / "etc/os-release").write_text('NAME="Alpine Linux"\nID=alpine\nVERSION_ID=3.20.3\n')
    config = ("apk:\n  repositories:\n    - base_url: https://cdn.example/alpine\n      repos: [main, community]\n"
              "    - base_url: https://extra.example/\n      version: .\n      repos: [custom]\n")
    server = imds(aws_metadata(user_data="#alpine-config\n" + config))
    result = run("bootstrap", root=root)
    assert result.rc == 0 and "2 repositories added" in result.stderr, result
    assert (root / "etc/apk/repositories").read_text() == (
        "https://cdn.example/alpine/v3.20/main\nhttps://cdn.example/alpine/v3.20/community\nhttps://extra.example/custom\n")
    server.update(instance_id="i-2")
    result = run("bootstrap", root=root)
    assert result.rc == 0 and "0 repositories added" in result.stderr, result


def test_apk_repos_preserved_or_incomplete_leave_the_file(run, imds, root):
    server, result = bootstrap(run, imds, root, "apk_repos:\n  preserve_repositories: true\n  alpine_repo: {version: v3.20}\n")
    assert result.rc == 0 and "apk_repos preserved" in result.stderr, result
    assert not (root / "etc/apk/repositories").exists()
    server.update(instance_id="i-2", user_data="#cloud-config\napk_repos:\n  alpine_repo: {community_enabled: true}\n")
    result = run("bootstrap", root=root)
    assert result.rc == 0 and "no alpine_repo version: left alone" in result.stderr, result
    assert not (root / "etc/apk/repositories").exists()
