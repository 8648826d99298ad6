#!/usr/bin/env python3
"""An NNTP server for tests, following RFC 3977 (responses, CAPABILITIES, MODE READER) and
RFC 4642 (STARTTLS), that hands the connection to TLS after "382".

Usage: nntp_server.py PORT CHAIN.pem KEY.pem [MODE]
MODE (default "reader"):
  reader       a reading server: greeting 200, CAPABILITIES lists STARTTLS, STARTTLS -> 382
  mode-switch  a mode-switching server (RFC 3977 5.3): in transit mode CAPABILITIES lists
               MODE-READER but not STARTTLS, and STARTTLS is 502; after MODE READER it is a
               reading server
  legacy       predates RFC 3977: CAPABILITIES is 500 (unknown command), STARTTLS -> 382
  no-starttls  CAPABILITIES without STARTTLS; STARTTLS -> 502
  refuse       CAPABILITIES lists STARTTLS, but STARTTLS -> 580 (cannot start TLS)
  unavailable  greeting 400 (service temporarily unavailable), then closes
  stall        greeting 200, then reads and never answers
Serves each connection on its own thread until killed; prints "ready" once listening.
"""
import os
import sys

sys.dont_write_bytecode = True  # importing loopback must not leave __pycache__ in the sources
sys.path.insert(0, os.path.join(os.path.dirname(os.path.abspath(__file__)), "..", "support"))
from loopback import lines, serve_modes  # noqa: E402

GREETING = b"200 news.getcert.test InterNetNews server ready (posting ok)\r\n"
READER_CAPS = [
    "VERSION 2",
    "IMPLEMENTATION getcert test news server",
    "READER",
    "POST",
    "LIST ACTIVE ACTIVE.TIMES DISTRIB.PATS HEADERS NEWSGROUPS OVERVIEW.FMT",
    "OVER",
    "HDR",
    "AUTHINFO USER",
    "STARTTLS",
]
TRANSIT_CAPS = ["VERSION 2", "IMPLEMENTATION getcert test news server", "IHAVE", "MODE-READER"]


def multiline(code_line, items):
    """A multi-line response: the initial line, the items dot-stuffed, then "."."""
    body = "".join(("." + i if i.startswith(".") else i) + "\r\n" for i in items)
    return (code_line + "\r\n" + body + ".\r\n").encode()


def converse(mode, conn):
    """Plays the server's side; returns True when TLS is to start."""
    send = conn.sendall
    if mode == "unavailable":
        send(b"400 news.getcert.test service temporarily unavailable\r\n")
        return False
    send(GREETING)
    reader_mode = mode != "mode-switch"
    for line in lines(conn):
        if mode == "stall":
            continue
        words = line.split()
        command = words[0].upper() if words else ""
        if command == "CAPABILITIES":
            if mode == "legacy":
                send(b"500 What?\r\n")
                continue
            caps = list(READER_CAPS if reader_mode else TRANSIT_CAPS)
            if mode == "no-starttls":
                caps.remove("STARTTLS")
            send(multiline("101 Capability list:", caps))
        elif command == "MODE" and len(words) > 1 and words[1].upper() == "READER":
            reader_mode = True
            send(b"200 Posting allowed\r\n")
        elif command == "STARTTLS":
            if not reader_mode or mode == "no-starttls":
                send(b"502 Command unavailable\r\n")
            elif mode == "refuse":
                send(b"580 Can not initiate TLS negotiation\r\n")
            else:
                send(b"382 Continue with TLS negotiation\r\n")
                return True
        elif command == "QUIT":
            send(b"205 Bye!\r\n")
            return False
        else:
            send(b"500 What?\r\n")
    return False


if __name__ == "__main__":
    serve_modes(converse, "reader")
