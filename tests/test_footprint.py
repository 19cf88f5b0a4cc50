"""What a run costs the machine: address space, sync calls and metadata requests, counted
(never timed) on the real binary."""

import ctypes
import gzip
import json
import os
import resource
import signal
import shutil
import struct
import subprocess
import uuid
from pathlib import Path

import pytest

from conftest import RUNNER, aws_metadata
from test_grow import extent, gpt_image
from test_more_clouds import start
from test_seeds import META_DATA, local_root

# The binary's own footprint, file and zero-filled memory together, stays under this.
FOOTPRINT_LIMIT = 1024 * 1024
# `wisp --version` runs under this address-space limit (`ulimit -v 4096`).
ADDRESS_SPACE_LIMIT = 4096 * 1024


def loaded_memory(path):
    """Bytes the kernel maps for the binary's PT_LOAD segments (their p_memsz: file-backed
    and .bss together)."""
    data = Path(path).read_bytes()
    e_phoff = struct.unpack_from("<Q", data, 32)[0]
    e_phentsize, e_phnum = struct.unpack_from("<HH", data, 54)
    total = 0
    for i in range(e_phnum):
        p_type, = struct.unpack_from("<I", data, e_phoff + i * e_phentsize)
        p_memsz, = struct.unpack_from("<Q", data, e_phoff + i * e_phentsize + 40)
        if p_type == 1:
            total += p_memsz
    return total


def test_binary_footprint_is_under_a_mebibyte(wisp):
    footprint = max(loaded_memory(wisp), wisp.stat().st_size)
    assert footprint < FOOTPRINT_LIMIT, f"{footprint} bytes mapped"


def run_limited(wisp, *args, limit):
    def limit_address_space():
        resource.setrlimit(resource.RLIMIT_AS, (limit, limit))
    return subprocess.run([str(wisp), *args], capture_output=True, text=True, timeout=10,
                          preexec_fn=limit_address_space)


def test_version_and_help_run_under_a_small_address_space_limit(wisp):
    result = run_limited(wisp, "--version", limit=ADDRESS_SPACE_LIMIT)
    assert result.returncode == 0 and result.stdout.startswith("wisp "), result
    result = run_limited(wisp, "--help", limit=ADDRESS_SPACE_LIMIT)
    assert result.returncode == 0 and "bootstrap" in result.stdout, result


# The stack commands that do little touch: main's own frame is small, and the commands'
# frames (some large: Rust's stack probes touch every page of a frame) are touched only by
# the command that runs. Both touched about 300 KiB more when main's frame held every
# command's. Every command reads the configuration file into room the host maps, and
# `status --wait` result.json: on the stack (16 KiB each, probed whole on entry however
# short the files) `status`, `status --wait` and `mark complete` touched 40-48 KiB; 24-32.
SMALL_COMMAND_STACK_LIMITS_KIB = {"--version": 32, "status": 36, "--wait": 36, "complete": 36}

libc = ctypes.CDLL(None, use_errno=True)
libc.ptrace.argtypes = [ctypes.c_long, ctypes.c_long, ctypes.c_void_p, ctypes.c_void_p]
libc.ptrace.restype = ctypes.c_long
PTRACE_TRACEME, PTRACE_CONT, PTRACE_SETOPTIONS = 0, 7, 0x4200
PTRACE_O_TRACEEXIT, PTRACE_O_EXITKILL, PTRACE_EVENT_EXIT = 0x40, 0x100000, 6


CLONE_NEWNS, CLONE_NEWUTS, CLONE_NEWNET = 0x20000, 0x4000000, 0x40000000


def stack_kib_at_exit(argv, netns=None):
    """The stack pages resident when `argv` exits (all it ever touched: a stack does not
    shrink), read from /proc/PID/smaps at ptrace's exit stop; and the exit status.
    `netns`: the network namespace to run in (with a UTS and mount namespace of its own,
    as the `run` fixture's)."""
    pid = os.fork()
    if pid == 0:
        try:
            if netns is not None:
                with open(f"/run/netns/{netns}") as namespace:
                    assert libc.setns(namespace.fileno(), CLONE_NEWNET) == 0, ctypes.get_errno()
                assert libc.unshare(CLONE_NEWUTS | CLONE_NEWNS) == 0, ctypes.get_errno()
            devnull = os.open(os.devnull, os.O_WRONLY)
            os.dup2(devnull, 1)
            libc.ptrace(PTRACE_TRACEME, 0, None, None)
            os.execv(argv[0], argv)
        finally:
            os._exit(127)
    os.waitpid(pid, 0)
    libc.ptrace(PTRACE_SETOPTIONS, pid, None, PTRACE_O_TRACEEXIT | PTRACE_O_EXITKILL)
    stack, deliver = None, 0
    while True:
        libc.ptrace(PTRACE_CONT, pid, None, deliver)
        _, status = os.waitpid(pid, 0)
        if os.WIFEXITED(status):
            return stack, os.WEXITSTATUS(status)
        assert os.WIFSTOPPED(status), status
        deliver = 0
        if status >> 8 == signal.SIGTRAP | (PTRACE_EVENT_EXIT << 8):
            in_stack = False
            for line in Path(f"/proc/{pid}/smaps").read_text().splitlines():
                fields = line.split()
                if "-" in fields[0] and len(fields) >= 5:
                    in_stack = fields[-1] == "[stack]"
                elif in_stack and fields[0] == "Rss:":
                    stack = int(fields[1])
        else:
            deliver = os.WSTOPSIG(status)


