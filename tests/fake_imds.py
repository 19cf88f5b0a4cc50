#!/usr/bin/env python3
"""A metadata service that behaves like the clouds' own, for wisp's tests and demo.

It listens on the real metadata address inside a private network namespace, so the
binary under test talks to 169.254.169.254 with nothing patched. The JSON config names the
cloud (`mode`), the metadata, and faults to inject; it is read again for every request, so
a test can change the instance between two runs. Every request is appended to a JSON-lines
log (method, path, headers, status, time) for the tests to count and inspect.

    fake_imds.py --config CONFIG.json --log REQUESTS.jsonl --ready READY [--bind ADDR] [--port N] [--unix PATH]
"""

import argparse
import base64
import json
import os
import secrets
import socket
import socketserver
import sys
import threading
import time

import yaml

AWS_TTL_HEADER = "x-aws-ec2-metadata-token-ttl-seconds"
AWS_TOKEN_HEADER = "x-aws-ec2-metadata-token"


class Reply(Exception):
    """Ends a request with this status, headers and body."""

    def __init__(self, status, body=b"", headers=()):
        super().__init__(status)
        self.status = status
        self.body = body if isinstance(body, bytes) else body.encode()
        self.headers = list(headers)


REASONS = {200: "OK", 400: "Bad Request", 401: "Unauthorized", 403: "Forbidden",
           404: "Not Found", 405: "Method Not Allowed", 500: "Internal Server Error"}


class Aws:
    """EC2's IMDSv2: a token from a PUT, required by every GET, expiring after its TTL."""

    def __init__(self):
        self.tokens = {}  # token -> expiry (monotonic seconds)
        self.lock = threading.Lock()

    def handle(self, config, method, path, headers, body, client=None):
        if path == "/latest/api/token":
            if method != "PUT":
                raise Reply(405)
            ttl = headers.get(AWS_TTL_HEADER, "")
            if not ttl.isdigit() or not 1 <= int(ttl) <= 21600:
                raise Reply(400, "invalid or missing " + AWS_TTL_HEADER)
            token = config.get("token") or base64.b64encode(secrets.token_bytes(42)).decode()
            lifetime = config.get("token_lifetime_s", int(ttl))
            with self.lock:
                self.tokens[token] = time.monotonic() + lifetime
            raise Reply(200, token, [("X-aws-ec2-metadata-token-ttl-seconds", ttl)])
        if method != "GET":
            raise Reply(405)
        token = headers.get(AWS_TOKEN_HEADER)
        with self.lock:
            # A token that expires in the middle of a run: every token issued so far is
            # dropped once, after this many authenticated requests.
            revoke_after = config.get("faults", {}).get("revoke_tokens_after")
            self.authenticated = getattr(self, "authenticated", 0) + 1
            if revoke_after is not None and self.authenticated == revoke_after + 1:
                self.tokens.clear()
            expiry = self.tokens.get(token)
        if expiry is None or expiry < time.monotonic():
            raise Reply(401)
        values = {
            "/latest/meta-data/instance-id": config.get("instance_id"),
            "/latest/meta-data/hostname": config.get("hostname"),
            "/latest/meta-data/local-hostname": config.get("local_hostname", config.get("hostname")),
            "/latest/meta-data/ami-id": config.get("ami_id", "ami-0123456789abcdef0"),
        }
        keys = config.get("keys", [])
        if keys:
            values["/latest/meta-data/public-keys/"] = "\n".join(
                f"{i}={name}" for i, (name, _) in enumerate(keys))
            for i, (_, key) in enumerate(keys):
                values[f"/latest/meta-data/public-keys/{i}/openssh-key"] = key + "\n"
        # An interface's addresses: {"macs": {"02:..": {"local-ipv4s": [...], ...}}}.
        for mac, fields in config.get("macs", {}).items():
            for key, value in fields.items():
                path_of = f"/latest/meta-data/network/interfaces/macs/{mac}/{key}"
                values[path_of] = "\n".join(value) if isinstance(value, list) else value
        if path in values and values[path] is not None:
            raise Reply(200, values[path])
        if path == "/latest/user-data":
            serve_user_data(config)
        raise Reply(404)


