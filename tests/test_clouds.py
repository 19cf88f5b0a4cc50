"""Azure (with its provisioning report), GCP and OCI end to end, and detection from DMI."""

import base64
import json

import pytest

from conftest import ECDSA, ED25519, aws_metadata, leftover_temporaries

SCRIPT = "#!/bin/sh\necho ran > \"$(dirname \"$0\")/script-ran\"\n"
NOW_PLUS_YEAR = "2030-01-01T00:00:00+0000"
PAST = "2020-01-01T00:00:00+0000"

DMI = {
    "aws": {"sys_vendor": "Amazon EC2"},
    "azure": {"sys_vendor": "Microsoft Corporation", "chassis_asset_tag": "7783-7084-3265-9085-8269-3286-77"},
    "gcp": {"sys_vendor": "Google", "product_name": "Google Compute Engine"},
    "oci": {"sys_vendor": "QEMU", "chassis_asset_tag": "OracleCloud.com"},
    "openstack": {"sys_vendor": "OpenStack Foundation", "product_name": "OpenStack Nova"},
}


def set_dmi(root, cloud):
    for name in ("sys_vendor", "product_name", "product_uuid", "chassis_asset_tag"):
        path = root / "sys/class/dmi/id" / name
        if path.exists():
            path.unlink()
    for name, value in DMI.get(cloud, {"sys_vendor": "QEMU"}).items():
        (root / "sys/class/dmi/id" / name).write_text(value + "\n")


def metadata(mode, **overrides):
    config = aws_metadata(**overrides)
    config["mode"] = mode
    return config


def assert_bootstrapped(result, root, hostname, keys=(ED25519, ECDSA)):
    assert result.rc == 0, result
    assert result.hostname == hostname
    installed = (root / "home/alpine/.ssh/authorized_keys").read_text()
    assert installed == "".join(key + "\n" for key in keys)
    assert (root / "var/lib/cloud/script-ran").exists()
    assert (root / "var/lib/cloud/.bootstrap-complete").exists()
    assert not leftover_temporaries(root)


@pytest.mark.parametrize("cloud", ["aws", "azure", "gcp", "oci", "openstack"])
def test_detection(cloud, run, imds, root):
    set_dmi(root, cloud)
    imds(metadata(cloud))
    if cloud == "azure":
        imds({"mode": "wireserver"}, bind="168.63.129.16")
    result = run("imds", "@instance-id", root=root)
    assert (result.rc, result.stdout) == (0, "i-0123456789abcdef0\n"), result
    # `imds` only reads; a phase remembers what it detected.
    assert not (root / "var/lib/cloud").exists()
    assert run("boot", root=root).rc == 0
    assert (root / "var/lib/cloud/.autodetect").read_text() == f"CLOUD={cloud}\n"


def test_no_known_cloud(run, root):
    set_dmi(root, None)
    result = run("boot", root=root)
    assert result.rc == 2 and "CLOUD=auto found no known cloud" in result.stderr


def test_gcp_end_to_end(run, imds, root):
    set_dmi(root, "gcp")
    server = imds(metadata("gcp", hostname="web-1.c.project.internal", user_data=SCRIPT, user_data_encoding="base64",
                           gcp_instance_keys=f"alice:{ED25519}\nold:ssh-rsa AAAAB3NzaC1yc2EAAAADAQABAAABAQ== google-ssh {{\"userName\":\"old@x\",\"expireOn\":\"{PAST}\"}}",
                           gcp_legacy_keys=f"bob:{ECDSA}",
                           gcp_project_keys=f"proj:{ED25519.replace('alice@laptop', 'project')}"))
    result = run("bootstrap", root=root)
    assert_bootstrapped(result, root, "web-1")
    assert (root / "etc/hosts").read_text().count("127.0.1.1\tweb-1.c.project.internal web-1\n") == 1
    keys = (root / "home/alpine/.ssh/authorized_keys").read_text()
    assert "google-ssh" not in keys  # the expired key is left out
    assert all(r["headers"].get("metadata-flavor") == "Google" for r in server.requests())
    assert (root / "var/lib/cloud/user-data").read_text() == SCRIPT


