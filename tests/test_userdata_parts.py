"""User-data parts beyond plain scripts: includes fetched with wisp's own HTTP client,
gzip'd parts, boothooks, and cloud-init's per-boot, per-instance and per-once scripts,
run with cloud-init's frequencies on later boots and new instances."""

import base64
import gzip
import os
import subprocess
import time

import pytest

from conftest import aws_metadata

# Each script appends its name to a file beside TINY_CLOUD_VAR's scripts directory.
def counter(name, depth=1):
    up = "/.." * depth
    return f"#!/bin/sh\necho {name} >> \"$(dirname \"$0\"){up}/../ran\"\n"


def multipart(*parts, boundary="==BOUNDARY=="):
    """A MIME multipart document of (content type, body bytes, extra headers) parts."""
    out = [f"Content-Type: multipart/mixed; boundary=\"{boundary}\"\nMIME-Version: 1.0\n\n".encode()]
    for content_type, body, headers in parts:
        out.append(f"--{boundary}\nContent-Type: {content_type}\n{headers}\n".encode())
        out.append(body if isinstance(body, bytes) else body.encode())
        out.append(b"\n")
    out.append(f"--{boundary}--\n".encode())
    return b"".join(out)


def b64(data):
    return base64.b64encode(data).decode()


def ran(root):
    path = root / "var/lib/cloud/ran"
    return path.read_text().split() if path.exists() else []


@pytest.fixture
def web(netns, tmp_path):
    """A plain HTTP server on 169.254.169.254:8080 inside the test's namespace, serving a
    directory: where `#include` URLs point."""
    directory = tmp_path / "web"
    directory.mkdir()
    server = subprocess.Popen(
        ["ip", "netns", "exec", netns.name, "python3", "-m", "http.server", "--bind", "169.254.169.254",
         "--directory", str(directory), "8080"], stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)
    for _ in range(100):
        probe = netns.exec(["python3", "-c", "import socket; socket.create_connection(('169.254.169.254', 8080), 0.2)"],
                           capture_output=True)
        if probe.returncode == 0:
            break
        time.sleep(0.05)
    yield directory
    server.terminate()
    server.wait()


def test_per_boot_instance_once_frequencies(run, imds, root):
    document = multipart(
        ("text/x-shellscript-per-boot", counter("boot"), 'Content-Disposition: attachment; filename="10-boot.sh"\n'),
        ("text/x-shellscript-per-instance", counter("instance"), ""),
        ("text/x-shellscript-per-once", counter("once"), ""),
        ("text/x-shellscript", counter("user", depth=0), ""),
    )
    server = imds(aws_metadata(user_data_b64=b64(document)))
    result = run("bootstrap", root=root)
    assert result.rc == 0, result
    # cloud-init's order: per-once, per-boot, per-instance, then the user's scripts.
    assert ran(root) == ["once", "boot", "instance", "user"]
    scripts = root / "var/lib/cloud/scripts"
    assert (scripts / "per-boot/10-boot.sh").stat().st_mode & 0o777 == 0o700
    assert sorted(p.name for p in (scripts / "per-instance").iterdir()) == ["part-002"]
    # A later boot: per-boot only, and the rest of the bootstrap stays a no-op.
    result = run("bootstrap", root=root)
    assert result.rc == 0, result
    assert ran(root) == ["once", "boot", "instance", "user", "boot"]
    assert "final: bootstrap complete for i-0123456789abcdef0: per-boot work only" in result.stderr
    # A new instance: per-instance again, per-once never again.
    server.update(instance_id="i-0000000000000000b")
    result = run("bootstrap", root=root)
    assert result.rc == 0, result
    assert ran(root)[5:] == ["boot", "instance", "user"]
    # An image's own script in per-boot runs too, if executable; others are left alone.
    (scripts / "per-boot/20-image").write_text(counter("image"))
    (scripts / "per-boot/20-image").chmod(0o755)
    (scripts / "per-boot/30-not-executable").write_text(counter("never"))
    result = run("bootstrap", root=root)
    assert result.rc == 0, result
    assert ran(root)[8:] == ["boot", "image"]


def test_a_failing_per_boot_script_fails_the_later_boot_too(run, imds, root):
    failing = "#!/bin/sh\n[ -e \"$(dirname \"$0\")/../../second\" ] && exit 7\ntouch \"$(dirname \"$0\")/../../second\"\n"
    imds(aws_metadata(user_data_b64=b64(multipart(("text/x-shellscript-per-boot", failing, "")))))
    assert run("bootstrap", root=root).rc == 0
    result = run("bootstrap", root=root)
    assert result.rc == 1
    assert "final/run_userdata: failed: scripts/per-boot/part-001 exited with status 7" in result.stderr, result.stderr
    assert (root / "var/log/user-data.exit").read_text() == "7\n"


