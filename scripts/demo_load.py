#!/usr/bin/env python3
"""A small, realistic load for a NameServer: brokers of two clusters register and stay registered,
and clients ask for routes at a varying pace. Used by scripts/observe.sh (Prometheus) and
scripts/status-page.sh (the status page in a browser). No dependencies.

  demo_load.py HOST:PORT SECONDS [--rate N] [--period S]

Registers 6 broker instances (TradeCluster: broker-a and broker-b, each a master and a slave;
LogCluster: broker-c and broker-d, masters), each on its own connection, re-registering every
--period seconds (default 10). Route queries go out at about --rate per second (default 150,
swinging between half and one and a half times that over a minute), about 1 in 20 for a topic
nobody serves. Prints one line when the brokers are registered, then one summary line at the end;
exits 1 if a registration or a route query for a served topic fails.
"""
import argparse
import json
import math
import socket
import struct
import sys
import time
import zlib

REGISTER_BROKER = 103
GET_ROUTEINFO_BY_TOPIC = 105
SUCCESS, TOPIC_NOT_EXIST = 0, 17

# (cluster, group, id, address, topics)
BROKERS = [
    ("TradeCluster", "broker-a", 0, "10.0.1.11:10911", ["OrderCreated", "OrderPaid", "PaymentRefund", "InventoryReserved"]),
    ("TradeCluster", "broker-a", 1, "10.0.1.12:10911", ["OrderCreated", "OrderPaid", "PaymentRefund", "InventoryReserved"]),
    ("TradeCluster", "broker-b", 0, "10.0.1.21:10911", ["OrderCreated", "OrderPaid", "ShipmentDispatched"]),
    ("TradeCluster", "broker-b", 1, "10.0.1.22:10911", ["OrderCreated", "OrderPaid", "ShipmentDispatched"]),
    ("LogCluster", "broker-c", 0, "10.0.2.11:10911", ["AccessLog", "AuditTrail", "ClickStream"]),
    ("LogCluster", "broker-d", 0, "10.0.2.21:10911", ["AccessLog", "ClickStream", "SearchQuery"]),
]
QUEUES = {"OrderCreated": 16, "OrderPaid": 8, "AccessLog": 32, "ClickStream": 16}


class Conn:
    """One remoting connection: JSON headers, requests answered in order."""

    def __init__(self, addr):
        host, port = addr.rsplit(":", 1)
        self.sock = socket.create_connection((host, int(port)), timeout=5)
        self.buf = b""
        self.opaque = 0

    def call(self, code, ext, body=b""):
        self.opaque += 1
        header = json.dumps({"code": code, "flag": 0, "language": "JAVA", "opaque": self.opaque,
                             "serializeTypeCurrentRPC": "JSON", "version": 479, "extFields": ext}).encode()
        self.sock.sendall(struct.pack(">II", 4 + len(header) + len(body), len(header)) + header + body)
        while True:
            if len(self.buf) >= 4:
                total = struct.unpack(">I", self.buf[:4])[0]
                if len(self.buf) >= 4 + total:
                    frame, self.buf = self.buf[4:4 + total], self.buf[4 + total:]
                    hlen = struct.unpack(">I", frame[:4])[0] & 0xFFFFFF
                    resp = json.loads(frame[4:4 + hlen])
                    if resp.get("opaque") == self.opaque:
                        return resp["code"]
                    continue
            chunk = self.sock.recv(65536)
            if not chunk:
                raise ConnectionError("connection closed by the name server")
            self.buf += chunk


def register(conn, broker, version):
    cluster, group, broker_id, addr, topics = broker
    table = {t: {"topicName": t, "readQueueNums": QUEUES.get(t, 8), "writeQueueNums": QUEUES.get(t, 8),
                 "perm": 6, "topicFilterType": "SINGLE_TAG", "topicSysFlag": 0, "order": False, "attributes": {}}
             for t in topics}
    body = json.dumps({"topicConfigSerializeWrapper": {
        "dataVersion": {"counter": version, "stateVersion": 0, "timestamp": 1700000000000 + version},
        "topicConfigTable": table}, "filterServerList": []}).encode()
    ext = {"brokerName": group, "brokerAddr": addr, "clusterName": cluster,
           "haServerAddr": addr.replace(":10911", ":10912"), "brokerId": str(broker_id),
           "enableActingMaster": "false", "compressed": "false", "bodyCrc32": str(zlib.crc32(body) & 0x7FFFFFFF)}
    return conn.call(REGISTER_BROKER, ext, body)


def main():
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("addr")
    parser.add_argument("seconds", type=float)
    parser.add_argument("--rate", type=float, default=150.0)
    parser.add_argument("--period", type=float, default=10.0)
    args = parser.parse_args()

    brokers = [(b, Conn(args.addr)) for b in BROKERS]
    for broker, conn in brokers:
        if register(conn, broker, 1) != SUCCESS:
            print(f"registration of {broker[1]}/{broker[2]} failed", file=sys.stderr)
            return 1
    print(f"registered {len(brokers)} brokers in 2 clusters", flush=True)

    served = sorted({t for b in BROKERS for t in b[4]})
    client = Conn(args.addr)
    begin = time.monotonic()
    next_register = begin + args.period
    sent = found = missing = failed = 0
    while (now := time.monotonic()) < begin + args.seconds:
        if now >= next_register:
            for broker, conn in brokers:
                if register(conn, broker, 1) != SUCCESS:
                    failed += 1
            next_register += args.period
        # The pace swings over a minute, so a chart of it is not a flat line.
        rate = args.rate * (1 + 0.5 * math.sin(2 * math.pi * (now - begin) / 60))
        topic = "NoSuchTopic" if sent % 20 == 19 else served[sent % len(served)]
        code = client.call(GET_ROUTEINFO_BY_TOPIC, {"topic": topic})
        sent += 1
        if code == SUCCESS:
            found += 1
        elif code == TOPIC_NOT_EXIST and topic == "NoSuchTopic":
            missing += 1
        else:
            failed += 1
        time.sleep(max(0.0, 1 / rate - (time.monotonic() - now)))
    print(f"route queries: {sent} sent, {found} found, {missing} not found as expected, {failed} failed", flush=True)
    return 1 if failed else 0


if __name__ == "__main__":
    sys.exit(main())