def test_gcp_blocks_project_keys_and_keeps_unexpired(run, imds, root):
    set_dmi(root, "gcp")
    live = f"carol:{ECDSA.replace(' bob', '')} google-ssh {{\"userName\":\"carol@x\",\"expireOn\":\"{NOW_PLUS_YEAR}\"}}"
    imds(metadata("gcp", gcp_instance_keys=live, gcp_project_keys=f"proj:{ED25519}", gcp_block_project_keys="true"))
    result = run("imds", "@ssh-keys", root=root)
    assert result.rc == 0, result
    assert result.stdout.startswith("ecdsa-sha2-nistp256 ") and "google-ssh" in result.stdout
    assert ED25519.split()[1] not in result.stdout


def test_gcp_invalid_base64(run, imds, root):
    set_dmi(root, "gcp")
    imds(metadata("gcp", user_data="x", user_data_encoding="base64", user_data_raw_b64="IyEv!!bad"))
    result = run("bootstrap", root=root)
    assert result.rc == 1, result
    assert "early/save_userdata: failed: metadata @userdata: user-data: invalid base64 byte" in result.stderr
    assert not (root / "var/lib/cloud/user-data").exists()
    assert not (root / "var/lib/cloud/.bootstrap-complete").exists()


def test_oci_end_to_end_and_v1_fallback(run, imds, root):
    set_dmi(root, "oci")
    server = imds(metadata("oci", hostname="oci-web", user_data=SCRIPT))
    result = run("bootstrap", root=root)
    assert_bootstrapped(result, root, "oci-web")
    assert all(r["headers"].get("authorization") == "Bearer Oracle" for r in server.requests())
    server.update(oci_v2_disabled=True, instance_id="ocid1.instance.oc1.new")
    result = run("imds", "@instance-id", root=root)
    assert (result.rc, result.stdout) == (0, "ocid1.instance.oc1.new\n"), result
    assert any(r["path"] == "/opc/v1/instance/" and "authorization" not in r["headers"] for r in server.requests())


def test_oci_bad_documents(run, imds, root):
    set_dmi(root, "oci")
    server = imds(metadata("oci", user_data_raw_b64="!!!not base64!!!", user_data="x"))
    result = run("bootstrap", root=root)
    assert result.rc == 1 and "early/save_userdata: failed: metadata @userdata: user-data: invalid base64" in result.stderr, result
    assert not (root / "var/lib/cloud/user-data").exists()
    server.update(raw_document='{"id": ["not", "a string"], "hostname": "h"}', user_data_raw_b64=None)
    result = run("imds", "@instance-id", root=root)
    assert result.rc == 1 and "metadata @instance-id: JSON value is not a string" in result.stderr, result
    server.update(raw_document='{"id": "x", "hostname": ')
    result = run("imds", "@hostname", root=root)
    assert result.rc == 1 and "invalid JSON" in result.stderr, result


def test_azure_end_to_end_reports_ready_once(run, imds, root):
    set_dmi(root, "azure")
    imds(metadata("azure", hostname="azvm", user_data=SCRIPT))
    wire = imds({"mode": "wireserver"}, bind="168.63.129.16")
    result = run("bootstrap", root=root)
    assert_bootstrapped(result, root, "azvm")
    assert "azure: reported ready (provisioning/health)" in result.stderr
    reports = [r for r in wire.requests() if r["path"] == "/provisioning/health"]
    assert [json.loads(r["body"]) for r in reports] == [{"state": "Ready"}]
    # A later boot reports nothing again.
    (root / "var/lib/cloud/.bootstrap-complete").unlink()
    result = run("bootstrap", root=root)
    assert result.rc == 0 and "ready was reported for this instance already" in result.stderr
    assert len([r for r in wire.requests() if r["path"] == "/provisioning/health"]) == 1


