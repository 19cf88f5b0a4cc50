"""The metadata fault matrix: every cloud with a metadata service, against the real binary
at the real address, under each fault. Each run ends correct, or with an error naming the
limit or the fault, within the configured deadline, with no half-written file; and a
rerun once the fault is gone finishes the job."""

import pytest

from conftest import ED25519, leftover_temporaries
from test_clouds import metadata, set_dmi

# conftest's TEST_CONFIG: WISP_HTTP_TOTAL_MS=3000, WISP_HTTP_READ_MS=1000.
DEADLINE_S = 3.0
# Start-up, the namespace tools, and the phases that run before the failing request.
MARGIN_S = 2.5

CLOUDS = ["aws", "gcp", "oci", "azure", "openstack"]

# fault -> (the fake's faults, what the run may end with: None for success, else the
# words the error must hold).
FAULTS = {
    "refused": (None, "cannot connect: connection refused"),
    "never_answers": ({"hang_paths": ["*"], "hang_s": 30}, "no complete answer within"),
    "byte_every_100ms": ({"drip_paths": ["*"], "drip_ms": 100}, "no complete answer within"),
    "body_short_of_length": ({"truncate_paths": ["*"]}, "connection closed after 9 of 100 body bytes"),
    "500_503_then_200": ({"fail_first": {"*": 2}, "fail_statuses": [500, 503]}, None),
    "not_http": ({"garbage_paths": ["*"]}, "not an HTTP response"),
    "answer_1_mib": ({"stream_body_paths": ["*"], "stream_body_bytes": 1 << 20}, "response body larger than"),
    "answer_100_mib": ({"stream_body_paths": ["*"], "stream_body_bytes": 100 << 20}, "response body larger than"),
    # The real answer with one more header of 64 KiB: refused where the answer's buffer
    # cannot hold it (AWS's 4 KiB values), read where it can (the JSON documents).
    "header_64_kib": ({"pad_header_paths": ["*"], "pad_header_bytes": 64 * 1024}, "response head larger than"),
    "chunked": ({"chunked_paths": ["*"]}, "Transfer-Encoding not allowed"),
    "keep_alive": ({"keepalive_paths": ["*"], "keepalive_s": 10}, None),
    "redirect": ({"redirect_paths": ["*"]}, "HTTP status 302"),
}
CASES = [(cloud, fault) for cloud in CLOUDS for fault in FAULTS]
# A token that expires in the middle of a run is AWS's alone (IMDSv2).
CASES.append(("aws", "token_expires_mid_run"))
FAULTS["token_expires_mid_run"] = ({"revoke_tokens_after": 2}, None)


def start(imds, cloud, faults):
    return imds(metadata(cloud, faults=faults or {}))


def assert_complete(result, root):
    assert result.rc == 0, result
    assert (root / "var/lib/cloud/.bootstrap-complete").exists()
    assert ED25519 in (root / "home/alpine/.ssh/authorized_keys").read_text()
    assert not leftover_temporaries(root)


@pytest.mark.parametrize("cloud, fault", CASES, ids=[f"{c}-{f}" for c, f in CASES])
def test_fault(run, imds, root, cloud, fault):
    set_dmi(root, cloud)
    if cloud == "azure":
        # Azure's wireserver hears the report; the faults are the metadata service's.
        imds({"mode": "wireserver"}, bind="168.63.129.16")
    faults, expected = FAULTS[fault]
    server = start(imds, cloud, faults) if faults is not None else None
    result = run("bootstrap", root=root)
    assert result.seconds < DEADLINE_S + MARGIN_S, result
    if expected is None or (fault == "header_64_kib" and result.rc == 0):
        assert_complete(result, root)
        statuses = [r["status"] for r in server.requests()]
        if fault == "500_503_then_200":
            assert 500 in statuses and 503 in statuses, statuses
        if fault == "token_expires_mid_run":
            # The 401 was answered with a new token, once.
            assert 401 in statuses and [r["path"] for r in server.requests()].count("/latest/api/token") == 2, statuses
    else:
        assert result.rc == 1, result
        assert expected in result.stderr, result.stderr
        assert not (root / "var/lib/cloud/.bootstrap-complete").exists()
        assert not leftover_temporaries(root)
        # Nothing half-written: user-data is there whole (0600) or not at all.
        saved = root / "var/lib/cloud/user-data"
        assert not saved.exists() or (saved.stat().st_mode & 0o777) == 0o600

    # The fault clears; a rerun finishes the job.
    if server is None:
        start(imds, cloud, None)
    else:
        server.update(faults={})
    assert_complete(run("bootstrap", root=root), root)
