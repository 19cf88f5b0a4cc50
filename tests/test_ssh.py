"""SSH host keys per instance (cloud-init's ssh_deletekeys, ssh_genkeytypes, ssh_keys),
their fingerprints on the console, and ssh_pwauth; `ssh-keygen` is the oracle."""

import os
import re
import shutil
import stat
import subprocess

from conftest import aws_metadata

BAKED = "ssh-ed25519 AAAAC3NzaC1lZDI1NTE5AAAAIP6zWIGFsiIt1uW2eXmASHnCRo/IiaNJBUNBBBA8SwbT baked@image\n"


def install_program(root, program):
    """The host's `program` in the image, with the shared libraries it loads (ldd's list)
    at the same paths: wisp runs it chrooted into the root, as an image builder expects."""
    for path in [program] + re.findall(r"(/\S+) \(0x", subprocess.run(["ldd", program], capture_output=True, text=True).stdout):
        target = root / path.lstrip("/")
        target.parent.mkdir(parents=True, exist_ok=True)
        if not target.exists():
            shutil.copy(path, target)
    # ssh-keygen opens /dev/null, as an image's /dev has it.
    null = root / "dev/null"
    if not null.exists():
        null.parent.mkdir(parents=True, exist_ok=True)
        os.mknod(null, 0o666 | stat.S_IFCHR, os.makedev(1, 3))


def image_with_keygen(root):
    """The image's own ssh-keygen."""
    install_program(root, "/usr/bin/ssh-keygen")
    (root / "etc/ssh").mkdir(parents=True, exist_ok=True)
    (root / "etc/ssh/ssh_host_ed25519_key").write_text("baked private key\n")
    (root / "etc/ssh/ssh_host_ed25519_key.pub").write_text(BAKED)


def user_data(imds, text):
    return imds(aws_metadata(user_data=text))


def fingerprints(stderr):
    block = re.search(r"-----BEGIN SSH HOST KEY FINGERPRINTS-----\n(.*?)wisp: -----END SSH HOST KEY FINGERPRINTS-----", stderr, re.S)
    assert block, stderr
    return [line.removeprefix("wisp: ") for line in block.group(1).splitlines()]


def keygen_fingerprint(path):
    return subprocess.run(["ssh-keygen", "-l", "-f", str(path)], capture_output=True, text=True, check=True).stdout.strip()


def test_new_instance_gets_new_host_keys(run, imds, root):
    image_with_keygen(root)
    server = user_data(imds, "#cloud-config\n{}\n")
    result = run("bootstrap", root=root)
    assert result.rc == 0, result
    ssh = root / "etc/ssh"
    names = sorted(p.name for p in ssh.iterdir())
    assert names == ["ssh_host_ecdsa_key", "ssh_host_ecdsa_key.pub", "ssh_host_ed25519_key", "ssh_host_ed25519_key.pub",
                     "ssh_host_rsa_key", "ssh_host_rsa_key.pub"], names
    assert (ssh / "ssh_host_ed25519_key.pub").read_text() != BAKED
    for key_type in ("ecdsa", "ed25519", "rsa"):
        assert stat.S_IMODE((ssh / f"ssh_host_{key_type}_key").stat().st_mode) == 0o600
    # Each fingerprint as ssh-keygen -l prints it, in file order.
    expected = [keygen_fingerprint(ssh / f"ssh_host_{t}_key.pub") for t in ("ecdsa", "ed25519", "rsa")]
    assert fingerprints(result.stderr) == expected
    # A rerun on the same instance keeps them.
    before = {p.name: p.read_bytes() for p in ssh.iterdir()}
    (root / "var/lib/cloud/.bootstrap-complete").unlink()
    result = run("bootstrap", root=root)
    assert result.rc == 0 and "set_ssh_host_keys: ok: already made for this instance" in result.stderr, result
    assert {p.name: p.read_bytes() for p in ssh.iterdir()} == before
    # A new instance from the same disk gets new ones.
    server.update(instance_id="i-0fedcba9876543210")
    result = run("bootstrap", root=root)
    assert result.rc == 0, result
    assert all((ssh / name).read_bytes() != before[name] for name in before if name.endswith(".pub"))