def test_azure_goal_state_fallback(run, imds, root):
    set_dmi(root, "azure")
    imds(metadata("azure"))
    wire = imds({"mode": "wireserver", "health_status": 404}, bind="168.63.129.16")
    result = run("bootstrap", root=root)
    assert result.rc == 0, result
    assert "azure: reported ready (goal state health report)" in result.stderr
    health = [r for r in wire.requests() if r["path"] == "/machine?comp=health"]
    assert len(health) == 1
    body = health[0]["body"]
    assert "<GoalStateIncarnation>7</GoalStateIncarnation>" in body and "<ContainerId>c-42</ContainerId>" in body
    assert "<InstanceId>role_1.0</InstanceId>" in body and "<State>Ready</State>" in body
    assert health[0]["headers"]["x-ms-version"] == "2012-11-30"


def test_azure_failure_is_reported_not_ready(run, imds, root):
    set_dmi(root, "azure")
    # An /etc/shadow over wisp's limit fails create_default_user (a bad host name is only
    # a warning now).
    (root / "etc/shadow").write_text((root / "etc/shadow").read_text() + "#" * (33 * 1024) + "\n")
    imds(metadata("azure"))
    wire = imds({"mode": "wireserver"}, bind="168.63.129.16")
    result = run("bootstrap", root=root)
    assert result.rc == 1
    reports = [json.loads(r["body"]) for r in wire.requests() if r["path"] == "/provisioning/health"]
    assert len(reports) == 1 and reports[0]["state"] == "NotReady"
    assert reports[0]["details"]["subStatus"] == "ProvisioningFailed"
    assert "main/create_default_user" in reports[0]["details"]["description"]


@pytest.mark.parametrize("wire_fault", ["refuse", "hang"])
def test_azure_wireserver_down_still_completes(run, imds, root, wire_fault):
    set_dmi(root, "azure")
    imds(metadata("azure"))
    if wire_fault == "hang":
        imds({"mode": "wireserver", "faults": {"hang_paths": ["*"], "hang_s": 60}}, bind="168.63.129.16")
    result = run("bootstrap", root=root)
    assert result.rc == 0, result
    assert "azure: could not report ready" in result.stderr
    assert (root / "var/lib/cloud/.bootstrap-complete").exists()
    assert result.seconds < 3.0 + 3.0 + 2.5  # the report's deadline, twice at most (health, goal state)


def test_azure_imds_requires_the_header(run, imds, root):
    # The fake refuses requests without Metadata: true, as Azure does; wisp always sends it.
    set_dmi(root, "azure")
    server = imds(metadata("azure"))
    result = run("imds", "@hostname", root=root)
    assert result.rc == 0
    assert all(r["headers"].get("metadata") == "true" and "api-version=" in r["path"] for r in server.requests())


def test_azure_key_over_the_limit(run, imds, root):
    set_dmi(root, "azure")
    imds(metadata("azure", keys=[["big", "ssh-rsa " + "A" * 70000]]))
    imds({"mode": "wireserver"}, bind="168.63.129.16")
    result = run("bootstrap", root=root)
    assert result.rc == 1
    assert "main/set_ssh_keys: failed:" in result.stderr and "longer than" in result.stderr, result.stderr


def test_azure_bad_documents(run, imds, root):
    set_dmi(root, "azure")
    server = imds(metadata("azure", user_data="x", user_data_raw_b64="@@@"))
    imds({"mode": "wireserver"}, bind="168.63.129.16")
    result = run("bootstrap", root=root)
    assert result.rc == 1 and "early/save_userdata: failed: metadata @userdata: user-data: invalid base64" in result.stderr, result
    server.update(raw_document='{"compute": {"vmId": 42}}')
    result = run("imds", "@instance-id", root=root)
    assert result.rc == 1 and "metadata @instance-id: JSON value is not a string" in result.stderr, result
    server.update(raw_document='{"compute": {"vmId": "v", "publicKeys": {"keyData": "not an array"}}}')
    result = run("imds", "@ssh-keys", root=root)
    assert result.rc == 1 and "metadata @ssh-keys: JSON value is not an array" in result.stderr, result