def test_boothooks_run_every_boot_before_the_rest(run, imds, root):
    hook = "#cloud-boothook\n#!/bin/sh\necho hook >> \"$(dirname \"$0\")/../ran\"\n"
    plain_hook = "#cloud-boothook\necho plain >> \"$(dirname \"$0\")/../ran\"\n"
    document = multipart(("text/x-shellscript", counter("user", depth=0), ""),
                         ("text/cloud-boothook", hook, ""), ("text/plain", plain_hook, ""))
    imds(aws_metadata(user_data_b64=b64(document)))
    result = run("bootstrap", root=root)
    assert result.rc == 0, result
    assert ran(root) == ["hook", "plain", "user"]
    assert "early/userdata_boothooks: ok: 2 boothooks ran" in result.stderr
    result = run("bootstrap", root=root)
    assert result.rc == 0, result
    assert ran(root) == ["hook", "plain", "user", "hook", "plain"]


def test_gzip_parts_and_sniffed_types(run, imds, root):
    document = multipart(
        ("application/x-gzip", gzip.compress(counter("gzipped", depth=0).encode()), ""),
        # Labelled a shell script, but cloud-init goes by the text: this is cloud-config.
        ("text/x-shellscript", "#cloud-config\n{}\n", ""),
        ("text/x-shellscript", b64(gzip.compress(counter("b64-gzipped", depth=0).encode())),
         "Content-Transfer-Encoding: base64\n"),
    )
    imds(aws_metadata(user_data_b64=b64(gzip.compress(document))))
    result = run("bootstrap", root=root)
    assert result.rc == 0, result
    assert ran(root) == ["gzipped", "b64-gzipped"]
    assert "early/save_userdata: ok: saved" in result.stderr and "3 parts" in result.stderr


def test_a_bomb_in_a_part_runs_nothing(run, imds, root):
    bomb = gzip.compress(b"\0" * (17 << 20))
    document = multipart(("text/x-shellscript", counter("before", depth=0), ""), ("application/gzip", bomb, ""))
    imds(aws_metadata(user_data_b64=b64(document)))
    result = run("bootstrap", root=root)
    assert result.rc == 1
    assert "user-data: gzip data expands past" in result.stderr, result.stderr
    assert ran(root) == []
    assert not (root / "var/lib/cloud/.bootstrap-complete").exists()
    # The instance still got its user and keys before the user-data actions stopped.
    assert (root / "home/alpine/.ssh/authorized_keys").exists()


def test_includes_fetched_once_kept_and_refetched(run, imds, root, web):
    (web / "every.sh").write_text(counter("every-v1", depth=0))
    (web / "once.sh").write_text(counter("once-v1", depth=0))
    (web / "nested.txt").write_text("#include\nhttp://169.254.169.254:8080/every.sh\n")
    document = multipart(
        ("text/x-include-url", "http://169.254.169.254:8080/nested.txt\n", ""),
        ("text/plain", "#include-once\n# a comment\nhttp://169.254.169.254:8080/once.sh\n", ""),
    )
    server = imds(aws_metadata(user_data_b64=b64(document)))
    result = run("bootstrap", root=root)
    assert result.rc == 0, result
    assert ran(root) == ["every-v1", "once-v1"]
    kept = root / "var/lib/cloud/includes"
    assert len(list(kept.iterdir())) == 3 and all(p.stat().st_mode & 0o777 == 0o600 for p in kept.iterdir())
    # A new instance: #include is fetched again, #include-once is read back.
    (web / "every.sh").write_text(counter("every-v2", depth=0))
    (web / "once.sh").write_text(counter("once-v2", depth=0))
    server.update(instance_id="i-0000000000000000b")
    result = run("bootstrap", root=root)
    assert result.rc == 0, result
    assert ran(root)[2:] == ["every-v2", "once-v1"]
    # The phases run one by one (as OpenRC runs them): final reads what early kept.
    server.update(instance_id="i-0000000000000000c")
    for phase in ("boot", "early", "main", "final"):
        assert run(phase, root=root).rc == 0
    assert ran(root)[4:] == ["every-v2", "once-v1"]


@pytest.mark.parametrize("url, reason", [
    ("https://169.254.169.254/x", "https URLs are not supported (wisp has no TLS)"),
    ("http://metadata.example/x", "the host must be an IPv4 address (wisp has no DNS resolver)"),
    ("http://169.254.169.254:8080/missing", "HTTP status 404"),
])
def test_an_include_that_cannot_be_fetched_runs_nothing(run, imds, root, web, url, reason):
    document = multipart(("text/x-shellscript", counter("before", depth=0), ""), ("text/plain", f"#include {url}\n", ""))
    imds(aws_metadata(user_data_b64=b64(document)))
    result = run("bootstrap", root=root)
    assert result.rc == 1
    assert reason in result.stderr, result.stderr
    assert "does not decode" in result.stderr
    assert ran(root) == []
    assert not (root / "var/lib/cloud/.bootstrap-complete").exists()


def nested(depth):
    """A script inside `depth` levels of multipart/mixed."""
    body, content_type = counter("deep", depth=0), "text/x-shellscript"
    for level in range(depth):
        body = f"--b{level}\nContent-Type: {content_type}\n\n{body}\n--b{level}--\n"
        content_type = f"multipart/mixed; boundary=b{level}"
    return f"Content-Type: {content_type}\nMIME-Version: 1.0\n\n{body}"