def test_genkeytypes_and_keeping_the_image_keys(run, imds, root):
    image_with_keygen(root)
    user_data(imds, "#cloud-config\nssh_deletekeys: false\nssh_genkeytypes: [ed25519, rsa]\n")
    result = run("bootstrap", root=root)
    assert result.rc == 0, result
    ssh = root / "etc/ssh"
    assert (ssh / "ssh_host_ed25519_key.pub").read_text() == BAKED
    assert sorted(p.name for p in ssh.iterdir()) == ["ssh_host_ed25519_key", "ssh_host_ed25519_key.pub",
                                                     "ssh_host_rsa_key", "ssh_host_rsa_key.pub"]
    lines = fingerprints(result.stderr)
    assert lines[0] == keygen_fingerprint(ssh / "ssh_host_ed25519_key.pub") and lines[0].endswith(" baked@image (ED25519)")
    assert lines[1] == keygen_fingerprint(ssh / "ssh_host_rsa_key.pub") and lines[1].startswith("3072 SHA256:")


def test_given_host_keys_are_written_0600(run, imds, root, tmp_path):
    image_with_keygen(root)
    for key_type in ("ed25519", "ecdsa"):
        subprocess.run(["ssh-keygen", "-q", "-t", key_type, "-N", "", "-C", "given@cloud", "-f", tmp_path / key_type], check=True)
    private, public = (tmp_path / "ed25519").read_text(), (tmp_path / "ed25519.pub").read_text()
    indented = lambda text: "".join("    " + line + "\n" for line in text.splitlines())
    # As cloud-init: given keys are written, a lone private key gets its public key made,
    # a certificate is presented by sshd, and no other type is generated.
    user_data(imds, "#cloud-config\nssh_keys:\n  ed25519_private: |\n" + indented(private)
              + "  ed25519_public: " + public.strip() + "\n  ed25519_certificate: not checked\n"
              + "  ecdsa_private: |\n" + indented((tmp_path / "ecdsa").read_text()))
    result = run("bootstrap", root=root)
    assert result.rc == 0, result
    ssh = root / "etc/ssh"
    assert (ssh / "ssh_host_ed25519_key").read_text() == private
    assert stat.S_IMODE((ssh / "ssh_host_ed25519_key").stat().st_mode) == 0o600
    assert stat.S_IMODE((ssh / "ssh_host_ed25519_key.pub").stat().st_mode) == 0o644
    assert (ssh / "ssh_host_ecdsa_key.pub").read_text().split()[:2] == (tmp_path / "ecdsa.pub").read_text().split()[:2]
    assert fingerprints(result.stderr) == [keygen_fingerprint(tmp_path / "ecdsa.pub"),
                                           keygen_fingerprint(tmp_path / "ed25519.pub")]
    assert sorted(p.name for p in ssh.iterdir()) == ["ssh_host_ecdsa_key", "ssh_host_ecdsa_key.pub", "ssh_host_ed25519_key",
                                                     "ssh_host_ed25519_key-cert.pub", "ssh_host_ed25519_key.pub", "sshd_config"]
    assert (ssh / "sshd_config").read_text() == "HostCertificate /etc/ssh/ssh_host_ed25519_key-cert.pub\n"


def test_bad_ssh_keys_name_is_an_error(run, imds, root):
    image_with_keygen(root)
    user_data(imds, "#cloud-config\nssh_keys:\n  ed25519_secret: x\n")
    result = run("bootstrap", root=root)
    assert result.rc == 1
    assert "set_ssh_host_keys: failed: cloud-config line 3 column 3: ssh_keys: not <rsa|ecdsa|ed25519|dsa>_<private|public|certificate>" in result.stderr, result.stderr


def test_no_keygen_in_the_image_leaves_keys_alone(run, imds, root):
    (root / "etc/ssh").mkdir(parents=True)
    (root / "etc/ssh/ssh_host_ed25519_key.pub").write_text(BAKED)
    user_data(imds, "#cloud-config\n{}\n")
    result = run("bootstrap", root=root)
    assert result.rc == 0, result
    assert "set_ssh_host_keys: ok: no /usr/bin/ssh-keygen or dropbearkey in the image: its host keys are left as they are" in result.stderr
    assert (root / "etc/ssh/ssh_host_ed25519_key.pub").read_text() == BAKED
    assert "BEGIN SSH HOST KEY FINGERPRINTS" not in result.stderr


SSHD_CONFIG = "Port 22\n#PasswordAuthentication yes\nPasswordAuthentication yes\nMatch User backup\n\tPasswordAuthentication yes\n"


