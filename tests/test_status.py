"""cloud-init's status documents in <root>/run/cloud-init, `wisp status --wait`, and
Debian's own `cloud-init status` reading what wisp wrote."""

import base64
import json
import os
import shutil
import stat
import subprocess
import time

import pytest

from conftest import aws_metadata

SCRIPT = "#!/bin/sh\necho ran > /dev/null\n"
FAILING = "#!/bin/sh\necho failing >&2\nexit 3\n"
STAGES = ("init-local", "init", "modules-config", "modules-final")


def documents(root):
    directory = root / "run/cloud-init"
    status = json.loads((directory / "status.json").read_text())
    result_file = directory / "result.json"
    result = json.loads(result_file.read_text()) if result_file.exists() else None
    return status, result


def mode(path):
    return stat.S_IMODE(os.stat(path).st_mode)


def test_bootstrap_writes_both_documents(run, imds, root):
    imds(aws_metadata(user_data=SCRIPT, token="TOKEN-SECRET-abc"))
    before = time.time()
    result = run("bootstrap", root=root)
    assert result.rc == 0, result
    status, outcome = documents(root)
    v1 = status["v1"]
    assert v1["datasource"] == "DataSourceEc2" and v1["stage"] is None
    previous = before - 1
    for stage in STAGES:
        record = v1[stage]
        assert record["errors"] == [] and record["recoverable_errors"] == {}
        assert isinstance(record["start"], float) and isinstance(record["finished"], float)
        # The stages ran in order, each after the one before it.
        assert previous <= record["start"] <= record["finished"] <= time.time() + 1, (stage, record)
        previous = record["start"]
    assert outcome == {"v1": {"datasource": "DataSourceEc2", "errors": []}}
    for name in ("status.json", "result.json"):
        assert mode(root / "run/cloud-init" / name) == 0o644
        text = (root / "run/cloud-init" / name).read_text()
        assert "SECRET" not in text and "echo ran" not in text
    assert not list((root / "run/cloud-init").glob("*.wisp-new"))


def test_failing_script_is_an_error_in_both(run, imds, root):
    imds(aws_metadata(user_data=FAILING))
    result = run("bootstrap", root=root)
    assert result.rc == 1, result
    status, outcome = documents(root)
    message = "final/run_userdata: user-data script exited with status 3 (output in user-data.log)"
    assert status["v1"]["modules-final"]["errors"] == [message]
    assert all(status["v1"][stage]["errors"] == [] for stage in STAGES[:3])
    assert status["v1"]["modules-final"]["finished"] is not None and status["v1"]["stage"] is None
    assert outcome["v1"]["errors"] == [message]
    # The log's line, less its "failed:" and time.
    assert "final/run_userdata: failed: user-data script exited with status 3 (" in result.stderr


def test_failure_in_an_earlier_phase_ends_the_wait(run, imds, root):
    """A failed phase writes result.json at once, before the phases after it run; a later
    phase, run alone as its service runs it, reads the failure back from status.json and
    leaves the bootstrap incomplete."""
    imds(aws_metadata(user_data_b64=base64.b64encode(b"\xfd7zXZ\x00\x00rest").decode()))
    for phase in ("boot", "early", "main"):
        result = run(phase, root=root)
    assert result.rc == 1, result
    status, outcome = documents(root)
    assert not status["v1"]["init"]["errors"]
    # Undecodable user-data fails the first user-data action; the others are held back
    # by it (logged, not recorded again); the user and keys are in place.
    [message] = status["v1"]["modules-config"]["errors"]
    assert message.startswith("main/userdata_bootcmd: user-data is xz-compressed"), message
    assert "main/userdata_users: not run: the user-data's error is above" in result.stderr
    assert "main/set_ssh_keys: ok: 2 keys for alpine" in result.stderr
    assert status["v1"]["modules-final"]["start"] is None
    assert outcome["v1"]["errors"] == [message]

    result = run("final", root=root)
    assert result.rc == 1, result
    assert "final/bootstrap_complete: not run: an earlier action failed" in result.stderr
    assert "final/userdata_power_state: not run: needs bootstrap_complete" in result.stderr
    assert not (root / "var/lib/cloud/.bootstrap-complete").exists()
    status, outcome = documents(root)
    # This process reports the user-data's error once too, at its first user-data action.
    [final_message] = status["v1"]["modules-final"]["errors"]
    assert final_message.startswith("final/userdata_write_files_deferred: user-data is xz-compressed"), final_message
    assert "final/run_userdata: not run: the user-data's error is above" in result.stderr
    assert outcome["v1"]["errors"] == [message, final_message]
    assert run("status", "--wait", root=root).rc == 1


