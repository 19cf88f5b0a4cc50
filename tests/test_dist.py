"""What an image builder installs: `make install` into a DESTDIR, the systemd units
(checked by systemd-analyze and ordered as cloud-init's), the man page (mandoc's lint,
and the same commands as `wisp --help`), the example configuration, the APKBUILD."""

import re
import shutil
import stat
import subprocess
from pathlib import Path

import pytest

from conftest import REPO, elf_is_static

PHASES = ["boot", "early", "main", "final"]
HOST_UNITS = Path("/lib/systemd/system")


@pytest.fixture(scope="module")
def installed(tmp_path_factory):
    """Everything `make install install-openrc install-systemd` puts in a DESTDIR."""
    destdir = tmp_path_factory.mktemp("destdir")
    subprocess.run(["make", "-s", "install", "install-openrc", "install-systemd", f"DESTDIR={destdir}"],
                   cwd=REPO, check=True, capture_output=True)
    return destdir


def tree(root):
    return {str(p.relative_to(root)): stat.S_IMODE(p.lstat().st_mode) for p in sorted(Path(root).rglob("*"))
            if not p.is_dir()}


def test_make_install_tree(installed):
    expected = {
        "usr/sbin/wisp": 0o755,
        "usr/share/man/man8/wisp.8": 0o644,
        "etc/wisp.conf": 0o644,
        **{f"etc/init.d/wisp-{phase}": 0o755 for phase in PHASES},
        **{f"usr/lib/systemd/system/wisp-{phase}.service": 0o644 for phase in PHASES},
    }
    assert tree(installed) == expected
    assert elf_is_static(installed / "usr/sbin/wisp")
    assert (installed / "usr/sbin/wisp").read_bytes() == (REPO / "target/x86_64-unknown-linux-gnu/release/wisp").read_bytes()
    # PREFIX and the directories move the files; nothing lands outside DESTDIR.
    other = installed.parent / "prefix"
    subprocess.run(["make", "-s", "install", "install-systemd", f"DESTDIR={other}", "PREFIX=/usr/local",
                    "SYSCONFDIR=/usr/local/etc"], cwd=REPO, check=True, capture_output=True)
    assert sorted(tree(other)) == ["usr/local/etc/wisp.conf", "usr/local/lib/systemd/system/wisp-boot.service",
                                   "usr/local/lib/systemd/system/wisp-early.service",
                                   "usr/local/lib/systemd/system/wisp-final.service",
                                   "usr/local/lib/systemd/system/wisp-main.service", "usr/local/sbin/wisp",
                                   "usr/local/share/man/man8/wisp.8"]


def unit(name):
    """A unit file's settings, each key with every value it is given (lists split)."""
    settings = {}
    section = None
    for line in (REPO / "dist/systemd" / name).read_text().splitlines():
        line = line.strip()
        if not line or line.startswith("#"):
            continue
        if line.startswith("["):
            section = line.strip("[]")
            continue
        key, value = line.split("=", 1)
        values = settings.setdefault(f"{section}.{key}", [])
        values.extend(value.split() if key in ("After", "Before", "Wants", "WantedBy", "Conflicts") else [value])
    return settings


def test_systemd_units_are_ordered_as_cloud_init():
    boot, early, main, final = (unit(f"wisp-{phase}.service") for phase in PHASES)
    for phase, settings in zip(PHASES, (boot, early, main, final)):
        assert settings["Service.ExecStart"] == [f"/usr/sbin/wisp {phase}"]
        assert settings["Service.Type"] == ["oneshot"] and settings["Service.RemainAfterExit"] == ["yes"]
        assert settings["Install.WantedBy"] == ["multi-user.target"]
    # boot: as cloud-init-local.service, once / is writable and before any network.
    assert boot["Unit.DefaultDependencies"] == ["no"]
    assert "systemd-remount-fs.service" in boot["Unit.After"]
    assert {"network-pre.target", "sysinit.target"} <= set(boot["Unit.Before"])
    # early: after the network is online, and after boot.
    assert {"network-online.target", "wisp-boot.service"} <= set(early["Unit.After"])
    assert "network-online.target" in early["Unit.Wants"]
    # main: after early, before sshd (Debian's ssh.service too) and logins.
    assert "wisp-early.service" in main["Unit.After"]
    assert {"sshd.service", "ssh.service", "systemd-user-sessions.service"} <= set(main["Unit.Before"])
    # final: as cloud-final.service, once multi-user.target is reached.
    assert {"multi-user.target", "wisp-main.service"} <= set(final["Unit.After"])
    # The disabled files: the first three phases do not start; final runs, so that wisp
    # itself records the boot as done for `status --wait` (tests/test_status.py).
    disabled = ["!/etc/wisp.disabled", "!/etc/tiny-cloud.disabled"]
    for settings in (boot, early, main):
        assert settings["Unit.ConditionPathExists"] == disabled
    assert "Unit.ConditionPathExists" not in final
    # cloud-init's own units, where installed, say the same of the stages these stand for.
    if HOST_UNITS.joinpath("cloud-final.service").exists():
        cloud_final = (HOST_UNITS / "cloud-final.service").read_text()
        assert re.search(r"^After=.*multi-user\.target", cloud_final, re.M)
        assert "Before=network-pre.target" in (HOST_UNITS / "cloud-init-local.service").read_text()


