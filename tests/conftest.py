"""The harness: the real static binary, run as root in private network, UTS and mount
namespaces where 169.254.169.254 is an address on `lo`, against the fake IMDS."""

import json
import os
import secrets
import shlex
import shutil
import signal
import struct
import subprocess
import sys
import time
from pathlib import Path

import pytest

REPO = Path(__file__).resolve().parent.parent
# The tests run the build with every feature (the network and the newer clouds are not in
# the default build yet); ci/test runs the AWS and command-line tests against the default
# and AWS-only builds too (WISP_BINARY).
BINARY = REPO / "target/full/x86_64-unknown-linux-gnu/release/wisp"
FULL_BUILD = ["cargo", "build", "--release", "--quiet", "--all-features", "--target-dir", "target/full"]
FAKE_IMDS = REPO / "tests/fake_imds.py"

ALPINE_PASSWD = "root:x:0:0:root:/root:/bin/sh\nbin:x:1:1:bin:/bin:/sbin/nologin\nsshd:x:22:22:sshd:/dev/null:/sbin/nologin\nnobody:x:65534:65534:nobody:/:/sbin/nologin\n"
ALPINE_GROUP = "root:x:0:root\nbin:x:1:root,bin,daemon\nshadow:x:42:\nwheel:x:10:root\nsshd:x:22:sshd\nnogroup:x:65533:\nnobody:x:65534:\n"
ALPINE_SHADOW = "root:*::0:::::\nbin:!::0:::::\nsshd:!::0:::::\nnobody:!::0:::::\n"
ALPINE_HOSTS = "127.0.0.1\tlocalhost localhost.localdomain\n::1\t\tlocalhost localhost.localdomain\n"

# Short deadlines, so that fault tests finish quickly.
TEST_CONFIG = """CLOUD=auto
WISP_HTTP_CONNECT_MS=300
WISP_HTTP_READ_MS=1000
WISP_HTTP_TOTAL_MS=3000
WISP_HTTP_BACKOFF_MS=50
WISP_HTTP_BACKOFF_MAX_MS=400
"""


def elf_is_static(path):
    """ET_EXEC with no PT_INTERP and no PT_DYNAMIC."""
    data = Path(path).read_bytes()
    assert data[:4] == b"\x7fELF" and data[4] == 2, "not a 64-bit ELF"
    e_type = struct.unpack_from("<H", data, 16)[0]
    e_phoff = struct.unpack_from("<Q", data, 32)[0]
    e_phentsize, e_phnum = struct.unpack_from("<HH", data, 54)
    types = [struct.unpack_from("<I", data, e_phoff + i * e_phentsize)[0] for i in range(e_phnum)]
    return e_type == 2 and 3 not in types and 2 not in types


# WISP_BINARY names another build to test (ci/test runs the AWS tests against the
# AWS-only build so); it is used as it is, not rebuilt.
TESTED_BINARY = Path(os.environ["WISP_BINARY"]).resolve() if os.environ.get("WISP_BINARY") else None
RUNNER = os.environ.get("WISP_RUNNER")


def built_features(binary):
    """The Cargo features a binary was built with, as its --version line names them."""
    runner = [RUNNER] if RUNNER and binary == TESTED_BINARY else []
    line = subprocess.run([*runner, str(binary), "--version"], capture_output=True, text=True, check=True).stdout
    return set(line[line.index("(") + 1:line.rindex(")")].split())


def pytest_configure(config):
    config.addinivalue_line("markers", "needs(*features): the test needs these Cargo features in the binary under test")


def pytest_runtest_setup(item):
    """A test of a feature the binary under test was built without is skipped, and says so;
    test_features.py checks what such a build does instead."""
    marker = item.get_closest_marker("needs")
    if marker is None or TESTED_BINARY is None:
        return
    missing = sorted(set(marker.args) - built_features(TESTED_BINARY))
    if missing:
        pytest.skip(f"{TESTED_BINARY.name} was built without {', '.join(missing)}")


ROOT_AT_START = os.open("/", os.O_RDONLY | os.O_DIRECTORY)


@pytest.fixture(autouse=True)
def stays_in_its_root(request):
    """The suite ends at the first test that leaves the test process with another root
    directory: ci/fresh runs it chrooted, and a setns(2) into a mount namespace, which
    resets the root to that namespace's, would run every later test, as root, on the
    host's files. The root is taken back first, so that pytest can end as usual."""
    yield
    if os.path.samestat(os.stat("/"), os.fstat(ROOT_AT_START)):
        return
    os.fchdir(ROOT_AT_START)
    os.chroot(".")
    os.chdir(request.config.invocation_params.dir)
    pytest.exit(f"{request.node.nodeid} left the test process outside the root it started in", returncode=1)


@pytest.fixture(scope="session")
def features(wisp):
    """The features of the binary under test."""
    return built_features(wisp)