def test_setup_failure_before_any_phase_ends_the_wait(run, root):
    (root / "sys/class/dmi/id/sys_vendor").write_text("QEMU\n")
    result = run("early", root=root)
    assert result.rc == 2, result
    status, outcome = documents(root)
    [message] = outcome["v1"]["errors"]
    assert message.startswith("CLOUD=auto found no known cloud") and status["v1"]["init"]["errors"] == [message]
    assert status["v1"]["datasource"] is None
    assert run("status", "--wait", root=root).rc == 1


def test_nocloud_seed_and_a_missing_seed(run, root):
    (root / "sys/class/dmi/id/sys_vendor").write_text("QEMU\n")
    seed = root / "var/lib/cloud/seed/nocloud"
    seed.mkdir(parents=True)
    (seed / "meta-data").write_text("instance-id: iid-local01\n")
    (seed / "user-data").write_text(SCRIPT)
    assert run("bootstrap", root=root).rc == 0
    status, outcome = documents(root)
    assert status["v1"]["datasource"] == outcome["v1"]["datasource"] == "DataSourceNoCloud"
    assert outcome["v1"]["errors"] == []
    # A new boot with no seed and no completed bootstrap fails before its first phase.
    shutil.rmtree(seed)
    shutil.rmtree(root / "run/cloud-init")
    assert run("mark", "incomplete", root=root).rc == 0
    result = run("early", root=root)
    assert result.rc == 1, result
    status, outcome = documents(root)
    [message] = outcome["v1"]["errors"]
    assert message.startswith("nocloud: ") and message in result.stderr
    assert status["v1"]["init"]["errors"] == [message] and status["v1"]["stage"] is None


def test_phases_run_alone_keep_the_earlier_stages(run, imds, root):
    imds(aws_metadata(user_data=SCRIPT))
    for phase, stage in zip(("boot", "early", "main"), STAGES):
        assert run(phase, root=root).rc == 0
        status, outcome = documents(root)
        assert outcome is None, "no result before the final phase"
        assert status["v1"][stage]["finished"] is not None
    first = documents(root)[0]["v1"]
    assert run("final", root=root).rc == 0
    status, outcome = documents(root)
    for stage in STAGES[:3]:
        assert status["v1"][stage] == first[stage]
    assert outcome == {"v1": {"datasource": "DataSourceEc2", "errors": []}}
    # A new boot phase starts a new record, as cloud-init's init-local does.
    assert run("boot", root=root).rc == 0
    status, outcome = documents(root)
    assert outcome is None and status["v1"]["init"]["start"] is None


def test_rerun_on_the_same_instance_is_done_again(run, imds, root):
    imds(aws_metadata(user_data=FAILING))
    assert run("bootstrap", root=root).rc == 1
    assert documents(root)[1]["v1"]["errors"]
    # Fixed by hand, then a reboot: every phase a no-op after the first is complete.
    assert run("mark", "complete", root=root).rc == 0
    for _ in range(2):
        shutil.rmtree(root / "run/cloud-init")  # /run is a tmpfs
        for phase in ("boot", "early", "main", "final"):
            result = run(phase, root=root)
            assert result.rc == 0, result
            assert "nothing to do" in result.stderr or "per-boot work only" in result.stderr, result
        status, outcome = documents(root)
        assert outcome == {"v1": {"datasource": "DataSourceEc2", "errors": []}}
        assert all(status["v1"][stage]["finished"] for stage in STAGES)
        assert run("status", "--wait", root=root).rc == 0


def test_status_wait_returns_at_once_when_done(run, imds, root):
    imds(aws_metadata(user_data=SCRIPT))
    assert run("bootstrap", root=root).rc == 0
    result = run("status", "--wait", root=root)
    assert (result.rc, result.stdout, result.stderr) == (0, "complete i-0123456789abcdef0\n", "")
    assert result.seconds < 2
    # Without --wait, as before.
    assert (run("status", root=root).stdout, run("status", root=root).rc) == ("complete i-0123456789abcdef0\n", 0)


def test_status_wait_exits_1_on_errors(run, imds, root):
    imds(aws_metadata(user_data=FAILING))
    assert run("bootstrap", root=root).rc == 1
    result = run("status", "--wait", root=root)
    assert result.rc == 1, result
    assert (result.stdout, result.stderr) == ("incomplete i-0123456789abcdef0\n", "")