def test_systemd_analyze_verifies_the_units(tmp_path):
    """systemd's own checker, offline, on a systemd image's tree: the binary exists at the
    path ExecStart names and the targets the units name come from this machine's systemd."""
    root = tmp_path / "root"
    subprocess.run(["make", "-s", "install", "install-systemd", f"DESTDIR={root}"], cwd=REPO, check=True,
                   capture_output=True)
    shutil.copytree(HOST_UNITS, root / "lib/systemd/system", symlinks=True)
    units = [f"/usr/lib/systemd/system/wisp-{phase}.service" for phase in PHASES]
    result = subprocess.run(["systemd-analyze", f"--root={root}", "--man=no", "verify", *[str(root) + u for u in units]],
                            capture_output=True, text=True)
    assert result.returncode == 0 and result.stdout == "" and result.stderr == "", result
    # The README's line enables them, offline, as an image builder runs it.
    subprocess.run(["systemctl", f"--root={root}", "enable", *[f"wisp-{phase}.service" for phase in PHASES]],
                   check=True, capture_output=True)
    wants = root / "etc/systemd/system/multi-user.target.wants"
    assert sorted(p.name for p in wants.iterdir()) == sorted(f"wisp-{phase}.service" for phase in PHASES)
    # The checker does fail: the binary missing from the tree is reported.
    (root / "usr/sbin/wisp").unlink()
    broken = subprocess.run(["systemd-analyze", f"--root={root}", "--man=no", "verify", str(root) + units[0]],
                            capture_output=True, text=True)
    assert broken.returncode != 0 and "/usr/sbin/wisp is not executable" in broken.stderr


def test_man_page_lints_clean():
    result = subprocess.run(["mandoc", "-T", "lint", "-W", "warning", str(REPO / "doc/wisp.8")],
                            capture_output=True, text=True)
    assert result.returncode == 0 and result.stdout == "" and result.stderr == "", result


def help_commands_and_flags(text):
    commands, flags = set(), set(re.findall(r"--[a-z][a-z-]*", text))
    for line in text.splitlines()[1:]:
        if not line.startswith("  ") or line.startswith("   "):
            continue
        words = line.split()
        commands.add(words[0])
        # `boot | early | main | final`
        while len(words) > 2 and words[1] == "|":
            words = words[2:]
            commands.add(words[0])
    commands.discard("--help")
    return commands, flags


def man_commands_and_flags(text):
    commands = set()
    for line in text.splitlines():
        if not line.startswith(".It Cm "):
            continue
        # Words after a `Cm` macro (and its `|` alternatives) until another macro.
        macro = None
        for word in line.split()[1:]:
            if re.fullmatch(r"[A-Z][a-z]", word):
                macro = word
            elif macro == "Cm" and re.fullmatch(r"[a-z][a-z-]*", word):
                commands.add(word)
    flags = {"--" + f for f in re.findall(r"Fl \\-([a-z][a-z-]*)", text)}
    return commands, flags


def test_man_page_and_help_name_the_same_commands(run):
    usage = run("--help").stdout
    help_commands, help_flags = help_commands_and_flags(usage)
    man_commands, man_flags = man_commands_and_flags((REPO / "doc/wisp.8").read_text())
    assert "clean" in help_commands and "boot" in help_commands and "final" in help_commands
    # `mark complete|incomplete` and `userdata show`: subcommands are words of their command.
    assert man_commands - {"complete", "incomplete", "show"} == help_commands
    assert man_flags == help_flags