class Gcp:
    """GCE's metadata server: every request needs Metadata-Flavor: Google (else 403)."""

    def handle(self, config, method, path, headers, body, client=None):
        if headers.get("metadata-flavor") != "Google":
            raise Reply(403, "missing Metadata-Flavor: Google")
        flavor = [("Metadata-Flavor", "Google")]
        prefix = "/computeMetadata/v1/"
        if method != "GET" or not path.startswith(prefix):
            raise Reply(404, headers=flavor)
        data = user_data(config)
        if data is not None and config.get("user_data_encoding") == "base64":
            data = config.get("user_data_raw_b64") or base64.b64encode(data)
        values = {
            "instance/id": config.get("instance_id"),
            "instance/hostname": config.get("hostname"),
            "instance/attributes/ssh-keys": config.get("gcp_instance_keys",
                                                       "\n".join(f"{name}:{key}" for name, key in config.get("keys", []))),
            "instance/attributes/sshKeys": config.get("gcp_legacy_keys"),
            "project/attributes/ssh-keys": config.get("gcp_project_keys"),
            "instance/attributes/block-project-ssh-keys": config.get("gcp_block_project_keys"),
            "instance/attributes/user-data": data,
            "instance/attributes/user-data-encoding": config.get("user_data_encoding"),
        }
        value = values.get(path[len(prefix):])
        if value is None:
            raise Reply(404, headers=flavor)
        raise Reply(200, value, flavor)


class Oci:
    """OCI: /opc/v2/instance/ wants Authorization: Bearer Oracle (else 401); v1 does not."""

    def handle(self, config, method, path, headers, body, client=None):
        if path == "/opc/v2/instance/":
            if config.get("oci_v2_disabled"):
                raise Reply(404)
            if headers.get("authorization") != "Bearer Oracle":
                raise Reply(401, "missing Authorization: Bearer Oracle")
        elif path != "/opc/v1/instance/":
            raise Reply(404)
        if "raw_document" in config:
            raise Reply(200, config["raw_document"])
        metadata = {"ssh_authorized_keys": "\n".join(key for _, key in config.get("keys", []))}
        data = user_data(config)
        if data is not None:
            metadata["user_data"] = config.get("user_data_raw_b64") or base64.b64encode(data).decode()
        document = {"availabilityDomain": "Uocm:PHX-AD-1", "displayName": "wisp-test", "hostname": config.get("hostname"),
                    "id": config.get("instance_id"), "metadata": metadata, "region": "phx", "state": "Running"}
        raise Reply(200, json.dumps(document), [("Content-Type", "application/json")])


class Azure:
    """Azure IMDS: needs Metadata: true and an api-version (else 400)."""

    def handle(self, config, method, path, headers, body, client=None):
        if headers.get("metadata") != "true":
            raise Reply(400, '{"error": "Bad request. Required metadata header not specified"}')
        base, _, query = path.partition("?")
        if "api-version=" not in query:
            raise Reply(400, '{"error": "Bad request. api-version was not specified in the request"}')
        if base != "/metadata/instance":
            raise Reply(404)
        if "raw_document" in config:
            raise Reply(200, config["raw_document"])
        data = user_data(config)
        compute = {
            "vmId": config.get("instance_id"), "location": "westeurope", "name": "wisp-test",
            "osProfile": {"adminUsername": "azureuser", "computerName": config.get("hostname"), "disablePasswordAuthentication": "true"},
            "publicKeys": [{"keyData": key + "\r\n", "path": "/home/azureuser/.ssh/authorized_keys"} for _, key in config.get("keys", [])],
            "userData": (config.get("user_data_raw_b64") or base64.b64encode(data).decode()) if data is not None else "",
        }
        raise Reply(200, json.dumps({"compute": compute, "network": {"interface": []}}), [("Content-Type", "application/json")])


class Openstack:
    """OpenStack's metadata service: meta_data.json and user_data under /openstack/latest/."""

    def handle(self, config, method, path, headers, body, client=None):
        if path == "/openstack/latest/meta_data.json":
            document = {"uuid": config.get("instance_id"), "hostname": config.get("hostname"), "name": "wisp-test",
                        "public_keys": {name: key for name, key in config.get("keys", [])}, "launch_index": 0}
            raise Reply(200, json.dumps(document), [("Content-Type", "application/json")])
        if path == "/openstack/latest/user_data":
            serve_user_data(config)
        raise Reply(404)