def phase_stacks(wisp, run, imds, netns, root, user_data, measured=("main",)):
    """A first boot on AWS with `user_data`, its phases in order up to the last of
    `measured`, each of those run alone under `stack_kib_at_exit`: the KiB of stack each
    touched. Every phase must succeed."""
    if RUNNER is not None:
        pytest.skip("measures the native process's stack, not an emulator's")
    imds(aws_metadata(user_data=user_data))
    new_boot(root)
    stacks = {}
    for phase in ("boot", "early", "main", "final"):
        if phase in measured:
            stack, status = stack_kib_at_exit([str(wisp), "--root", str(root), phase], netns=netns.name)
            assert status == 0 and stack is not None, (phase, status)
            stacks[phase] = stack
        else:
            result = run("--root", root, phase)
            assert result.rc == 0, (phase, result)
        if phase == measured[-1]:
            return stacks


def test_small_commands_touch_little_stack(wisp, features, root):
    if RUNNER is not None:
        pytest.skip("measures the native process's stack, not an emulator's")
    (root / "run/cloud-init").mkdir(parents=True, exist_ok=True)
    (root / "run/cloud-init/result.json").write_text('{"v1": {"datasource": null, "errors": []}}')
    waiting = [["--root", str(root), "status", "--wait"]] if "cloud-init-status" in features else []
    for args in (["--version"], ["--root", str(root), "status"], *waiting, ["--root", str(root), "mark", "complete"]):
        stack, status = stack_kib_at_exit([str(wisp), *args])
        assert status in (0, 1) and stack is not None, (args, status)
        assert stack <= SMALL_COMMAND_STACK_LIMITS_KIB[args[-1]], (args, f"{stack} KiB of stack")


# The main phase of a first boot on AWS (the default user, its two keys, a `#!` script)
# touches this much stack: its deepest chain of frames. It was 192 KiB when
# `ensure_account`'s frame held the passwd, group and shadow files and their new text
# (128 KiB, probed whole on entry however small the files); they are mapped now, touched
# only as far as the files fill them. The main phase of every test below touches 84-88
# KiB in the default and the full build alike: a build with `network` (the full one) ran
# every action through `actions::run`'s 68 KiB frame (the ephemeral network's routing
# socket buffer, twice, inlined into the dispatch) and touched 140-144 KiB before.
MAIN_PHASE_STACK_LIMIT_KIB = 104


def test_the_main_phase_with_a_default_user_and_keys_touches_little_stack(wisp, run, imds, netns, root):
    stack = phase_stacks(wisp, run, imds, netns, root, SCRIPT)["main"]
    assert "alpine:" in (root / "etc/passwd").read_text()
    assert len((root / "home/alpine/.ssh/authorized_keys").read_text().splitlines()) == 2
    assert stack <= MAIN_PHASE_STACK_LIMIT_KIB, f"{stack} KiB of stack"


# cloud-config's sshd edit (`ssh_pwauth`) works in the host's mapped room: it held
# sshd_config, the drop-in and the new text on the stack (192 KiB, probed whole on entry),
# and the same phase touched 320 KiB in the full build.
SSH_PWAUTH = "#cloud-config\nssh_pwauth: true\n"


@pytest.mark.needs("ssh")
def test_the_main_phase_editing_sshd_config_touches_little_stack(wisp, run, imds, netns, root):
    sshd_config = root / "etc/ssh/sshd_config"
    sshd_config.parent.mkdir(parents=True, exist_ok=True)
    sshd_config.write_text("Port 22\nPasswordAuthentication no\n")
    stack = phase_stacks(wisp, run, imds, netns, root, SSH_PWAUTH)["main"]
    assert sshd_config.read_text() == "Port 22\nPasswordAuthentication yes\n"
    assert stack <= MAIN_PHASE_STACK_LIMIT_KIB, f"{stack} KiB of stack"