def test_example_configuration_is_every_variable_at_its_default(run, root):
    example = (REPO / "dist/wisp.conf").read_text()
    settings = [line[1:] for line in example.splitlines() if re.match(r"#[A-Z_]+=", line)]
    names = [line.split("=")[0] for line in settings]
    readme = (REPO / "README.md").read_text()
    table = readme[readme.index("| variable | default | meaning |"):]
    table = table[:table.index("\n\n")]
    documented = set(re.findall(r"`([A-Z_]+)`", table)) - {"_FINAL"}
    documented |= {"INIT_ACTIONS_EARLY", "INIT_ACTIONS_MAIN", "INIT_ACTIONS_FINAL"}
    assert set(names) == documented
    # All of it commented: read as it ships, nothing is set.
    assert all(not line or line.startswith("#") for line in example.splitlines())
    # Uncommented, wisp accepts every line without a warning and behaves as with no file.
    (root / "etc/wisp.conf").write_text("\n".join(settings) + "\n")
    result = run("--cloud", "aws", "status", root=root)
    assert result.rc == 1 and result.stderr == "" and result.stdout == "incomplete\n", result


def test_apkbuild_installs_what_make_installs(tmp_path):
    """Checked as far as a Debian machine can: abuild's shell syntax, the variables aports
    reads, and package() run for real (with this machine's target) against make's tree."""
    apkbuild = REPO / "dist/alpine/APKBUILD"
    post_install = REPO / "dist/alpine/wisp-openrc.post-install"
    for script in (apkbuild, post_install):
        assert subprocess.run(["sh", "-n", str(script)]).returncode == 0, script
    text = apkbuild.read_text()
    assert "cargo build --release --frozen" in text
    fields = subprocess.run(["sh", "-c", '. "$1"; echo "$pkgname|$subpackages|$install|$arch|$makedepends"', "sh",
                             str(apkbuild)], capture_output=True, text=True, check=True).stdout.strip().split("|")
    pkgname, subpackages, install, arch, makedepends = fields
    assert pkgname == "wisp" and subpackages.split() == ["wisp-doc", "wisp-openrc"]
    assert set(arch.split()) == {"x86_64", "aarch64"} and "lld" in makedepends.split()
    assert install.split() == ["wisp-openrc.post-install"]
    # The -openrc subpackage comes with openrc, and enables the services in tiny-cloud's runlevels.
    install_if = subprocess.run(["sh", "-c", '. "$1"; default_openrc() { :; }; pkgver=1 pkgrel=2; openrc; echo "$install_if"',
                                 "sh", str(apkbuild)], capture_output=True, text=True, check=True).stdout.strip()
    assert install_if == "openrc wisp=1-r2"
    assert re.findall(r"^rc-update add (\S+) (\S+)$", post_install.read_text(), re.M) == [
        ("wisp-boot", "boot"), ("wisp-early", "default"), ("wisp-main", "default"), ("wisp-final", "default")]

    pkgdir = tmp_path / "pkg"
    subprocess.run(["sh", "-ec", 'CTARGET=x86_64-unknown-linux-gnu; . "$1"; pkgdir="$2"; cd "$3"; package', "sh",
                    str(apkbuild), str(pkgdir), str(REPO)], check=True, capture_output=True)
    made = tmp_path / "made"
    subprocess.run(["make", "-s", "install", "install-openrc", f"DESTDIR={made}"], cwd=REPO, check=True,
                   capture_output=True)
    assert tree(pkgdir) == tree(made)
    # abuild's default_doc and default_openrc split it so: the main package keeps the rest.
    files = set(tree(pkgdir))
    doc = {f for f in files if f.startswith("usr/share/man/")}
    openrc = {f for f in files if f.startswith("etc/init.d/")}
    assert doc == {"usr/share/man/man8/wisp.8"} and len(openrc) == 4
    assert files - doc - openrc == {"usr/sbin/wisp", "etc/wisp.conf"}


def test_a_disabled_final_phase_still_ends_the_wait(run, root):
    """Why wisp-final.service has no disabled-file condition: run alone, as systemd runs it
    when the other three are skipped, it records the boot as done."""
    (root / "etc/tiny-cloud.disabled").write_text("")
    result = run("final", root=root)
    assert result.rc == 0 and "disabled by /etc/tiny-cloud.disabled" in result.stderr, result
    waited = run("status", "--wait", root=root, timeout=10)
    assert waited.rc == 0 and waited.stdout == "incomplete\n", waited