def get_only(method):
    if method != "GET":
        raise Reply(405)


class Hetzner:
    """Hetzner Cloud: YAML metadata (each key also alone) and raw user-data (empty when none)."""

    def handle(self, config, method, path, headers, body, client):
        get_only(method)
        document = {
            "availability-zone": "fsn1-dc14", "hostname": config.get("hostname"), "instance-id": int(config.get("instance_id")),
            "local-ipv4": "", "public-ipv4": "192.0.2.10", "region": "eu-central",
            "public-keys": [key for _, key in config.get("keys", [])],
            "vendor_data": "#cloud-config\nruncmd:\n- [userdel, -r, -f, hetzner]\n",
            "network-config": {"version": 1, "config": [{
                "type": "physical", "name": "eth0", "mac_address": "96:00:00:1a:2b:3c",
                "subnets": [{"type": "dhcp", "ipv4": True},
                            {"type": "static", "ipv6": True, "address": "2a01:4f8:c17:1234::1/64", "gateway": "fe80::1"}]}]},
        }
        if path == "/hetzner/v1/metadata":
            raise Reply(200, config.get("raw_document") or yaml.safe_dump(document), [("Content-Type", "text/yaml")])
        if path.startswith("/hetzner/v1/metadata/") and path[21:] in document:
            value = document[path[21:]]
            raise Reply(200, value if isinstance(value, str) else yaml.safe_dump(value))
        if path == "/hetzner/v1/userdata":
            raise Reply(200, user_data(config) or b"")
        raise Reply(404)


class DigitalOcean:
    """DigitalOcean: one JSON document at /metadata/v1.json (per-value paths beside it)."""

    def handle(self, config, method, path, headers, body, client):
        get_only(method)
        if path != "/metadata/v1.json":
            raise Reply(404)
        if "raw_document" in config:
            raise Reply(200, config["raw_document"])
        document = {
            "droplet_id": int(config.get("instance_id")), "hostname": config.get("hostname"), "region": "ams3",
            "public_keys": [key for _, key in config.get("keys", [])], "vendor_data": "#cloud-config\n",
            "interfaces": {"public": [{"ipv4": {"ip_address": "203.0.113.7", "netmask": "255.255.240.0", "gateway": "203.0.113.1"},
                                       "ipv6": {"ip_address": "2A03:B0C0:0002:00D0:0000:0000:1234:1001", "cidr": 64,
                                                "gateway": "2A03:B0C0:0002:00D0:0000:0000:0000:0001"},
                                       "anchor_ipv4": {"ip_address": "10.18.0.5", "netmask": "255.255.0.0", "gateway": "10.18.0.1"},
                                       "mac": "de:ad:be:ef:00:01", "type": "public"}]},
            "dns": {"nameservers": ["67.207.67.2", "67.207.67.3"]}, "floating_ip": {"ipv4": {"active": False}},
        }
        data = user_data(config)
        if data is not None:
            document["user_data"] = data.decode()
        raise Reply(200, json.dumps(document), [("Content-Type", "application/json")])


class Scaleway:
    """Scaleway at 169.254.42.42: /conf (shell text, or JSON with ?format=json), and user-data
    only to a privileged source port (403 otherwise), 404 when there is none."""

    def handle(self, config, method, path, headers, body, client):
        get_only(method)
        keys = config.get("keys", [])
        if path == "/conf?format=json":
            document = {
                "id": config.get("instance_id"), "name": config.get("hostname"), "hostname": config.get("hostname"),
                "commercial_type": "DEV1-S", "tags": [], "private_ip": None,
                "ssh_public_keys": [{"key": key, "fingerprint": f"256 MD5:00 {name}"} for name, key in keys],
                "public_ip": {"address": "51.15.1.2", "dynamic": False, "id": "ip-1"},
                "ipv6": {"address": "2001:bc8:1::1", "gateway": "2001:bc8:1::", "netmask": "64"},
                "location": {"zone_id": "fr-par-1"},
            }
            raise Reply(200, json.dumps(document), [("Content-Type", "application/json")])
        if path == "/conf":
            lines = [f"ID={config.get('instance_id')}", f"HOSTNAME={config.get('hostname')}"]
            lines += [f"SSH_PUBLIC_KEYS_{i}_KEY='{key}'" for i, (_, key) in enumerate(keys)]
            raise Reply(200, "\n".join(lines) + "\n")
        if path == "/user_data/cloud-init":
            if client[1] >= 1024:
                raise Reply(403, '{"type": "forbidden", "message": "source port must be privileged"}')
            serve_user_data(config)
        raise Reply(404)


