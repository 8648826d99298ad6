#!/usr/bin/env python3
"""An IRC server for tests that speaks the IRCv3 tls extension: before registration, STARTTLS
is answered with 670 (RPL_STARTTLS) and the connection goes to TLS, or with 691 (ERR_STARTTLS).
Messages follow RFC 1459/2812 (":prefix COMMAND params :trailing", CR LF).

Usage: irc_server.py PORT CHAIN.pem KEY.pem [MODE]
MODE (default "chatty"):
  plain    answers STARTTLS with 670 at once (what `openssl s_client -starttls irc` expects)
  chatty   like ircds do: NOTICE lines on connect, then after STARTTLS a PING that must be
           answered with the same token (else ERROR and close) before 670
  refuse   NOTICE lines, then 691 (STARTTLS failed)
  unknown  a server without the extension: 421 (unknown command)
  stall    NOTICE lines, then reads and never answers
Serves each connection on its own thread until killed; prints "ready" once listening.
"""
import os
import sys

sys.dont_write_bytecode = True  # importing loopback must not leave __pycache__ in the sources
sys.path.insert(0, os.path.join(os.path.dirname(os.path.abspath(__file__)), "..", "support"))
from loopback import lines, serve_modes  # noqa: E402

SERVER = "irc.getcert.test"
NOTICES = [
    f":{SERVER} NOTICE * :*** Looking up your hostname...",
    f":{SERVER} NOTICE * :*** Checking Ident",
    f":{SERVER} NOTICE * :*** Found your hostname",
]


def command_of(line):
    """The command of a client message (prefix and tags skipped), upper-cased."""
    words = line.split()
    while words and words[0][0] in "@:":
        words.pop(0)
    return (words[0].upper() if words else ""), words[1:]


def converse(mode, conn):
    """Plays the server's side; returns True when TLS is to start."""
    send = lambda text: conn.sendall((text + "\r\n").encode())
    if mode != "plain":
        for notice in NOTICES:
            send(notice)
    reader = lines(conn)
    for line in reader:
        command, params = command_of(line)
        if mode == "stall":
            continue
        if command != "STARTTLS":
            send(f":{SERVER} 451 * {command} :You have not registered")
            continue
        if mode == "refuse":
            send(f":{SERVER} 691 * :STARTTLS failed (Wrong moon phase)")
        elif mode == "unknown":
            send(f":{SERVER} 421 * STARTTLS :Unknown command")
        elif mode == "chatty":
            token = "getcert-4711"
            send(f"PING :{token}")
            send(f":{SERVER} NOTICE * :*** Your client is being checked")
            pong = next(reader, "")
            pong_command, pong_params = command_of(pong)
            if pong_command != "PONG" or not pong_params or pong_params[-1].lstrip(":") != token:
                send(f"ERROR :Closing Link: 127.0.0.1 (Ping timeout: expected PONG {token})")
                return False
            send(f":{SERVER} 670 * :STARTTLS successful, go ahead with TLS handshake")
            return True
        else:
            send(f":{SERVER} 670 * :STARTTLS successful, go ahead with TLS handshake")
            return True
    return False


if __name__ == "__main__":
    serve_modes(converse, "chatty")
