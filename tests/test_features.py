"""A build with fewer features (the AWS-only one: `--no-default-features --features aws`)
bootstraps an AWS instance, and refuses by name, never in silence, whatever needs a
feature it was built without. The AWS tests also run against this build (ci/test)."""

import os
import subprocess

import pytest

from conftest import REPO, TEST_CONFIG, aws_metadata, elf_is_static

SCRIPT_FOR_TESTS = "#!/bin/sh\necho ran\n"

AWS_ONLY = REPO / "target/aws-only/x86_64-unknown-linux-gnu/release/wisp"


@pytest.fixture(scope="module")
def wisp():
    """The AWS-only build (ci/size builds it there too; cargo only checks it then)."""
    if os.environ.get("WISP_BINARY") is None or not AWS_ONLY.samefile(os.environ["WISP_BINARY"]):
        subprocess.run(["cargo", "build", "--release", "--quiet", "--no-default-features", "--features", "aws",
                        "--target-dir", "target/aws-only"], cwd=REPO, check=True)
    assert elf_is_static(AWS_ONLY), "the AWS-only build must be a static, non-PIE ELF too"
    return AWS_ONLY


def test_version_names_the_features(run):
    result = run("--version")
    assert result.rc == 0 and result.stdout == "wisp 0.1.0 (aws grow)\n", result
    assert run("--help").rc == 0


def test_a_cloud_not_built_is_refused(run, imds, root):
    imds()
    for cloud in ("gcp", "azure", "oci", "nocloud", "configdrive", "openstack"):
        (root / "etc/wisp.conf").write_text(TEST_CONFIG.replace("CLOUD=auto", f"CLOUD={cloud}"))
        feature = "configdrive" if cloud == "openstack" else cloud
        result = run("bootstrap", root=root)
        assert result.rc == 2, (cloud, result)
        assert f"CLOUD={cloud}: wisp was built without {feature}" in result.stderr, result
        result = run("imds", "@instance-id", root=root)
        assert result.rc == 2 and f"wisp was built without {feature}" in result.stderr, result
    result = run("--cloud", "gcp", "imds", "@instance-id", root=root)
    assert result.rc == 2 and "CLOUD=gcp: wisp was built without gcp" in result.stderr, result
    assert not (root / "var/lib/cloud/.bootstrap-complete").exists()


def test_an_action_not_built_is_refused_by_name(run, imds, root):
    imds()
    (root / "etc/wisp.conf").write_text(TEST_CONFIG + "INIT_ACTIONS_MAIN=\"create_default_user userdata_runcmd\"\n")
    result = run("main", root=root)
    assert result.rc == 2, result
    assert "INIT_ACTIONS_MAIN: userdata_runcmd: wisp was built without cloud-config" in result.stderr, result
    (root / "etc/wisp.conf").write_text(TEST_CONFIG + "INIT_ACTIONS_EARLY=\"save_userdata userdata_boothooks\"\n")
    result = run("early", root=root)
    assert result.rc == 2 and "userdata_boothooks: wisp was built without userdata" in result.stderr, result
    # Skipping what is not there is fine, as is a phase list of what is.
    (root / "etc/wisp.conf").write_text(TEST_CONFIG + "SKIP_INIT_ACTIONS=\"userdata_runcmd userdata_boothooks\"\n")
    result = run("bootstrap", root=root)
    assert result.rc == 0, result
    assert "userdata_" not in result.stderr


@pytest.mark.parametrize("user_data, refusal", [
    ("#cloud-config\nruncmd: [touch /ran]\n", "user-data part 1 is cloud-config: wisp was built without cloud-config"),
    ("Content-Type: multipart/mixed; boundary=b\nMIME-Version: 1.0\n\n--b\nContent-Type: text/x-shellscript\n\n"
     + SCRIPT_FOR_TESTS + "\n--b--\n", "MIME multipart user-data: wisp was built without userdata"),
    ("#include\nhttp://169.254.169.254/more\n", "#include user-data: wisp was built without userdata"),
    ("#cloud-boothook\n#!/bin/sh\ntouch /ran\n", "#cloud-boothook user-data: wisp was built without userdata"),
])
def test_user_data_needing_a_feature_is_refused(run, imds, root, user_data, refusal):
    """The instance still gets its user and keys; the bootstrap stays incomplete."""
    imds(aws_metadata(user_data=user_data))
    result = run("bootstrap", root=root)
    assert result.rc == 1, result
    assert f"final/run_userdata: failed: {refusal}" in result.stderr, result
    assert (root / "home/alpine/.ssh/authorized_keys").exists()
    assert not (root / "var/lib/cloud/.bootstrap-complete").exists()
    assert not (root / "ran").exists()


def test_gzip_user_data_is_refused(run, imds, root):
    import base64
    import gzip
    imds(aws_metadata(user_data_b64=base64.b64encode(gzip.compress(SCRIPT_FOR_TESTS.encode())).decode()))
    result = run("bootstrap", root=root)
    assert result.rc == 1 and "final/run_userdata: failed: gzip'd user-data: wisp was built without userdata" in result.stderr, result


def test_commands_not_built_are_refused(run, root):
    for args, feature in ((["userdata", "show"], "cloud-config"), (["status", "--wait"], "cloud-init-status")):
        result = run(*args, root=root)
        assert result.rc == 2 and f"wisp was built without {feature}" in result.stderr, (args, result)
    assert not (root / "run/cloud-init").exists()