# cloud-config's `apk_repos` reads and rewrites /etc/apk/repositories in the host's
# mapped room: its 36 KiB of buffers sat in the action dispatch's frame in the default
# build, where this phase touched 160-164 KiB.
@pytest.mark.needs("apk-repos")
def test_the_main_phase_writing_apk_repositories_touches_little_stack(wisp, run, imds, netns, root):
    stack = phase_stacks(wisp, run, imds, netns, root, "#cloud-config\napk_repos:\n  alpine_repo:\n    version: v3.20\n")["main"]
    assert "/v3.20/main" in (root / "etc/apk/repositories").read_text()
    assert stack <= MAIN_PHASE_STACK_LIMIT_KIB, f"{stack} KiB of stack"


# cloud-config's `users` gathers their sudo and doas rules in the host's mapped room (24
# KiB on apply_users' stack before, under the account edits' deepest chain): this phase
# touched 140-144 KiB in the default build, 192 in the full one.
USERS = "#cloud-config\nusers:\n  - name: bob\n    sudo: ALL=(ALL) NOPASSWD:ALL\n"


@pytest.mark.needs("cloud-config")
def test_the_main_phase_adding_a_user_with_sudo_rules_touches_little_stack(wisp, run, imds, netns, root):
    stack = phase_stacks(wisp, run, imds, netns, root, USERS)["main"]
    assert (root / "etc/sudoers.d/wisp-users").read_text() == "bob ALL=(ALL) NOPASSWD:ALL\n"
    assert stack <= MAIN_PHASE_STACK_LIMIT_KIB, f"{stack} KiB of stack"


# cloud-config's `bootcmd` (main phase) and `runcmd` (final phase) write their script in
# the host's mapped room: it was a 64 KiB buffer in `cloud_config_commands::run`'s frame,
# probed whole on entry however short the script. The main phase touched 132 KiB and the
# final one 128 in the default build, 188 and 192 in the full one (84-88 each in both now).
COMMANDS = "#cloud-config\nbootcmd:\n  - echo boot >> /bootcmd.log\nruncmd:\n  - echo run >> /runcmd.log\n"
COMMANDS_STACK_LIMIT_KIB = 96


@pytest.mark.needs("cloud-config")
def test_the_phases_running_bootcmd_and_runcmd_touch_little_stack(wisp, run, imds, netns, root):
    stacks = phase_stacks(wisp, run, imds, netns, root, COMMANDS, measured=("main", "final"))
    for phase, stack in stacks.items():
        assert stack <= COMMANDS_STACK_LIMIT_KIB, (phase, f"{stack} KiB of stack")
    assert (root / "bootcmd.log").read_text() == "boot\n"
    assert (root / "runcmd.log").read_text() == "run\n"


# `wisp grow --image` (and the boot phase's growth of the root) reads, writes and reads
# back a GPT in the host's mapped room: its entry arrays and the header's sector (196 KiB
# on grow_gpt's stack before, probed whole on entry however small the table) made the
# command touch 232 KiB of stack; 48 now.
GROW_STACK_LIMIT_KIB = 64


def test_growing_a_gpt_image_touches_little_stack(wisp, tmp_path):
    if RUNNER is not None:
        pytest.skip("measures the native process's stack, not an emulator's")
    image = tmp_path / "disk.img"
    gpt_image(image, 64, 256, [(2048, "+20M")])
    stack, status = stack_kib_at_exit([str(wisp), "grow", "--image", str(image), "--partition", "1"])
    assert status == 0 and stack is not None, status
    assert extent(image, 1) == (2048, 522_239)
    assert stack <= GROW_STACK_LIMIT_KIB, f"{stack} KiB of stack"


# `wisp grow MOUNTPOINT` (and the boot phase's `expand_root`) reads /proc/self/mountinfo
# into the host's mapped room: its 64 KiB buffer sat in expand::mount's frame (76 KiB,
# probed whole on entry however short the file), and the command touched 96 KiB of stack
# (100 in the full build) even for a mount it skips; 44 now.
GROW_MOUNT_STACK_LIMIT_KIB = 64