class Vultr:
    """Vultr: /v1.json; cloud-init's form (instance-v2-id, user-data, vendor-data) only with
    Metadata-Token: cloudinit, the older form without it."""

    def handle(self, config, method, path, headers, body, client):
        get_only(method)
        if path != "/v1.json":
            raise Reply(404)
        document = {
            "hostname": config.get("hostname"), "instanceid": "41309451", "region": {"regioncode": "EWR"},
            "public-keys": [key for _, key in config.get("keys", [])],
            "interfaces": [{"mac": "56:00:04:1c:47:2e", "network-type": "public",
                            "ipv4": {"address": "203.0.113.5", "gateway": "203.0.113.1", "netmask": "255.255.254.0"},
                            "ipv6": {"network": "2001:19f0:5:1::", "prefix": "64"}}],
        }
        if headers.get("metadata-token") == "cloudinit":
            data = user_data(config)
            document.update({"instance-v2-id": config.get("instance_id"), "vendor-data": [],
                             "user-data": data.decode() if data is not None else ""})
        raise Reply(200, json.dumps(document), [("Content-Type", "application/json")])


class Incus:
    """Incus's guest API on a Unix socket: /1.0, /1.0/meta-data and /1.0/config/<key>."""

    def handle(self, config, method, path, headers, body, client):
        get_only(method)
        if path == "/1.0":
            raise Reply(200, json.dumps({"api_version": "1.0", "instance_type": "container", "location": "none", "state": "Started"}),
                        [("Content-Type", "application/json")])
        if path == "/1.0/meta-data":
            raise Reply(200, f"#cloud-config\ninstance-id: {config.get('instance_id')}\nlocal-hostname: {config.get('hostname')}\n")
        user_data_key = "user.user-data" if config.get("incus_legacy_user_data") else "cloud-init.user-data"
        values = {user_data_key: user_data(config), "cloud-init.network-config": config.get("network_config")}
        if path.startswith("/1.0/config/") and values.get(path[12:]) is not None:
            raise Reply(200, values[path[12:]])
        raise Reply(404, json.dumps({"type": "error", "error": "not found", "error_code": 404}))


class Wireserver:
    """Azure's wireserver: the JSON health report, and the goal-state protocol."""

    def handle(self, config, method, path, headers, body, client=None):
        if path == "/provisioning/health" and method == "POST":
            try:
                state = json.loads(body).get("state")
            except ValueError:
                state = None
            if state not in ("Ready", "NotReady"):
                raise Reply(400, "not a health report")
            raise Reply(config.get("health_status", 200))
        if path == "/machine/?comp=goalstate" and method == "GET":
            if headers.get("x-ms-version") != "2012-11-30":
                raise Reply(400)
            raise Reply(200, "<?xml version=\"1.0\"?><GoalState><Incarnation>7</Incarnation><Container><ContainerId>c-42</ContainerId>"
                             "<RoleInstanceList><RoleInstance><InstanceId>role_1.0</InstanceId></RoleInstance></RoleInstanceList></Container></GoalState>")
        if path == "/machine?comp=health" and method == "POST":
            raise Reply(200)
        raise Reply(404)


def serve_user_data(config):
    """User-data as served raw: 404 when there is none."""
    data = user_data(config)
    raise Reply(404) if data is None else Reply(200, data)


def user_data(config):
    if config.get("user_data_b64") is not None:
        return base64.b64decode(config["user_data_b64"])
    if config.get("user_data") is not None:
        return config["user_data"].encode()
    return None


MODES = {"aws": Aws, "gcp": Gcp, "oci": Oci, "azure": Azure, "openstack": Openstack, "wireserver": Wireserver,
         "hetzner": Hetzner, "digitalocean": DigitalOcean, "scaleway": Scaleway, "incus": Incus, "vultr": Vultr}


class Server(socketserver.ThreadingTCPServer):
    daemon_threads = True
    allow_reuse_address = True
    # wisp opens a connection per request, all at once: the default backlog of 5 would
    # drop the rest and cost a SYN retransmission (a second) each.
    request_queue_size = 64