def test_ssh_pwauth_in_sshd_config(run, imds, root):
    config = root / "etc/ssh/sshd_config"
    config.parent.mkdir(parents=True)
    config.write_text(SSHD_CONFIG)
    os.chmod(config, 0o600)
    server = user_data(imds, "#cloud-config\nssh_pwauth: false\n")
    result = run("bootstrap", root=root)
    assert result.rc == 0 and "main/userdata_ssh_pwauth: ok: PasswordAuthentication no in sshd_config" in result.stderr, result
    # The global line changes; the comment and the Match block stay as they were.
    assert config.read_text() == SSHD_CONFIG.replace("\nPasswordAuthentication yes\n", "\nPasswordAuthentication no\n", 1)
    assert stat.S_IMODE(config.stat().st_mode) == 0o600
    # A rerun (a new instance, so everything runs again) changes nothing.
    before = config.stat().st_mtime_ns
    server.update(instance_id="i-0fedcba9876543210")
    result = run("bootstrap", root=root)
    assert result.rc == 0 and "PasswordAuthentication no already in sshd_config" in result.stderr, result
    assert config.stat().st_mtime_ns == before


def test_ssh_pwauth_in_a_drop_in(run, imds, root):
    main = "Include /etc/ssh/sshd_config.d/*.conf\nKbdInteractiveAuthentication no\n"
    (root / "etc/ssh").mkdir(parents=True)
    (root / "etc/ssh/sshd_config").write_text(main)
    user_data(imds, "#cloud-config\nssh_pwauth: true\n")
    result = run("bootstrap", root=root)
    assert result.rc == 0, result
    drop_in = root / "etc/ssh/sshd_config.d/50-cloud-init.conf"
    assert drop_in.read_text() == "PasswordAuthentication yes\n"
    assert stat.S_IMODE(drop_in.stat().st_mode) == 0o600
    assert (root / "etc/ssh/sshd_config").read_text() == main


def test_ssh_pwauth_unchanged_and_bad_values(run, imds, root):
    (root / "etc/ssh").mkdir(parents=True)
    (root / "etc/ssh/sshd_config").write_text(SSHD_CONFIG)
    server = user_data(imds, "#cloud-config\nssh_pwauth: unchanged\n")
    result = run("bootstrap", root=root)
    assert result.rc == 0 and "main/userdata_ssh_pwauth: ok: unchanged" in result.stderr, result
    assert (root / "etc/ssh/sshd_config").read_text() == SSHD_CONFIG
    server.update(instance_id="i-0fedcba9876543210", user_data="#cloud-config\nssh_pwauth: maybe\n")
    result = run("bootstrap", root=root)
    assert result.rc == 1
    assert "userdata_ssh_pwauth: failed: cloud-config line 2 column 13: ssh_pwauth: not true, false or unchanged" in result.stderr, result.stderr


def dropbear_public(path):
    shown = subprocess.run(["dropbearkey", "-y", "-f", str(path)], capture_output=True, text=True, check=True).stdout
    return shown.splitlines()[1]


def test_dropbear_image_gets_new_host_keys(run, imds, root, tmp_path):
    install_program(root, "/usr/bin/dropbearkey")
    (root / "etc/dropbear").mkdir(parents=True)
    baked = root / "etc/dropbear/dropbear_ed25519_host_key"
    subprocess.run(["dropbearkey", "-t", "ed25519", "-f", str(baked)], capture_output=True, check=True)
    baked_public = dropbear_public(baked)
    user_data(imds, "#cloud-config\n{}\n")
    result = run("bootstrap", root=root)
    assert result.rc == 0 and "set_ssh_host_keys: ok: dropbear: 3 made, 3 fingerprints printed" in result.stderr, result
    keys = root / "etc/dropbear"
    assert sorted(p.name for p in keys.iterdir()) == [f"dropbear_{t}_host_key" for t in ("ecdsa", "ed25519", "rsa")]
    assert dropbear_public(baked) != baked_public
    expected = []
    for key_type in ("ecdsa", "ed25519", "rsa"):
        (tmp_path / f"{key_type}.pub").write_text(dropbear_public(keys / f"dropbear_{key_type}_host_key") + "\n")
        expected.append(keygen_fingerprint(tmp_path / f"{key_type}.pub"))
    assert fingerprints(result.stderr) == expected
    assert not (root / "var/lib/cloud/.host-key-public").exists()