@pytest.fixture(scope="session")
def wisp(tmp_path_factory):
    """The release binary, built once per session, or the one WISP_BINARY names, used as it
    is (ci/test runs the AWS tests against the AWS-only build so). ci/aarch64 also names
    the emulator that runs it in WISP_RUNNER (qemu-aarch64): the tests then run a two-line
    script that execs the emulator."""
    binary = TESTED_BINARY
    if binary is None:
        subprocess.run(FULL_BUILD, cwd=REPO, check=True)
        binary = BINARY
    assert elf_is_static(binary), f"{binary} must be a static, non-PIE ELF"
    if RUNNER is None:
        return Path(binary)
    wrapper = tmp_path_factory.mktemp("runner") / "wisp"
    wrapper.write_text(f'#!/bin/sh\nexec {shlex.quote(RUNNER)} {shlex.quote(str(binary))} "$@"\n')
    wrapper.chmod(0o755)
    return wrapper


class Namespace:
    """A private network namespace with the metadata addresses on lo."""

    def __init__(self):
        self.name = "wisp-t-" + secrets.token_hex(4)
        subprocess.run(["ip", "netns", "add", self.name], check=True)
        for command in (["ip", "link", "set", "lo", "up"],
                        ["ip", "addr", "add", "169.254.169.254/32", "dev", "lo"],
                        ["ip", "addr", "add", "168.63.129.16/32", "dev", "lo"],
                        ["ip", "addr", "add", "169.254.42.42/32", "dev", "lo"]):
            self.exec(command, check=True)
        self.servers = []

    def exec(self, command, **kwargs):
        return subprocess.run(["ip", "netns", "exec", self.name, *command], **kwargs)

    def close(self):
        for server in self.servers:
            server.stop()
        subprocess.run(["ip", "netns", "del", self.name], check=False)


class FakeImds:
    """The fake metadata service, running inside a namespace."""

    def __init__(self, namespace, directory, config, bind="169.254.169.254", unix=None):
        self.directory = Path(directory)
        self.config_path = self.directory / "imds.json"
        self.log_path = self.directory / "imds-requests.jsonl"
        self.ready_path = self.directory / "imds.ready"
        self.configure(config)
        self.process = subprocess.Popen(
            ["ip", "netns", "exec", namespace.name, sys.executable, str(FAKE_IMDS),
             "--config", str(self.config_path), "--log", str(self.log_path),
             "--ready", str(self.ready_path), "--bind", bind] + (["--unix", str(unix)] if unix else []),
            stdout=subprocess.DEVNULL, stderr=open(self.directory / "imds.stderr", "w"))
        deadline = time.monotonic() + 10
        while not self.ready_path.exists():
            assert self.process.poll() is None, "the fake IMDS exited: " + (self.directory / "imds.stderr").read_text()
            assert time.monotonic() < deadline, "the fake IMDS did not start"
            time.sleep(0.02)
        namespace.servers.append(self)

    def configure(self, config):
        self.config = config
        tmp = self.config_path.with_suffix(".tmp")
        tmp.write_text(json.dumps(config))
        tmp.rename(self.config_path)

    def update(self, **changes):
        self.configure({**self.config, **changes})

    def requests(self):
        if not self.log_path.exists():
            return []
        return [json.loads(line) for line in self.log_path.read_text().splitlines()]

    def clear_log(self):
        if self.log_path.exists():
            self.log_path.unlink()

    def stop(self):
        if self.process.poll() is None:
            self.process.send_signal(signal.SIGTERM)
            try:
                self.process.wait(timeout=5)
            except subprocess.TimeoutExpired:
                self.process.kill()


@pytest.fixture
def netns():
    namespace = Namespace()
    yield namespace
    namespace.close()


# Debian's busybox-static: the scratch roots' /bin/sh and tools, as an Alpine image's
# busybox is. wisp runs user-data's commands chrooted into the root it is given.
BUSYBOX = Path("/bin/busybox")


def install_busybox(root):
    """/bin/busybox and a link for each of its applets in root/bin."""
    (root / "bin").mkdir(parents=True, exist_ok=True)
    shutil.copy2(BUSYBOX, root / "bin/busybox")
    applets = subprocess.run([str(BUSYBOX), "--list"], capture_output=True, text=True, check=True).stdout.split()
    for applet in applets:
        link = root / "bin" / applet
        if applet != "busybox" and not link.exists():
            link.symlink_to("busybox")