def test_growing_a_mount_point_touches_little_stack(wisp, tmp_path):
    if RUNNER is not None:
        pytest.skip("measures the native process's stack, not an emulator's")
    mountpoint = tmp_path / "tmp"
    mountpoint.mkdir()
    subprocess.run(["mount", "-t", "tmpfs", "tmpfs", str(mountpoint)], check=True)
    try:
        stack, status = stack_kib_at_exit([str(wisp), "grow", str(mountpoint)])
    finally:
        subprocess.run(["umount", str(mountpoint)], check=True)
    assert status == 0 and stack is not None, status
    assert stack <= GROW_MOUNT_STACK_LIMIT_KIB, f"{stack} KiB of stack"


# The boot phase's `expand_root` reads /proc/self/mountinfo in the host's mapped room too
# (the same 64 KiB buffer, in the same frame): a first boot's boot phase touched 136-140
# KiB of stack in the default build, 84-88 now. A build with `network` brings up the
# ephemeral network in this phase, through deeper frames: 268 KiB when the routing
# socket's 32 KiB buffer was copied once more on its way out of `network::open_kernel`;
# 224 when `net::configure::apply_network_config` held the configuration, its decoded
# text, /etc/network/interfaces and the copy on disk (86 KiB with its YAML nodes) and
# `system_network` a YAML parse of its own (50 KiB) on the stack, probed whole on entry
# with no configuration at all; 132 when they were mapped and the parse shared; 96-100
# when the routing socket's receive buffer (`Rtnl`'s, 32 KiB) was mapped too; 68-72 now that
# the configuration's 1,024 YAML nodes (28 KiB) are as well.
BOOT_PHASE_STACK_LIMIT_KIB = 104
BOOT_PHASE_STACK_LIMIT_WITH_NETWORK_KIB = 84


def test_the_boot_phase_growing_the_root_touches_little_stack(wisp, features, run, imds, netns, root):
    stack = phase_stacks(wisp, run, imds, netns, root, SCRIPT, measured=("boot",))["boot"]
    assert "boot/expand_root: ok: " in (root / "var/log/wisp.log").read_text()
    limit = BOOT_PHASE_STACK_LIMIT_WITH_NETWORK_KIB if "network" in features else BOOT_PHASE_STACK_LIMIT_KIB
    assert stack <= limit, f"{stack} KiB of stack"


# Every phase records its start and end in cloud-init's status.json (and result.json) in
# room the host maps: `cloud_init_status::record` held the document read back and
# `write_document` the one written (16 KiB each, probed whole on entry) under the phase's
# own frames, twice a phase. A bootstrap disabled by /etc/wisp.disabled, which records the
# four stages done at once, touched 84-88 KiB of stack, as did every phase of a later
# boot in the default build; 52-56 now (a later boot's phases 64-80).
DISABLED_RUN_STACK_LIMIT_KIB = 72


@pytest.mark.needs("cloud-init-status")
def test_a_disabled_run_recording_cloud_init_status_touches_little_stack(wisp, root):
    if RUNNER is not None:
        pytest.skip("measures the native process's stack, not an emulator's")
    (root / "etc/wisp.disabled").write_text("")
    new_boot(root)
    stack, status = stack_kib_at_exit([str(wisp), "--root", str(root), "bootstrap"])
    assert status == 0 and stack is not None, status
    recorded = json.loads((root / "run/cloud-init/status.json").read_text())["v1"]
    assert all(recorded[stage]["finished"] for stage in ("init-local", "init", "modules-config", "modules-final")), recorded
    assert (root / "run/cloud-init/result.json").exists()
    assert stack <= DISABLED_RUN_STACK_LIMIT_KIB, f"{stack} KiB of stack"


# The early phase fetches the metadata and saves the user-data: `save_userdata` held a
# document cloud's network-config buffer and Hetzner's parse of the document (62 KiB,
# probed whole on entry) for every cloud, and a first boot's early phase on AWS touched
# 128 KiB of stack in the default and the full build; 84-88 now.
EARLY_PHASE_STACK_LIMIT_KIB = 104


def test_the_early_phase_saving_user_data_touches_little_stack(wisp, run, imds, netns, root):
    stack = phase_stacks(wisp, run, imds, netns, root, SCRIPT, measured=("early",))["early"]
    assert (root / "var/lib/cloud/user-data").read_text() == SCRIPT
    assert stack <= EARLY_PHASE_STACK_LIMIT_KIB, f"{stack} KiB of stack"


# Hetzner's early phase parses its metadata document (YAML) for each value it takes out of
# it and again for the network-config it saves beside it: the parse's text (32 KiB) was in
# the parsing frame (46 KiB, probed whole on entry however small the document), and a
# first boot's early phase on Hetzner touched 116-120 KiB of stack in the full build. The
# text is in the metadata store's room now, mapped with it and written only as far as the
# parse fills it: 88 KiB in the default and the full build.
HETZNER_EARLY_PHASE_STACK_LIMIT_KIB = 96


