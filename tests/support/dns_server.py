#!/usr/bin/env python3
"""A small authoritative DNS server for tests, written from RFC 1035 (section 4: messages).

Usage: dns_server.py PORT MODE
Listens on 127.0.0.1:PORT over UDP and TCP (RFC 1035 4.2.2: a two-byte length before each
message), prints "ready", and serves forever. MODE says how it behaves:
  answer    answers from the zone below
  drop      reads every query and never answers
  junk      answers with the query's ID and question, then an answer record cut short
  slow:MS   answers as `answer` does, MS milliseconds later
  tcpslow:MS  answers at once over UDP, and over TCP (the truncated answers' retry) MS
            milliseconds later
  tcpdrop   answers at once over UDP, and never over TCP
The zone (any other name is NXDOMAIN, RCODE 3):
  a.test        A 127.0.0.1
  both.test     AAAA ::1, A 127.0.0.1
  six.test      AAAA ::1
  alias.test    CNAME alias2.test; alias2.test CNAME a.test (a chain of two)
  empty.test    exists, with no address (NOERROR, no answer)
  many.test     A 127.1.0.1 ... (1,000 loopback addresses, over TCP: the UDP reply is truncated)
  fail.test     SERVFAIL (RCODE 2)
Each query's name and type go to stderr, one line each, so a test can count them.
"""
import socket
import struct
import sys
import threading

sys.dont_write_bytecode = True  # importing loopback must not leave __pycache__ in the sources
from loopback import recv_exactly  # noqa: E402 (after the line above)

A, AAAA, CNAME = 1, 28, 5
IN = 1
NOERROR, SERVFAIL, NXDOMAIN = 0, 2, 3

ZONE = {
    "a.test": [(A, socket.inet_pton(socket.AF_INET, "127.0.0.1"))],
    "both.test": [(AAAA, socket.inet_pton(socket.AF_INET6, "::1")),
                  (A, socket.inet_pton(socket.AF_INET, "127.0.0.1"))],
    "six.test": [(AAAA, socket.inet_pton(socket.AF_INET6, "::1"))],
    "alias.test": [(CNAME, "alias2.test")],
    "alias2.test": [(CNAME, "a.test")],
    "empty.test": [],
    "many.test": [(A, bytes([127, 1, 1 + i // 250, 1 + i % 250])) for i in range(1000)],
}
FAILING = {"fail.test"}


def encode_name(name):
    """A name as labels (RFC 1035 3.1): a length byte before each, a zero byte at the end."""
    out = b""
    for label in name.split("."):
        if label:
            out += bytes([len(label)]) + label.encode("ascii")
    return out + b"\0"


def parse_question(msg):
    """The first question's (name, type, class, end offset); names in queries are never
    compressed (RFC 1035 4.1.4 allows it, resolvers do not send it)."""
    labels, pos = [], 12
    while True:
        length = msg[pos]
        pos += 1
        if length == 0:
            break
        if length & 0xC0:
            raise ValueError("compressed name in a question")
        labels.append(msg[pos:pos + length].decode("ascii", "replace"))
        pos += length
    qtype, qclass = struct.unpack("!HH", msg[pos:pos + 4])
    return ".".join(labels).lower(), qtype, qclass, pos + 4


def record(name, rtype, value, ttl=60):
    """One resource record (RFC 1035 3.2.1), the name written out in full."""
    rdata = encode_name(value) if rtype == CNAME else value
    return encode_name(name) + struct.pack("!HHIH", rtype, IN, ttl, len(rdata)) + rdata


def header(query, rcode, answers):
    """The reply header (RFC 1035 4.1.1): the query's ID, QR and AA set, the query's opcode and
    RD copied, RA set, one question, `answers` answer records."""
    qid, flags = struct.unpack("!HH", query[:4])
    reply_flags = 0x8000 | (flags & 0x7900) | 0x0400 | 0x0080 | rcode
    return struct.pack("!HHHHHH", qid, reply_flags, 1, answers, 0, 0)


def answer(query):
    name, qtype, _, end = parse_question(query)
    question = query[12:end]
    if name in FAILING:
        return header(query, SERVFAIL, 0) + question
    if name not in ZONE:
        return header(query, NXDOMAIN, 0) + question
    records, current, seen = [], name, set()
    while current in ZONE and current not in seen:
        seen.add(current)
        entries = ZONE[current]
        cname = [value for rtype, value in entries if rtype == CNAME]
        if cname and qtype != CNAME:
            records.append(record(current, CNAME, cname[0]))
            current = cname[0]
            continue
        records += [record(current, rtype, value) for rtype, value in entries if rtype == qtype]
        break
    return header(query, NOERROR, len(records)) + question + b"".join(records)


def junk(query):
    """A reply that passes the resolver's first checks (ID, question) and then breaks: it
    promises an answer record whose fixed fields stop after two bytes."""
    _, _, _, end = parse_question(query)
    return header(query, NOERROR, 1) + query[12:end] + b"\xc0\x0c\x00"


def reply_to(mode, query):
    """The reply bytes for one query, or None to stay silent."""
    try:
        name, qtype, _, _ = parse_question(query)
    except (IndexError, ValueError, struct.error):
        return None
    print(f"query {name} {qtype}", file=sys.stderr, flush=True)
    if mode == "drop":
        return None
    if mode == "junk":
        return junk(query)
    return answer(query)


def delay_of(mode, tcp=False):
    if mode.startswith("slow:") or (tcp and mode.startswith("tcpslow:")):
        return int(mode.split(":", 1)[1]) / 1000
    return 0


def serve_udp(sock, mode):
    delay = delay_of(mode)
    while True:
        query, peer = sock.recvfrom(65535)
        reply = reply_to(mode, query)
        if reply is None:
            continue
        if len(reply) > 512:
            # RFC 1035 4.2.1: over UDP at most 512 bytes; TC set, the client asks again by TCP.
            _, _, _, end = parse_question(query)
            qid, flags = struct.unpack("!HH", reply[:4])
            reply = struct.pack("!HHHHHH", qid, flags | 0x0200, 1, 0, 0, 0) + query[12:end]
        if delay:
            threading.Timer(delay, sock.sendto, args=(reply, peer)).start()
        else:
            sock.sendto(reply, peer)


def serve_tcp_client(conn, mode):
    delay = delay_of(mode, tcp=True)
    try:
        while True:
            (length,) = struct.unpack("!H", recv_exactly(conn, 2))
            reply = reply_to(mode, recv_exactly(conn, length))
            if reply is None or mode == "tcpdrop":
                continue
            if delay:
                threading.Event().wait(delay)
            conn.sendall(struct.pack("!H", len(reply)) + reply)
    except (EOFError, OSError):
        pass
    finally:
        conn.close()


def main():
    port, mode = int(sys.argv[1]), sys.argv[2]
    udp = socket.socket(socket.AF_INET, socket.SOCK_DGRAM)
    udp.bind(("127.0.0.1", port))
    tcp = socket.socket()
    tcp.setsockopt(socket.SOL_SOCKET, socket.SO_REUSEADDR, 1)
    tcp.bind(("127.0.0.1", port))
    tcp.listen(64)
    threading.Thread(target=serve_udp, args=(udp, mode), daemon=True).start()
    print("ready", flush=True)
    while True:
        conn, _ = tcp.accept()
        threading.Thread(target=serve_tcp_client, args=(conn, mode), daemon=True).start()


if __name__ == "__main__":
    main()