class UnixServer(socketserver.ThreadingUnixStreamServer):
    daemon_threads = True
    request_queue_size = 64


class Handler(socketserver.StreamRequestHandler):
    def handle(self):
        state = self.server.state
        try:
            head, body = self.read_request()
        except (ValueError, OSError):
            return
        if head is None:
            return
        method, path, headers = head
        config = state.config()
        faults = config.get("faults", {})
        state.count(path)
        client = self.client_address if isinstance(self.client_address, tuple) else ("unix", 0)
        entry = {"method": method, "path": path, "headers": headers, "time": time.time(), "client_port": client[1]}
        if body:
            entry["body"] = body.decode("utf-8", "replace")
        delay_ms = faults.get("delay_ms", 0)
        if delay_ms:
            time.sleep(delay_ms / 1000)
        try:
            self.inject(faults, path, state)
            state.mode.handle(config, method, path, headers, body, client)
            raise Reply(500, "handler returned no reply")
        except Reply as reply:
            entry["status"] = reply.status
            state.log(entry)
            if self.matches(faults, "pad_header_paths", path):
                reply.headers = list(reply.headers) + [("X-Padding", "a" * faults.get("pad_header_bytes", 65536))]
            if self.matches(faults, "drip_paths", path):
                self.drip(reply, faults.get("drip_ms", 100))
            elif self.matches(faults, "chunked_paths", path):
                self.send_chunked(reply)
            elif self.matches(faults, "keepalive_paths", path):
                self.send_keepalive(reply, faults.get("keepalive_s", 10))
            else:
                self.send(reply)
        except Broken as broken:
            entry["status"] = broken.what
            state.log(entry)

    def read_request(self):
        lines = []
        while True:
            line = self.rfile.readline(8192)
            if not line:
                return None, b""
            if line in (b"\r\n", b"\n"):
                break
            lines.append(line.decode("latin-1").rstrip("\r\n"))
        method, target, _version = lines[0].split(" ", 2)
        headers = {}
        for line in lines[1:]:
            name, _, value = line.partition(":")
            headers[name.strip().lower()] = value.strip()
        length = int(headers.get("content-length", "0") or 0)
        body = self.rfile.read(length) if length else b""
        return (method, target, headers), body

    @staticmethod
    def matches(faults, name, path):
        listed = faults.get(name, [])
        return "*" in listed or path in listed

    def inject(self, faults, path, state):
        """The faults the config asks for on this path ("*" matches every path)."""
        def applies(name):
            return self.matches(faults, name, path)

        fail_first = faults.get("fail_first", {})
        limit = fail_first.get(path, fail_first.get("*"))
        if limit is not None and state.seen(path) <= limit:
            # `fail_statuses` cycles, e.g. [500, 503]: a 500, then a 503, then...
            statuses = faults.get("fail_statuses", [500])
            raise Reply(statuses[(state.seen(path) - 1) % len(statuses)], "injected failure")
        if applies("redirect_paths"):
            raise Reply(302, "", [("Location", "http://169.254.169.254/moved" + path)])
        if applies("hang_paths"):
            time.sleep(faults.get("hang_s", 60))
            raise Broken("hang")
        if applies("close_paths"):
            raise Broken("closed")
        if applies("garbage_paths"):
            self.wfile.write(b"\x00\x17garbage that is not HTTP\r\n\r\n")
            raise Broken("garbage")
        if applies("truncate_paths"):
            self.wfile.write(b"HTTP/1.0 200 OK\r\nContent-Length: 100\r\n\r\nonly part")
            raise Broken("truncated")
        if applies("huge_header_paths"):
            size = faults.get("huge_header_bytes", 70000)
            self.wfile.write(b"HTTP/1.0 200 OK\r\nX-Padding: " + b"a" * size + b"\r\n\r\nbody")
            raise Broken("huge-header")
        if applies("huge_body_paths"):
            size = faults.get("huge_body_bytes", 1 << 20)
            raise Reply(200, b"x" * size)
        if applies("stream_body_paths"):
            # Sent in pieces, never held whole: 100 MiB costs the fake nothing.
            size = faults.get("stream_body_bytes", 100 << 20)
            self.wfile.write(f"HTTP/1.0 200 OK\r\nContent-Length: {size}\r\n\r\n".encode())
            chunk = b"x" * 65536
            try:
                for offset in range(0, size, len(chunk)):
                    self.wfile.write(chunk[:size - offset])
            except OSError:
                pass
            raise Broken("streamed")

    def head_lines(self, reply, version="HTTP/1.0"):
        return [f"{version} {reply.status} {REASONS.get(reply.status, 'Status')}", "Content-Type: text/plain"] + \
            [f"{name}: {value}" for name, value in reply.headers]

    def drip(self, reply, every_ms):
        """The whole answer, one byte every `every_ms`."""
        head = self.head_lines(reply) + [f"Content-Length: {len(reply.body)}"]
        data = ("\r\n".join(head) + "\r\n\r\n").encode() + reply.body
        try:
            for i in range(len(data)):
                self.wfile.write(data[i:i + 1])
                self.wfile.flush()
                time.sleep(every_ms / 1000)
        except OSError:
            pass

    def send_chunked(self, reply):
        """HTTP/1.1 chunked transfer coding, which a server must not send a 1.0 client."""
        head = self.head_lines(reply, "HTTP/1.1") + ["Transfer-Encoding: chunked"]
        body = reply.body
        chunks = b"".join(f"{len(body[i:i + 7]):x}\r\n".encode() + body[i:i + 7] + b"\r\n" for i in range(0, len(body), 7))
        try:
            self.wfile.write(("\r\n".join(head) + "\r\n\r\n").encode() + chunks + b"0\r\n\r\n")
        except OSError:
            pass

    def send_keepalive(self, reply, hold_s):
        """An HTTP/1.1 answer with a length that keeps the connection open afterwards: the
        client must finish at the length, not wait for the close."""
        head = self.head_lines(reply, "HTTP/1.1") + [f"Content-Length: {len(reply.body)}", "Connection: keep-alive"]
        try:
            self.wfile.write(("\r\n".join(head) + "\r\n\r\n").encode() + reply.body)
            self.wfile.flush()
            self.request.settimeout(hold_s)
            self.request.recv(1)  # until the client closes, or hold_s
        except OSError:
            pass

    def send(self, reply):
        head = [f"HTTP/1.0 {reply.status} {REASONS.get(reply.status, 'Status')}",
                "Content-Type: text/plain", f"Content-Length: {len(reply.body)}",
                "Connection: close"]
        head += [f"{name}: {value}" for name, value in reply.headers]
        try:
            self.wfile.write(("\r\n".join(head) + "\r\n\r\n").encode() + reply.body)
        except OSError:
            pass