@pytest.mark.needs("hetzner")
def test_the_early_phase_parsing_hetzners_document_touches_little_stack(wisp, run, imds, netns, root):
    if RUNNER is not None:
        pytest.skip("measures the native process's stack, not an emulator's")
    start(imds, root, "hetzner", user_data=SCRIPT)
    new_boot(root)
    assert run("--root", root, "boot").rc == 0
    stack, status = stack_kib_at_exit([str(wisp), "--root", str(root), "early"], netns=netns.name)
    assert status == 0 and stack is not None, status
    # The early phase took every value out of the document and saved its network-config.
    assert (root / "var/lib/cloud/.instance-id").read_text() == "4711\n"
    assert json.loads((root / "var/lib/cloud/network-config").read_text())["version"] == 1
    assert stack <= HETZNER_EARLY_PHASE_STACK_LIMIT_KIB, f"{stack} KiB of stack"


# A NoCloud seed's documents are read in room the host maps: they were a 64 KiB buffer in
# the seed's loading frame (68 KiB, probed whole on entry however short the files), and a
# first boot's early phase from a seed directory touched 124 KiB of stack; 84-88 now.
@pytest.mark.needs("nocloud")
def test_the_early_phase_reading_a_nocloud_seed_touches_little_stack(wisp, run, netns, root):
    if RUNNER is not None:
        pytest.skip("measures the native process's stack, not an emulator's")
    local_root(root)
    seed = root / "var/lib/cloud/seed/nocloud"
    seed.mkdir(parents=True)
    (seed / "meta-data").write_text(META_DATA)
    (seed / "user-data").write_text(SCRIPT)
    new_boot(root)
    assert run("--root", root, "boot").rc == 0
    stack, status = stack_kib_at_exit([str(wisp), "--root", str(root), "early"], netns=netns.name)
    assert status == 0 and stack is not None, status
    assert (root / "var/lib/cloud/user-data").read_text() == SCRIPT
    assert stack <= EARLY_PHASE_STACK_LIMIT_KIB, f"{stack} KiB of stack"


# `wisp imds KEY...` fetches a path key's value into room the host maps, and reads a
# NoCloud or ConfigDrive seed in a frame of its own: a USERDATA_RESPONSE buffer (257 KiB)
# sat in the command's frame and the seed's documents (68 KiB) in `seed::load_local`'s,
# both probed whole on entry even for `@instance-id` on AWS, and the command touched
# 344-348 KiB of stack; 48-52 now.
IMDS_COMMAND_STACK_LIMIT_KIB = 64


def test_the_imds_command_touches_little_stack(wisp, imds, netns, root):
    if RUNNER is not None:
        pytest.skip("measures the native process's stack, not an emulator's")
    imds(aws_metadata(user_data=SCRIPT))
    for keys in (["@instance-id"], ["/latest/meta-data/ami-id", "@userdata"]):
        stack, status = stack_kib_at_exit([str(wisp), "--root", str(root), "imds", *keys], netns=netns.name)
        assert status == 0 and stack is not None, (keys, status)
        assert stack <= IMDS_COMMAND_STACK_LIMIT_KIB, (keys, f"{stack} KiB of stack")


# A whole first boot with cloud-config user-data fits in this: the buffers it needs are
# mapped when needed, sized to their input.
BOOTSTRAP_ADDRESS_SPACE_LIMIT = 8 * 1024 * 1024


@pytest.mark.needs("cloud-config")
def test_a_first_boot_runs_under_a_small_address_space_limit(run, imds, root):
    imds(aws_metadata(user_data="#cloud-config\nhostname: small\nwrite_files:\n  - path: /etc/small\n    content: fits\n"))
    result = run("--root", root, "bootstrap", wrap=["prlimit", f"--as={BOOTSTRAP_ADDRESS_SPACE_LIMIT}"])
    assert result.rc == 0, result
    assert (root / "etc/small").read_text() == "fits" and (root / "etc/hostname").read_text() == "small\n"


@pytest.mark.needs("cloud-config")
def test_user_data_past_its_bound_is_refused_by_name(wisp, tmp_path):
    root = tmp_path / "root"
    root.mkdir()
    bomb = tmp_path / "bomb.gz"
    bomb.write_bytes(gzip.compress(b"#!/bin/sh\n" + b"\0" * (17 * 1024 * 1024)))
    result = subprocess.run([str(wisp), "--root", root, "userdata", "show", bomb], capture_output=True, text=True, timeout=30)
    assert result.returncode == 1 and "gzip data expands past 16777216 bytes" in result.stderr, result
    # Under an address-space limit too small for the bound, the refusal says so.
    result = run_limited(wisp, "--root", root, "userdata", "show", bomb, limit=ADDRESS_SPACE_LIMIT)
    assert result.returncode == 1 and "cannot reserve 16777216 bytes for user-data" in result.stderr, result


