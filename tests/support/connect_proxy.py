#!/usr/bin/env python3
"""A tiny HTTP CONNECT proxy for tests.

Usage: connect_proxy.py PORT LOG [--deny STATUS]
Prints "ready" once listening on 127.0.0.1:PORT. For each client it reads the request line and
headers, appends them to LOG (one request per block, blank-line separated), and either answers
STATUS (e.g. "403 Forbidden", "407 Proxy Authentication Required") or connects to the target
and relays bytes both ways until either side closes.
"""
import socket
import sys
import threading

sys.dont_write_bytecode = True  # importing loopback must not leave __pycache__ in the sources
from loopback import serve_threaded  # noqa: E402 (after the line above)


def relay(a, b):
    try:
        while True:
            data = a.recv(65536)
            if not data:
                break
            b.sendall(data)
    except OSError:
        pass
    finally:
        for s in (a, b):
            try:
                s.shutdown(socket.SHUT_RDWR)
            except OSError:
                pass


def handle(conn, log, deny):
    head = b""
    while b"\r\n\r\n" not in head:
        chunk = conn.recv(1)
        if not chunk:
            conn.close()
            return
        head += chunk
    with open(log, "ab") as f:
        f.write(head)
    request_line = head.split(b"\r\n", 1)[0].decode()
    method, target, _ = request_line.split(" ", 2)
    if deny or method != "CONNECT":
        conn.sendall(f"HTTP/1.1 {deny or '405 Method Not Allowed'}\r\nContent-Length: 0\r\n\r\n".encode())
        conn.close()
        return
    host, port = target.rsplit(":", 1)
    upstream = socket.create_connection((host.strip("[]"), int(port)), timeout=10)
    conn.sendall(b"HTTP/1.1 200 Connection established\r\nProxy-Agent: getcert-test\r\n\r\n")
    threading.Thread(target=relay, args=(upstream, conn), daemon=True).start()
    relay(conn, upstream)


def main():
    port, log = int(sys.argv[1]), sys.argv[2]
    deny = sys.argv[4] if len(sys.argv) > 4 and sys.argv[3] == "--deny" else None
    serve_threaded(port, lambda conn: handle(conn, log, deny))


if __name__ == "__main__":
    main()