def make_root(path):
    """A scratch root laid out like a fresh Alpine cloud image (busybox included)."""
    root = Path(path)
    for directory in ("etc/doas.d", "etc/init.d", "sys/class/dmi/id", "sys/class/net/eth0",
                      "sys/class/net/lo", "proc", "var/log", "home", "dev"):
        (root / directory).mkdir(parents=True, exist_ok=True)
    (root / "etc/passwd").write_text(ALPINE_PASSWD)
    (root / "etc/group").write_text(ALPINE_GROUP)
    (root / "etc/shadow").write_text(ALPINE_SHADOW)
    os.chmod(root / "etc/shadow", 0o640)
    os.chown(root / "etc/shadow", 0, 42)
    (root / "etc/hosts").write_text(ALPINE_HOSTS)
    (root / "etc/hostname").write_text("localhost\n")
    (root / "etc/init.d/sshd").write_text("#!/sbin/openrc-run\n")
    (root / "etc/wisp.conf").write_text(TEST_CONFIG)
    (root / "sys/class/dmi/id/sys_vendor").write_text("Amazon EC2\n")
    (root / "sys/class/net/eth0/ifindex").write_text("2\n")
    (root / "sys/class/net/lo/ifindex").write_text("1\n")
    # The scratch root's "/" is an overlay, as a container's is: expand_root skips it.
    (root / "proc/self").mkdir(parents=True, exist_ok=True)
    (root / "proc/self/mountinfo").write_text(
        "21 1 0:30 / / rw,relatime - overlay overlay rw,lowerdir=/l,upperdir=/u,workdir=/w\n"
        "22 21 0:5 / /proc rw,nosuid - proc proc rw\n")
    (root / "proc/cmdline").write_text("BOOT_IMAGE=/boot/vmlinuz-virt root=/dev/vda1 console=ttyS0\n")
    install_busybox(root)
    return root


@pytest.fixture
def root(tmp_path):
    return make_root(tmp_path / "root")


ED25519 = ("ssh-ed25519 AAAAC3NzaC1lZDI1NTE5AAAAIP6zWIGFsiIt1uW2eXmASHnCRo/IiaNJBUNBBBA8SwbT alice@laptop")
ECDSA = ("ecdsa-sha2-nistp256 AAAAE2VjZHNhLXNoYTItbmlzdHAyNTYAAAAIbmlzdHAyNTYAAABBBOy2XdEvmoAOZj8OE9BQ8mkzwO7w"
         "mlR0qCTwPL4S0RhLI3G0mnQmU2AxV8IL+rG4imBA447feb5tu3Rd4a5837w= bob")


def aws_metadata(**overrides):
    config = {
        "mode": "aws",
        "instance_id": "i-0123456789abcdef0",
        "hostname": "ip-10-0-1-23.eu-west-1.compute.internal",
        "local_hostname": "ip-10-0-1-23.eu-west-1.compute.internal",
        "keys": [["alice", ED25519], ["bob", ECDSA]],
    }
    config.update(overrides)
    return config


@pytest.fixture
def imds(netns, tmp_path):
    """Starts the fake IMDS in the test's namespace: `imds(config)`."""
    def start(config=None, bind="169.254.169.254", unix=None):
        directory = tmp_path / ("imds-" + secrets.token_hex(3))
        directory.mkdir()
        return FakeImds(netns, directory, config if config is not None else aws_metadata(), bind, unix)
    return start


class Result:
    def __init__(self, process, hostname, seconds):
        self.rc = process.returncode
        self.stdout = process.stdout
        self.stderr = process.stderr
        self.hostname = hostname
        self.seconds = seconds

    def __repr__(self):
        return f"<rc={self.rc} stdout={self.stdout!r} stderr={self.stderr!r}>"


@pytest.fixture
def run(wisp, netns, tmp_path):
    """Runs wisp in the namespace and a fresh UTS and mount namespace; afterwards reads
    the hostname back in that same UTS namespace."""
    def run_wisp(*args, root=None, timeout=60, env=None, wrap=()):
        """`wrap`: a command that runs wisp (strace ...)."""
        hostname_file = tmp_path / ("hostname-" + secrets.token_hex(3))
        command = [*wrap, str(wisp)]
        if root is not None:
            command += ["--root", str(root)]
        command += [str(arg) for arg in args]
        script = '"$@"; rc=$?; hostname > "$WISP_TEST_HOSTNAME_FILE"; exit $rc'
        started = time.monotonic()
        process = netns.exec(
            ["unshare", "--uts", "--mount", "--fork", "sh", "-c", script, "sh", *command],
            capture_output=True, text=True, timeout=timeout,
            env={**(env or {"PATH": os.environ["PATH"]}), "WISP_TEST_HOSTNAME_FILE": str(hostname_file)})
        seconds = time.monotonic() - started
        hostname = hostname_file.read_text().strip() if hostname_file.exists() else None
        return Result(process, hostname, seconds)
    return run_wisp


def snapshot(root):
    """Every path under root with its type, mode, owner and contents."""
    state = {}
    for path in sorted(Path(root).rglob("*")):
        st = path.lstat()
        relative = str(path.relative_to(root))
        if path.is_symlink():
            state[relative] = ("link", os.readlink(path))
        elif path.is_dir():
            state[relative] = ("dir", oct(st.st_mode & 0o7777), st.st_uid, st.st_gid)
        else:
            state[relative] = ("file", oct(st.st_mode & 0o7777), st.st_uid, st.st_gid, path.read_bytes())
    return state


def leftover_temporaries(root):
    return [str(p) for p in Path(root).rglob("*.wisp-new")]