SCRIPT = "#!/bin/sh\necho hello from user-data\n"
SYNC_CALLS = ("fsync", "fdatasync", "sync", "syncfs")
# A whole first boot, four phases: the boot phase's interfaces file, the default user's
# files (one step), the host name's (one step), the keys, then one syncfs before the
# completion marker and the fsync of its directory. cloud-config that installs no packages
# leaves no marker to sync; one that does leaves its marker to that syncfs (apk run twice
# ends as once), and Azure's "ready was reported" goes with it too.
FIRST_BOOT_SYNC_LIMIT = 6


def new_boot(root):
    """A boot of the scratch root: a boot id of its own, and an empty /run."""
    shutil.rmtree(root / "run", ignore_errors=True)
    boot_id = root / "proc/sys/kernel/random/boot_id"
    boot_id.parent.mkdir(parents=True, exist_ok=True)
    boot_id.write_text(str(uuid.uuid4()) + "\n")


def four_phases(run, root, tmp_path):
    """A boot: the four phases as OpenRC runs them, one process each, under strace; the
    sync calls (and renames) each phase made, as (phase, call, argument) in order."""
    new_boot(root)
    calls = []
    for phase in ("boot", "early", "main", "final"):
        trace = tmp_path / f"strace-{phase}"
        traced = ",".join(SYNC_CALLS + ("renameat", "renameat2", "rename"))
        result = run("--root", root, phase, wrap=["strace", "-f", "-qq", "-y", "-o", str(trace), "-e", "trace=" + traced])
        assert result.rc == 0, (phase, result)
        for line in trace.read_text().splitlines():
            fields = line.split(None, 1)
            if len(fields) == 2 and "(" in fields[1]:
                call, argument = fields[1].split("(", 1)
                calls.append((phase, call, argument))
    return calls


def syncs(calls):
    return [(phase, call, argument) for phase, call, argument in calls if call in SYNC_CALLS]


CLOUD_CONFIG = "#cloud-config\nhostname: synced\n"
VM_ID = "d0df4c54-4ecb-4a4b-9954-5bdf3ed5c3b8"


PACKAGES = "#cloud-config\npackages: [nginx]\nruncmd: [echo ran]\n"


@pytest.mark.parametrize("cloud,user_data", [
    ("aws", SCRIPT),
    pytest.param("aws", CLOUD_CONFIG, marks=pytest.mark.needs("cloud-config")),
    pytest.param("aws", PACKAGES, marks=pytest.mark.needs("cloud-config")),
    pytest.param("azure", CLOUD_CONFIG, marks=pytest.mark.needs("azure", "cloud-config")),
])
def test_first_boot_syncs_little_and_marks_complete_last(cloud, user_data, run, imds, root, tmp_path):
    (root / "etc/wisp.conf").write_text(f"CLOUD={cloud}\n")
    if user_data == PACKAGES:
        from test_cloud_config import fake_apk
        fake_apk(root)
    config = aws_metadata(user_data=user_data, instance_id=VM_ID if cloud == "azure" else "i-0123456789abcdef0")
    config["mode"] = cloud
    imds(config)
    if cloud == "azure":
        wireserver = imds({"mode": "wireserver"}, bind="168.63.129.16")
    calls = four_phases(run, root, tmp_path)
    made = syncs(calls)
    assert len(made) <= FIRST_BOOT_SYNC_LIMIT, "\n".join(map(str, made))
    assert not [c for c in made if c[1] == "sync"], "sync(2) flushes every filesystem of the machine"
    assert (root / "var/lib/cloud/.bootstrap-complete").exists()
    # The marker takes its name after the last syncfs of the run, and its directory is
    # fsynced after that: it never outlives the work before it.
    marker = max(i for i, c in enumerate(calls) if c[1].startswith("rename") and ".bootstrap-complete" in c[2])
    last_syncfs = max(i for i, c in enumerate(calls) if c[1] == "syncfs")
    assert last_syncfs < marker, calls
    assert [c for c in calls[marker:] if c[1] == "fsync" and c[2].split(">", 1)[0].endswith("/var/lib/cloud")], calls[marker:]
    # Every replaced system file had its contents made durable before its rename.
    for i, (phase, call, argument) in enumerate(calls):
        if call.startswith("rename") and "/etc/" in argument and ".wisp-new" in argument:
            assert any(c[1] in ("fsync", "syncfs") for c in calls[:i] if c[0] == phase), (argument, calls[:i])
    if user_data == PACKAGES:
        assert (root / "apk.log").read_text() == "add nginx\n"
        assert (root / "var/lib/cloud/sem/packages.i-0123456789abcdef0").exists()
    if cloud == "azure":
        # Ready was reported, and remembered without a sync of its own.
        assert (root / "var/lib/cloud/.azure-reported").exists()
        assert [r for r in wireserver.requests() if r["method"] == "POST"], wireserver.requests()
    # A later boot of the same instance writes nothing that needs a sync.
    again = four_phases(run, root, tmp_path)
    assert syncs(again) == [], syncs(again)


