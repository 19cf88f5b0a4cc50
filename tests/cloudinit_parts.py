"""How Debian's cloud-init reads user-data, for tests/test_userdata_oracle.py: run with
/usr/bin/python3 (where the cloud-init package lives), it reads a JSON list of base64
documents on standard input and prints, for each, the leaf parts cloud-init's
UserDataProcessor ends with (final Content-Type, decoded payload length) and the
cloud-config its CloudConfigPartHandler merges from them (cloud-config parts merged
by their mergers, JSON patches applied), as a JSON list.

Nothing is fetched: `_do_include` is replaced by one that records the include where it
stands (as a part of type text/x-include-url or text/x-include-once-url, its payload the
URL list), which is what `wisp userdata show` lists. Nothing is written: the paths object
gives no instance directory.
"""

import base64
import json
import logging
import sys

from cloudinit import handlers, user_data, util
from cloudinit.handlers.cloud_config import CloudConfigPartHandler
from cloudinit.settings import PER_ALWAYS


class Paths:
    """Only what UserDataProcessor and CloudConfigPartHandler ask for."""

    def get_ipath_cur(self, name=None):
        return "/nonexistent/wisp-oracle/instance"

    def get_cpath(self, name=None):
        return "/nonexistent/wisp-oracle"

    def get_ipath(self, name=None):
        return None


def payload_bytes(payload):
    if payload is None:
        return b""
    if isinstance(payload, str):
        return payload.encode("utf-8", "surrogateescape")
    return payload


class Recorder(user_data.UserDataProcessor):
    def __init__(self, paths):
        super().__init__(paths)
        self.leaves = []

    def _attach_part(self, outer_msg, part):
        self.leaves.append((part.get_content_type(), util.fully_decoded_payload(part), dict(part)))
        super()._attach_part(outer_msg, part)

    def _do_include(self, content, append_msg):
        # The caller's local `ctype` says which include type this is.
        ctype = sys._getframe(1).f_locals["ctype"]
        self.leaves.append((ctype, content, {}))


def read(document):
    processor = Recorder(Paths())
    processor.process(document)
    handler = CloudConfigPartHandler(Paths())
    handler.handle_part(None, handlers.CONTENT_START, None, None, None, None)
    for ctype, payload, headers in processor.leaves:
        if ctype in ("text/cloud-config", "text/cloud-config-jsonp"):
            handler.handle_part(None, ctype, "part", payload, PER_ALWAYS, headers)
    # A part that loads to nothing is not merged; none merged is no cloud-config.
    merged = handler.cloud_buf if handler.file_names else None
    return {
        "parts": [{"type": ctype, "bytes": len(payload_bytes(payload))} for ctype, payload, _ in processor.leaves],
        "cloud_config": merged,
    }


def main():
    logging.disable(logging.CRITICAL)
    results = []
    for encoded in json.load(sys.stdin):
        try:
            results.append(read(base64.b64decode(encoded)))
        except Exception as e:  # cloud-init refuses the document (ERROR_ON_USER_DATA_FAILURE)
            results.append({"error": f"{type(e).__name__}: {e}"})
    json.dump(results, sys.stdout, default=str)


if __name__ == "__main__":
    main()
