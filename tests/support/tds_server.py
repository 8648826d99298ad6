#!/usr/bin/env python3
"""A SQL Server stand-in for tests, written from the MS-TDS specification: it answers the
client's PRELOGIN (2.2.6.5) with its own PRELOGIN, then runs the TLS handshake with every TLS
record carried inside TDS packets of type 0x12, as SQL Server does in TDS 7.x.

Usage: tds_server.py PORT CHAIN.pem KEY.pem [options]
  --encryption N     the ENCRYPTION value of the answer (default 1, ENCRYPT_ON; 2 is NOT_SUP)
  --tls-max 1.2      highest TLS version (SQL Server before 2022 stops at TLS 1.2)
  --split            answer in small TDS packets (TLS records span packets) sent a few bytes
                     at a time (packet headers span reads)
  --stall prelogin   read the PRELOGIN, never answer
  --stall handshake  answer the PRELOGIN, never answer the ClientHello
  --wrong-type       carry the server's handshake in type 0x04 packets (a framing error)
  --flood-empty      answer the PRELOGIN, then send empty PRELOGIN packets (header only) without
                     end until the client hangs up: legal framing that never carries a TLS byte

Serves connections one after another until killed; prints "ready" once listening. Anything
the client gets wrong (a packet that is not PRELOGIN, a PRELOGIN without ENCRYPT_ON, a flight
that is not one message) is printed to stderr and the connection is dropped, so the client's
handshake fails and the test shows why.
"""
import socket
import ssl
import struct
import sys
import time

sys.dont_write_bytecode = True  # importing loopback must not leave __pycache__ in the sources
from loopback import connections, recv_exactly, server_context  # noqa: E402 (after the line above)

PRELOGIN = 0x12
TABULAR_RESULT = 0x04
EOM = 0x01
PIECES = [3, 5, 11, 64, 1, 7]


class Broken(Exception):
    pass


def drain(conn):
    """Reads what the client sends until it closes."""
    while conn.recv(4096):
        pass


def read_message(conn, expected_type):
    """The payload of one TDS message (packets up to the one marked end-of-message)."""
    payload = b""
    while True:
        ptype, status, length = struct.unpack(">BBH", recv_exactly(conn, 4))
        recv_exactly(conn, 4)  # SPID, packet id, window
        if ptype != expected_type:
            raise Broken(f"client sent packet type {ptype:#04x}, expected {expected_type:#04x}")
        if length < 8:
            raise Broken(f"client sent packet length {length}")
        payload += recv_exactly(conn, length - 8)
        if status & EOM:
            return payload


def send_message(conn, ptype, payload, split):
    room = 37 if split else 4096 - 8
    packets = b""
    chunks = [payload[i:i + room] for i in range(0, len(payload), room)] or [b""]
    for n, chunk in enumerate(chunks, start=1):
        status = EOM if n == len(chunks) else 0
        packets += struct.pack(">BBHHBB", ptype, status, 8 + len(chunk), 0, n % 256, 0) + chunk
    if not split:
        conn.sendall(packets)
        return
    off = 0
    i = 0
    while off < len(packets):
        piece = PIECES[i % len(PIECES)]
        conn.sendall(packets[off:off + piece])
        off += piece
        i += 1
        time.sleep(0.001)


def parse_prelogin(payload):
    options = {}
    pos = 0
    while True:
        if pos >= len(payload):
            raise Broken("PRELOGIN without TERMINATOR")
        token = payload[pos]
        if token == 0xFF:
            return options
        offset, length = struct.unpack(">HH", payload[pos + 1:pos + 5])
        if offset + length > len(payload):
            raise Broken(f"PRELOGIN option {token:#04x} outside the message")
        options[token] = payload[offset:offset + length]
        pos += 5


def prelogin_answer(encryption):
    options = [
        (0x00, bytes([16, 0]) + struct.pack(">H", 1000) + struct.pack("<H", 0)),  # 16.0.1000
        (0x01, bytes([encryption])),
        (0x02, b"\x00"),
        (0x03, b""),
        (0x04, b"\x00"),
    ]
    start = 5 * len(options) + 1
    table = b""
    data = b""
    for token, value in options:
        table += struct.pack(">BHH", token, start + len(data), len(value))
        data += value
    return table + b"\xff" + data


def serve(conn, ctx, args):
    request = parse_prelogin(read_message(conn, PRELOGIN))
    for token in (0x00, 0x01, 0x02, 0x03, 0x04):
        if token not in request:
            raise Broken(f"client PRELOGIN lacks option {token:#04x}")
    if request[0x01] != b"\x01":
        raise Broken(f"client asked for ENCRYPTION {request[0x01]!r}, not ENCRYPT_ON")
    if args["stall"] == "prelogin":
        drain(conn)
        return
    send_message(conn, TABULAR_RESULT, prelogin_answer(args["encryption"]), args["split"])
    if args["flood_empty"]:
        empty = struct.pack(">BBHHBB", PRELOGIN, 0, 8, 0, 1, 0) * 512
        while True:
            conn.sendall(empty)  # ends with an OSError when the client goes
    if args["encryption"] == 2 or args["stall"] == "handshake":
        drain(conn)  # ENCRYPT_NOT_SUP: no TLS; a stall: no answer. Wait for the client to go.
        return
    incoming = ssl.MemoryBIO()
    outgoing = ssl.MemoryBIO()
    tls = ctx.wrap_bio(incoming, outgoing, server_side=True)
    server_type = TABULAR_RESULT if args["wrong_type"] else PRELOGIN
    while True:
        try:
            tls.do_handshake()
            done = True
        except ssl.SSLWantReadError:
            done = False
        flight = outgoing.read()
        if flight:
            send_message(conn, server_type, flight, args["split"])
        if done:
            break
        incoming.write(read_message(conn, PRELOGIN))
    print(f"handshake done: {tls.version()}", file=sys.stderr, flush=True)
    drain(conn)


def main():
    port, chain, key = int(sys.argv[1]), sys.argv[2], sys.argv[3]
    rest = sys.argv[4:]
    args = {"encryption": 1, "split": False, "stall": None, "wrong_type": False, "tls_max": None,
            "flood_empty": False}
    i = 0
    while i < len(rest):
        if rest[i] == "--encryption":
            args["encryption"] = int(rest[i + 1], 0)
            i += 1
        elif rest[i] == "--tls-max":
            args["tls_max"] = rest[i + 1]
            i += 1
        elif rest[i] == "--stall":
            args["stall"] = rest[i + 1]
            i += 1
        elif rest[i] == "--split":
            args["split"] = True
        elif rest[i] == "--wrong-type":
            args["wrong_type"] = True
        elif rest[i] == "--flood-empty":
            args["flood_empty"] = True
        else:
            sys.exit(f"unknown option {rest[i]}")
        i += 1
    ctx = server_context(chain, key)
    if args["tls_max"] == "1.2":
        ctx.maximum_version = ssl.TLSVersion.TLSv1_2
    for conn in connections(port):
        conn.setsockopt(socket.IPPROTO_TCP, socket.TCP_NODELAY, 1)
        try:
            conn.settimeout(20)
            serve(conn, ctx, args)
        except Broken as e:
            print(f"tds_server: {e}", file=sys.stderr, flush=True)
        except (OSError, EOFError, ssl.SSLError) as e:
            print(f"tds_server: connection ended: {e!r}", file=sys.stderr, flush=True)
        finally:
            conn.close()


if __name__ == "__main__":
    main()