# The dependent chain of a first boot on AWS is three rounds (token; every value and the
# key listing; the keys): seven requests for two keys, made once for the four phases.
AWS_FIRST_BOOT_REQUESTS = 7


def test_one_boot_fetches_once_for_its_four_phases(run, imds, root, tmp_path):
    server = imds(aws_metadata(user_data=SCRIPT))
    four_phases(run, root, tmp_path)
    requests = server.requests()
    assert len(requests) == AWS_FIRST_BOOT_REQUESTS, [r["path"] for r in requests]
    assert len((root / "home/alpine/.ssh/authorized_keys").read_text().splitlines()) == 2
    assert "hello from user-data" in (root / "var/log/user-data.log").read_text()
    kept = root / "run/wisp/metadata"
    assert kept.stat().st_mode & 0o777 == 0o600
    # A later boot of a Xen instance (no instance-id in DMI) checks the instance-id once
    # for its four phases: IMDSv2's token, then the id.
    server.clear_log()
    four_phases(run, root, tmp_path)
    assert [r["path"] for r in server.requests()] == ["/latest/api/token", "/latest/meta-data/instance-id"]
    # On Nitro the DMI's board_asset_tag is the instance-id: nothing is asked.
    (root / "sys/class/dmi/id/board_asset_tag").write_text("i-0123456789abcdef0\n")
    server.clear_log()
    four_phases(run, root, tmp_path)
    assert server.requests() == []
    # A new instance-id in DMI (an image captured without clearing the marker) bootstraps
    # again, fetching once.
    (root / "sys/class/dmi/id/board_asset_tag").write_text("i-0fedcba9876543210\n")
    server.update(instance_id="i-0fedcba9876543210")
    server.clear_log()
    four_phases(run, root, tmp_path)
    assert len(server.requests()) == AWS_FIRST_BOOT_REQUESTS, [r["path"] for r in server.requests()]
    assert (root / "var/lib/cloud/.instance-id").read_text() == "i-0fedcba9876543210\n"
    assert (root / "var/lib/cloud/.bootstrap-complete").exists()


# AWS's Xen instances: DMI names no instance-id, but the system UUID is the instance's own.
XEN_UUID = "EC2E1916-9099-7CAF-FD21-012345ABCDEF"


def test_a_later_boot_on_aws_xen_asks_nothing_when_its_uuid_is_the_one_remembered(run, imds, root, tmp_path):
    dmi = root / "sys/class/dmi/id"
    (dmi / "sys_vendor").write_text("Xen\n")
    (dmi / "product_uuid").write_text(XEN_UUID + "\n")
    server = imds(aws_metadata(user_data=SCRIPT))
    four_phases(run, root, tmp_path)
    assert len(server.requests()) == AWS_FIRST_BOOT_REQUESTS, [r["path"] for r in server.requests()]
    # The completion marker remembers the machine it vouches for.
    marker = root / "var/lib/cloud/.bootstrap-complete"
    assert marker.read_text() == XEN_UUID and marker.stat().st_mode & 0o777 == 0o600
    # A later boot, as a newer kernel prints the UUID: nothing asked, nothing run again.
    (dmi / "product_uuid").write_text(XEN_UUID.lower() + "\n")
    server.clear_log()
    before = (root / "var/log/user-data.log").read_text()
    four_phases(run, root, tmp_path)
    assert server.requests() == []
    assert (root / "var/log/user-data.log").read_text() == before
    # An image of this instance started as a new one: another UUID, so the service is
    # asked, and the new instance-id bootstraps again.
    (dmi / "product_uuid").write_text("EC2A0A0A-1111-2222-3333-444455556666\n")
    server.update(instance_id="i-0fedcba9876543210")
    server.clear_log()
    four_phases(run, root, tmp_path)
    paths = [r["path"] for r in server.requests()]
    assert paths[:2] == ["/latest/api/token", "/latest/meta-data/instance-id"]
    # The rest of that boot's metadata in one more round with the same token, kept for
    # the later phases: the same seven requests as a first boot.
    assert len(paths) == AWS_FIRST_BOOT_REQUESTS and paths.count("/latest/api/token") == 1, paths
    assert (root / "var/lib/cloud/.instance-id").read_text() == "i-0fedcba9876543210\n"
    assert marker.read_text() == "EC2A0A0A-1111-2222-3333-444455556666"
    assert len((root / "home/alpine/.ssh/authorized_keys").read_text().splitlines()) == 2