class Broken(Exception):
    """The connection was deliberately left without a proper reply."""

    def __init__(self, what):
        super().__init__(what)
        self.what = what


class State:
    def __init__(self, config_path, log_path, mode):
        self.config_path = config_path
        self.log_path = log_path
        self.mode = mode
        self.lock = threading.Lock()
        self.counts = {}

    def config(self):
        with open(self.config_path) as f:
            return json.load(f)

    def count(self, path):
        with self.lock:
            self.counts[path] = self.counts.get(path, 0) + 1

    def seen(self, path):
        with self.lock:
            return self.counts.get(path, 0)

    def log(self, entry):
        with self.lock, open(self.log_path, "a") as f:
            f.write(json.dumps(entry) + "\n")


def main():
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--config", required=True)
    parser.add_argument("--log", required=True)
    parser.add_argument("--ready", required=True, help="file created once listening")
    parser.add_argument("--bind", default="169.254.169.254")
    parser.add_argument("--port", type=int, default=80)
    parser.add_argument("--unix", help="listen on this Unix socket instead")
    args = parser.parse_args()
    with open(args.config) as f:
        mode = json.load(f).get("mode", "aws")
    if ":" in args.bind:
        Server.address_family = socket.AF_INET6  # AWS's fd00:ec2::254
    server = UnixServer(args.unix, Handler) if args.unix else Server((args.bind, args.port), Handler)
    server.state = State(args.config, args.log, MODES[mode]())
    with open(args.ready, "w") as f:
        f.write(f"{os.getpid()}\n")
    try:
        server.serve_forever(poll_interval=0.05)
    except KeyboardInterrupt:
        pass


if __name__ == "__main__":
    sys.exit(main())