def test_nesting_within_the_limit_runs(run, imds, root):
    imds(aws_metadata(user_data_b64=b64(nested(4).encode())))
    result = run("bootstrap", root=root)
    assert result.rc == 0, result
    assert ran(root) == ["deep"]


@pytest.mark.parametrize("document, reason", [
    # More parts than wisp keeps (64).
    (multipart(*[("text/x-shellscript", counter(f"p{i}", depth=0), "") for i in range(65)]),
     "multipart MIME with more than 64 parts"),
    # Multipart nested deeper than wisp follows.
    (nested(6), "nested deeper than 4 levels"),
    # A gzip'd part whose CRC does not match.
    (multipart(("text/x-shellscript", counter("before", depth=0), ""),
               ("application/x-gzip", gzip.compress(counter("x", depth=0).encode())[:-8] + b"\0\0\0\0" + gzip.compress(b"")[-4:], "")),
     "gzip"),
    # A bzip2'd part.
    (multipart(("text/x-shellscript", counter("before", depth=0), ""), ("text/plain", b"BZh91AY&SY rest", "")),
     "is bzip2-compressed: unsupported compression (wisp decodes gzip only)"),
    # A transfer encoding wisp does not decode.
    (multipart(("text/x-shellscript", counter("q", depth=0), "Content-Transfer-Encoding: quoted-printable\n")),
     "unsupported transfer encoding quoted-printable"),
])
def test_oversize_and_undecodable_parts_run_nothing(run, imds, root, document, reason):
    document = document if isinstance(document, bytes) else document.encode()
    imds(aws_metadata(user_data_b64=b64(document)))
    result = run("bootstrap", root=root)
    assert result.rc == 1, result
    assert reason in result.stderr, result.stderr
    assert ran(root) == []
    assert (root / "home/alpine/.ssh/authorized_keys").exists()


def test_the_decoding_bound_is_configurable(run, imds, root):
    (root / "etc/wisp.conf").write_text((root / "etc/wisp.conf").read_text() + "WISP_USERDATA_LIMIT=4096\n")
    small = multipart(("application/x-gzip", gzip.compress(counter("small", depth=0).encode()), ""))
    server = imds(aws_metadata(user_data_b64=b64(small)))
    result = run("bootstrap", root=root)
    assert result.rc == 0, result
    assert ran(root) == ["small"]
    large = multipart(("application/x-gzip", gzip.compress((counter("large", depth=0) + "#" * 5000 + "\n").encode()), ""))
    server.update(instance_id="i-0000000000000000b", user_data_b64=b64(large))
    result = run("bootstrap", root=root)
    assert result.rc == 1
    assert "gzip data expands past" in result.stderr, result.stderr
    assert ran(root) == ["small"]
    (root / "etc/wisp.conf").write_text((root / "etc/wisp.conf").read_text() + "WISP_USERDATA_LIMIT=100\n")
    result = run("bootstrap", root=root)
    assert result.rc == 2 and "WISP_USERDATA_LIMIT" in result.stderr, result.stderr


def test_a_part_named_like_wisps_own_files_is_renamed(run, imds, root):
    document = multipart(("text/x-shellscript", counter("user", depth=0), 'Content-Disposition: attachment; filename="per-boot"\n'),
                         ("text/x-shellscript", counter("other", depth=0), 'Content-Disposition: attachment; filename="runcmd"\n'))
    imds(aws_metadata(user_data_b64=b64(document)))
    result = run("bootstrap", root=root)
    assert result.rc == 0, result
    assert ran(root) == ["user", "other"]
    scripts = root / "var/lib/cloud/scripts"
    assert (scripts / "per-boot").is_dir() and (scripts / "part-001").exists() and (scripts / "part-002").exists()


def test_script_directories_skip_hidden_files_and_refuse_long_names(run, imds, root):
    imds(aws_metadata())
    per_boot = root / "var/lib/cloud/scripts/per-boot"
    per_boot.mkdir(parents=True)
    for name, text in ((".leftover.wisp-new", counter("hidden", depth=1)), ("10-ok", counter("ok", depth=1))):
        (per_boot / name).write_text(text)
        (per_boot / name).chmod(0o755)
    result = run("bootstrap", root=root)
    assert result.rc == 0, result
    assert ran(root) == ["ok"]
    long_name = "x" * 70
    (per_boot / long_name).write_text(counter("long", depth=1))
    (per_boot / long_name).chmod(0o755)
    result = run("bootstrap", root=root)
    assert result.rc == 1
    assert f"scripts/per-boot/{long_name}: a name longer than 64 bytes, or not UTF-8" in result.stderr, result.stderr


def test_an_include_that_includes_itself_stops_at_the_nesting_limit(run, imds, root, web):
    (web / "loop.txt").write_text("#include http://169.254.169.254:8080/loop.txt\n")
    imds(aws_metadata(user_data="#include http://169.254.169.254:8080/loop.txt\n"))
    result = run("bootstrap", root=root)
    assert result.rc == 1
    assert "nested deeper than 4 levels" in result.stderr, result.stderr