def test_status_wait_blocks_until_the_bootstrap_ends(wisp, netns, imds, root):
    imds(aws_metadata(user_data="#!/bin/sh\nsleep 1\n"))
    # Started in the same network namespace, before anything exists.
    waiter = subprocess.Popen(["ip", "netns", "exec", netns.name, str(wisp), "--root", str(root), "status", "--wait"],
                              stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True)
    try:
        time.sleep(0.7)
        assert waiter.poll() is None, "returned before any phase ran"
        bootstrap = subprocess.Popen(["ip", "netns", "exec", netns.name, "unshare", "--uts", "--fork",
                                      str(wisp), "--root", str(root), "bootstrap"],
                                     stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)
        # While the script sleeps, the final stage is running and there is no result.
        deadline = time.monotonic() + 10
        while not (root / "run/cloud-init/status.json").exists() or \
                documents(root)[0]["v1"]["stage"] != "modules-final":
            assert time.monotonic() < deadline and bootstrap.poll() is None
            time.sleep(0.02)
        assert not (root / "run/cloud-init/result.json").exists()
        time.sleep(0.3)
        assert waiter.poll() is None, "returned while the final phase ran"
        assert bootstrap.wait(timeout=30) == 0
        out, err = waiter.communicate(timeout=5)
        assert (waiter.returncode, out, err) == (0, "complete i-0123456789abcdef0\n", "")
    finally:
        waiter.kill()


def test_status_wait_refuses_a_damaged_result(run, root):
    (root / "run/cloud-init").mkdir(parents=True)
    (root / "run/cloud-init/result.json").write_text('{"v1": {"errors": "no list"}}')
    result = run("status", "--wait", root=root)
    assert result.rc == 1 and "result.json: JSON value is not an array" in result.stderr, result


# The oracle: Debian's cloud-init reading wisp's files at the absolute /run/cloud-init,
# in a private mount namespace with its own /run.
def cloud_init_status(root, *args, systemd=False, timeout=30):
    setup = (
        'set -e; mount -t tmpfs tmpfs /run; mkdir -p /run/cloud-init; '
        'mount --bind "$1/run/cloud-init" /run/cloud-init; '
        + ('mkdir -p /run/systemd/system; ' if systemd else '')
        + 'shift; exec cloud-init status "$@"'
    )
    assert shutil.which("cloud-init"), "Debian's cloud-init is needed (ci/lib.sh installs it)"
    return subprocess.run(["unshare", "--mount", "--propagation", "private", "sh", "-c", setup, "sh", str(root), *args],
                          capture_output=True, text=True, timeout=timeout)


@pytest.mark.parametrize("systemd", [False, True], ids=["openrc", "systemd"])
def test_cloud_init_status_says_done(run, imds, root, systemd):
    imds(aws_metadata(user_data=SCRIPT))
    assert run("bootstrap", root=root).rc == 0
    result = cloud_init_status(root, "--wait", systemd=systemd)
    assert result.returncode == 0, result
    assert result.stdout.strip().endswith("status: done"), result
    result = cloud_init_status(root, "--long", systemd=systemd)
    assert result.returncode == 0, result
    assert "status: done" in result.stdout and "DataSourceEc2" in result.stdout
    boot_code = "unknown" if systemd else "enabled-by-sysvinit"
    assert f"boot_status_code: {boot_code}" in result.stdout, result
    details = json.loads(cloud_init_status(root, "--format", "json", systemd=systemd).stdout)
    assert (details["status"], details["datasource"], details["errors"]) == ("done", "ec2", [])


def test_cloud_init_status_says_error(run, imds, root):
    imds(aws_metadata(user_data=FAILING))
    assert run("bootstrap", root=root).rc == 1
    result = cloud_init_status(root, "--wait")
    assert result.returncode == 1, result
    assert result.stdout.strip().endswith("status: error"), result
    result = cloud_init_status(root, "--long")
    assert result.returncode == 1 and "final/run_userdata: user-data script exited with status 3" in result.stdout, result


def test_cloud_init_status_running_then_done(run, imds, root):
    imds(aws_metadata(user_data=SCRIPT))
    assert run("boot", root=root).rc == 0
    assert run("early", root=root).rc == 0
    result = cloud_init_status(root)
    assert (result.returncode, result.stdout) == (0, "status: running\n"), result
    assert run("main", root=root).rc == 0
    assert run("final", root=root).rc == 0
    result = cloud_init_status(root)
    assert (result.returncode, result.stdout) == (0, "status: done\n"), result


def test_a_disabled_wisp_is_done_at_once(run, root):
    (root / "etc/wisp.disabled").write_text("")
    result = run("bootstrap", root=root)
    assert result.rc == 0 and "disabled by /etc/wisp.disabled: nothing to do" in result.stderr, result
    status, outcome = documents(root)
    assert outcome == {"v1": {"datasource": None, "errors": []}}
    assert all(status["v1"][stage]["finished"] for stage in STAGES)
    # The wait ends by result.json; the answer still says the bootstrap never ran.
    waited = run("status", "--wait", root=root)
    assert (waited.rc, waited.stdout) == (0, "incomplete\n"), waited
    waited = cloud_init_status(root, "--wait")
    assert waited.returncode == 0 and "status: done" in waited.stdout, waited