@pytest.mark.parametrize("shared", ["00000000-0000-0000-0000-000000000000", "03000200-0400-0500-0006-000700080009"])
def test_a_uuid_that_is_not_ec2s_is_never_trusted_to_name_the_instance(shared, run, imds, root, tmp_path):
    # Hypervisors that give every guest one UUID (or a bogus one): equal on a later boot,
    # and on every other machine the image starts on.
    (root / "sys/class/dmi/id/product_uuid").write_text(shared + "\n")
    server = imds(aws_metadata(user_data=SCRIPT))
    four_phases(run, root, tmp_path)
    assert (root / "var/lib/cloud/.bootstrap-complete").read_text() == ""
    server.clear_log()
    four_phases(run, root, tmp_path)
    assert [r["path"] for r in server.requests()] == ["/latest/api/token", "/latest/meta-data/instance-id"]


def test_a_phase_run_again_in_the_same_boot_reads_what_was_kept(run, imds, root):
    server = imds(aws_metadata(user_data=SCRIPT))
    new_boot(root)
    assert run("--root", root, "early").rc == 0
    server.clear_log()
    result = run("--root", root, "early")
    assert result.rc == 0, result
    assert server.requests() == []
    # Another boot asks again.
    new_boot(root)
    assert run("--root", root, "early").rc == 0
    assert len(server.requests()) == AWS_FIRST_BOOT_REQUESTS


# (first boot, later boot) requests of the four phases; Azure's report goes to the
# wireserver, another server. GCP's one round asks every value and the three key sources.
CLOUD_REQUESTS = {"gcp": (8, 1), "oci": (1, 1), "azure": (1, 1)}


@pytest.mark.parametrize("cloud", [pytest.param(cloud, marks=pytest.mark.needs(cloud)) for cloud in sorted(CLOUD_REQUESTS)])
def test_other_clouds_fetch_once_per_boot(cloud, run, imds, root, tmp_path):
    first, later = CLOUD_REQUESTS[cloud]
    (root / "etc/wisp.conf").write_text(f"CLOUD={cloud}\n")
    config = aws_metadata(user_data=SCRIPT, instance_id=VM_ID if cloud == "azure" else "i-0123456789abcdef0")
    config["mode"] = cloud
    server = imds(config)
    if cloud == "azure":
        imds({"mode": "wireserver"}, bind="168.63.129.16")
    four_phases(run, root, tmp_path)
    assert len(server.requests()) == first, [r["path"] for r in server.requests()]
    assert (root / "var/lib/cloud/.bootstrap-complete").exists()
    server.clear_log()
    four_phases(run, root, tmp_path)
    assert len(server.requests()) == later, [r["path"] for r in server.requests()]
    if cloud == "azure":
        # Azure's product_uuid is the vmId, here with its first fields byte-swapped.
        (root / "sys/class/dmi/id/product_uuid").write_text("544CDFD0-CB4E-4B4A-9954-5BDF3ED5C3B8\n")
        server.clear_log()
        four_phases(run, root, tmp_path)
        assert server.requests() == []


# `wisp net-sync` talks to the kernel's routing socket through `Rtnl`, whose 32 KiB
# receive buffer is room the host maps: it was in `Rtnl` itself, in the command's frame
# (39 KiB, probed whole on entry however short the kernel's answers), and the command
# touched 64 KiB of stack; 52 now.
NET_SYNC_COMMAND_STACK_LIMIT_KIB = 56


@pytest.mark.needs("network")
def test_the_net_sync_command_touches_little_stack(wisp, imds, netns, root):
    if RUNNER is not None:
        pytest.skip("measures the native process's stack, not an emulator's")
    imds(aws_metadata())
    stack, status = stack_kib_at_exit([str(wisp), "--root", str(root), "net-sync"], netns=netns.name)
    assert status == 0 and stack is not None, status
    assert stack <= NET_SYNC_COMMAND_STACK_LIMIT_KIB, f"{stack} KiB of stack"