def test_openstack_metadata_service(run, imds, root):
    set_dmi(root, "openstack")
    server = imds(metadata("openstack", hostname="nova-vm.novalocal", user_data=SCRIPT))
    result = run("bootstrap", root=root)
    assert_bootstrapped(result, root, "nova-vm")
    paths = {r["path"] for r in server.requests()}
    assert paths == {"/openstack/latest/meta_data.json", "/openstack/latest/user_data"}
    server.update(user_data=None)
    result = run("imds", "@userdata", root=root)
    assert (result.rc, result.stdout) == (0, "")


OVF_ENV = """<?xml version="1.0" encoding="utf-8"?>
<ns0:Environment xmlns:ns0="http://schemas.dmtf.org/ovf/environment/1" xmlns:ns1="http://schemas.microsoft.com/windowsazure">
 <ns1:ProvisioningSection><ns1:Version>1.0</ns1:Version>
  <ns1:LinuxProvisioningConfigurationSet>
   <ns1:ConfigurationSetType>LinuxProvisioningConfiguration</ns1:ConfigurationSetType>
   <ns1:HostName>azvm</ns1:HostName><ns1:UserName>azureuser</ns1:UserName>
   <ns1:SSH><ns1:PublicKeys><ns1:PublicKey><ns1:Fingerprint>F00</ns1:Fingerprint><ns1:Path>/home/azureuser/.ssh/authorized_keys</ns1:Path>
   <ns1:Value>{key}</ns1:Value></ns1:PublicKey></ns1:PublicKeys></ns1:SSH>
   <ns1:CustomData>{custom}</ns1:CustomData>
  </ns1:LinuxProvisioningConfigurationSet></ns1:ProvisioningSection></ns0:Environment>
"""


def test_azure_custom_data_from_the_provisioning_cd_wins(run, imds, root, tmp_path):
    import os
    import subprocess
    set_dmi(root, "azure")
    server = imds(metadata("azure", hostname="azvm", user_data="#!/bin/sh\necho imds user data, not wanted\n"))
    imds({"mode": "wireserver"}, bind="168.63.129.16")
    cd = tmp_path / "cd"
    cd.mkdir()
    (cd / "ovf-env.xml").write_text(OVF_ENV.format(custom=base64.b64encode(SCRIPT.encode()).decode(), key=ED25519))
    image = tmp_path / "ovf.iso"
    subprocess.run(["genisoimage", "-quiet", "-o", image, "-V", "rd_rdfe_stable", "-J", "-R", cd], check=True)
    (root / "sys/class/block/sr0").mkdir(parents=True)
    os.symlink(image, root / "dev/sr0")
    result = run("bootstrap", root=root)
    # The CD's key and host name rule; IMDS's keys are not used when the CD has some.
    assert_bootstrapped(result, root, "azvm", keys=(ED25519,))
    assert f"azure: ovf-env.xml on /dev/sr0 (label rd_rdfe_stable): {len(SCRIPT)} bytes of custom data" in result.stderr, result.stderr
    assert (root / "var/lib/cloud/user-data").read_text() == SCRIPT
    assert all("userData" not in r["path"] for r in server.requests())


@pytest.mark.parametrize("cloud", ["gcp", "oci", "aws"])
def test_key_over_the_limit(run, imds, root, cloud):
    set_dmi(root, cloud)
    big = "ssh-rsa " + "A" * 70000
    overrides = {"gcp_instance_keys": "user:" + big} if cloud == "gcp" else {"keys": [["big", big]]}
    imds(metadata(cloud, **overrides))
    result = run("bootstrap", root=root)
    assert result.rc == 1, result
    expected = {
        "gcp": "main/set_ssh_keys: failed: metadata @ssh-keys: bad HTTP response: response body larger than",
        "oci": "main/set_ssh_keys: failed: metadata @ssh-keys: JSON string longer than 65536 bytes",
        "aws": "main/set_ssh_keys: failed: metadata openssh-key: bad HTTP response: response body larger than",
    }[cloud]
    assert expected in result.stderr, result.stderr
    assert not (root / "home/alpine/.ssh/authorized_keys").exists()


