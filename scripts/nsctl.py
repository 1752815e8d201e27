#!/usr/bin/env python3
"""Tiny RocketMQ NameServer query tool for scripts (no dependencies).

  nsctl.py cluster HOST:PORT                 print GET_BROKER_CLUSTER_INFO as JSON
  nsctl.py route HOST:PORT TOPIC             print the route as JSON (exit 17 if none)
  nsctl.py wait-broker HOST:PORT NAME SECS   wait until broker group NAME is listed (exit 1 on timeout)
  nsctl.py wait-gone HOST:PORT NAME SECS     wait until broker group NAME is no longer listed
"""
import json
import re
import socket
import struct
import sys
import time


def call(addr, code, ext=None, timeout=3.0):
    host, port = addr.rsplit(":", 1)
    header = {"code": code, "flag": 0, "language": "JAVA", "opaque": 1, "version": 479}
    if ext is not None:
        header["extFields"] = ext
    raw = json.dumps(header).encode()
    with socket.create_connection((host, int(port)), timeout=timeout) as s:
        s.sendall(struct.pack(">II", 4 + len(raw), len(raw)) + raw)
        data = b""
        while len(data) < 4 or len(data) < 4 + struct.unpack(">I", data[:4])[0]:
            chunk = s.recv(65536)
            if not chunk:
                raise ConnectionError("closed")
            data += chunk
    total, word = struct.unpack(">II", data[:8])
    hlen = word & 0xFFFFFF
    resp = json.loads(data[8:8 + hlen])
    body = data[8 + hlen:4 + total]
    return resp, body


def lenient(body):
    # fastjson writes bare numeric map keys: {0:"a"}
    return json.loads(re.sub(rb'([{,])(-?\d+):', rb'\1"\2":', body))


def cluster(addr):
    resp, body = call(addr, 106)
    return lenient(body) if resp["code"] == 0 else None


def main(argv):
    cmd, addr = argv[1], argv[2]
    if cmd == "cluster":
        print(json.dumps(cluster(addr), sort_keys=True))
        return 0
    if cmd == "route":
        resp, body = call(addr, 105, {"topic": argv[3]})
        if resp["code"] != 0:
            return resp["code"]
        print(json.dumps(lenient(body), sort_keys=True))
        return 0
    if cmd in ("wait-broker", "wait-gone"):
        name, deadline = argv[3], time.time() + float(argv[4])
        while time.time() < deadline:
            try:
                listed = name in (cluster(addr) or {}).get("brokerAddrTable", {})
            except OSError:
                listed = False
            if listed == (cmd == "wait-broker"):
                return 0
            time.sleep(0.2)
        return 1
    print(__doc__, file=sys.stderr)
    return 2


if __name__ == "__main__":
    sys.exit(main(sys.argv))
