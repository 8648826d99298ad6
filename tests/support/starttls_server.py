#!/usr/bin/env python3
"""A tiny STARTTLS server for tests: speaks the plain-text preamble of PROTO, then TLS.

Usage: starttls_server.py PROTO PORT CHAIN.pem KEY.pem [--refuse] [--expect-ehlo NAME]
PROTO is smtp, imap, pop3, ftp or postgres. With --refuse it declines the upgrade. With
--expect-ehlo, an SMTP client that announces another name is answered 501 quoting it.
Serves connections one after another until killed; prints "ready" once listening.
"""
import sys

sys.dont_write_bytecode = True  # importing loopback must not leave __pycache__ in the sources
from loopback import connections, lines, server_context, upgrade_after  # noqa: E402


def preamble(proto, conn, refuse, expect_ehlo=None):
    """Returns True when the client asked for TLS and the server agreed."""
    send = conn.sendall
    if proto == "postgres":
        request = conn.recv(8)
        if request != b"\x00\x00\x00\x08\x04\xd2\x16\x2f":
            return False
        send(b"N" if refuse else b"S")
        return not refuse
    reader = lines(conn, chunk_size=1)  # the TLS ClientHello must stay in the socket
    if proto == "smtp":
        send(b"220-test.example ESMTP getcert-test\r\n220 ready\r\n")
        ehlo = next(reader)
        if expect_ehlo is not None and ehlo != f"EHLO {expect_ehlo}":
            send(f"501 5.5.4 expected EHLO {expect_ehlo}, got: {ehlo}\r\n".encode())
            return False
        send(b"250-test.example\r\n250-PIPELINING\r\n250 STARTTLS\r\n")
        next(reader)  # STARTTLS
        send(b"454 TLS not available\r\n" if refuse else b"220 go ahead\r\n")
    elif proto == "imap":
        send(b"* OK [CAPABILITY IMAP4rev1 STARTTLS] ready\r\n")
        tag = next(reader).split(" ", 1)[0]
        send(f"{tag} BAD no\r\n".encode() if refuse else f"{tag} OK begin TLS\r\n".encode())
    elif proto == "pop3":
        send(b"+OK POP3 ready\r\n")
        next(reader)  # STLS
        send(b"-ERR no\r\n" if refuse else b"+OK begin TLS\r\n")
    elif proto == "ftp":
        send(b"220 FTP ready\r\n")
        next(reader)  # AUTH TLS
        send(b"502 no\r\n" if refuse else b"234 AUTH TLS ok\r\n")
    return not refuse


def main():
    proto, port, chain, key = sys.argv[1], int(sys.argv[2]), sys.argv[3], sys.argv[4]
    refuse = "--refuse" in sys.argv[5:]
    expect_ehlo = None
    if "--expect-ehlo" in sys.argv[5:]:
        expect_ehlo = sys.argv[sys.argv.index("--expect-ehlo") + 1]
    ctx = server_context(chain, key)
    for conn in connections(port):
        upgrade_after(conn, ctx, lambda c: preamble(proto, c, refuse, expect_ehlo), 10)


if __name__ == "__main__":
    main()