def test_azure_custom_data_from_a_udf_provisioning_cd(run, imds, root, tmp_path):
    import os
    import subprocess
    set_dmi(root, "azure")
    imds(metadata("azure", hostname="imds-name"))  # the CD's HostName wins
    imds({"mode": "wireserver"}, bind="168.63.129.16")
    cd = tmp_path / "cd"
    cd.mkdir()
    (cd / "ovf-env.xml").write_text(OVF_ENV.format(custom=base64.b64encode(SCRIPT.encode()).decode(), key=ED25519))
    image = tmp_path / "ovf.udf"
    subprocess.run(["genisoimage", "-quiet", "-udf", "-o", image, cd], check=True)
    # genisoimage writes a UDF/ISO 9660 bridge: blank the ISO 9660 descriptors so only
    # UDF's structures remain, as on media that carry UDF alone.
    data = bytearray(image.read_bytes())
    assert data[16 * 2048 + 1:16 * 2048 + 6] == b"CD001" and data[17 * 2048 + 1:17 * 2048 + 6] == b"CD001"
    data[16 * 2048:18 * 2048] = bytes(2 * 2048)
    image.write_bytes(bytes(data))
    (root / "sys/class/block/sr0").mkdir(parents=True)
    os.symlink(image, root / "dev/sr0")
    result = run("bootstrap", root=root)
    assert_bootstrapped(result, root, "azvm", keys=(ED25519,))
    assert f"azure: ovf-env.xml on /dev/sr0 (label ): {len(SCRIPT)} bytes of custom data" in result.stderr, result.stderr


def test_a_run_resolves_its_cloud_once(run, imds, root, tmp_path):
    """CLOUD=auto is resolved once per run: the boot phase's network and cloud-config's ntp
    take the phases' cloud (and TINY_CLOUD_VAR, open), not `.autodetect` read again (a
    second read could differ). TINY_CLOUD_VAR is opened once: `.autodetect` is read from,
    and written into, the run's; the rules that ask the markers (bootcmd, runcmd, the
    scripts) take the run's too."""
    set_dmi(root, "aws")
    imds(metadata("aws", user_data="#cloud-config\nntp:\n  enabled: true\nbootcmd:\n  - true\nruncmd:\n  - true\n"))
    # Each run reads `.autodetect` once: the first boot finds none, detects the cloud from
    # DMI and writes it; a later boot reads it.
    for boot, found in (("first", False), ("later", True)):
        trace = tmp_path / f"strace-{boot}"
        result = run("bootstrap", root=root, wrap=["strace", "-f", "-qq", "-o", str(trace), "-e", "trace=open,openat,openat2"])
        assert result.rc == 0, result
        opened = trace.read_text().splitlines()
        autodetect = [line for line in opened if '".autodetect' in line]
        reads = [line for line in autodetect if "O_CREAT" not in line]
        assert len(reads) == 1 and ("ENOENT" not in reads[0]) == found, (boot, autodetect)
        assert (root / "var/lib/cloud/.autodetect").read_text() == "CLOUD=aws\n"
        # The run's setup ends where the phases read the saved instance-id.
        setup = opened[:next(i for i, line in enumerate(opened) if '".instance-id"' in line)]
        var_opened = [line for line in setup if '"var/lib/cloud"' in line]
        assert len(var_opened) == 1, (boot, var_opened)
        # Over the whole run, besides the setup's: a first boot makes boothooks/ and
        # scripts/ in it, the host keys look up the instance's id and the completion
        # marker which filesystem to sync, each by its path (4); a later boot none. Each
        # rule that asked the markers opened it again before (9 in all on a first boot).
        var_opened = [line for line in opened if '"var/lib/cloud"' in line]
        assert len(var_opened) <= (5 if boot == "first" else 1), (boot, var_opened)
