"""The listening side shared by the tests' Python servers (connect_proxy.py, starttls_server.py,
tds_server.py, dns_server.py, servers/irc_server.py, servers/nntp_server.py)."""
import socket
import ssl
import sys
import threading


def connections(port):
    """Listens on 127.0.0.1:PORT, prints "ready" (what the C++ side waits for), then yields
    each accepted connection, forever."""
    listener = socket.socket()
    listener.setsockopt(socket.SOL_SOCKET, socket.SO_REUSEADDR, 1)
    listener.bind(("127.0.0.1", port))
    listener.listen(8)
    print("ready", flush=True)
    while True:
        conn, _ = listener.accept()
        yield conn


def serve_threaded(port, handle):
    """Like connections(), but hands each connection to HANDLE on its own thread, so a stalled
    client does not hold up the next one."""
    for conn in connections(port):
        threading.Thread(target=handle, args=(conn,), daemon=True).start()


def server_context(chain, key):
    """A TLS server context presenting CHAIN.pem with KEY.pem."""
    ctx = ssl.SSLContext(ssl.PROTOCOL_TLS_SERVER)
    ctx.load_cert_chain(chain, key)
    return ctx


def recv_exactly(conn, n):
    """The next N bytes CONN sends; EOFError when it closes first."""
    data = b""
    while len(data) < n:
        chunk = conn.recv(n - len(data))
        if not chunk:
            raise EOFError
        data += chunk
    return data


def lines(conn, chunk_size=512):
    """Yields the CR LF (or LF) terminated lines CONN sends, decoded as latin-1, until EOF.
    A chunk_size of 1 reads nothing past the line, so bytes after it stay in the socket."""
    buf = b""
    while True:
        while b"\n" not in buf:
            chunk = conn.recv(chunk_size)
            if not chunk:
                return
            buf += chunk
        line, buf = buf.split(b"\n", 1)
        yield line.rstrip(b"\r").decode("latin-1")


def upgrade_after(conn, ctx, converse, timeout):
    """Runs CONVERSE(conn), the plain-text preamble, and when it returns True goes to TLS and
    waits for the client to finish. Whatever the peer does, CONN is closed at the end."""
    try:
        conn.settimeout(timeout)
        if converse(conn):
            with ctx.wrap_socket(conn, server_side=True) as tls:
                tls.recv(1)  # wait for the client to finish and close
    except (OSError, StopIteration, ssl.SSLError):
        pass
    finally:
        conn.close()


def serve_modes(converse, default_mode, timeout=30):
    """The main of a server run as `SCRIPT PORT CHAIN.pem KEY.pem [MODE]`: each connection, on
    its own thread, gets CONVERSE(mode, conn) and then TLS if that returned True."""
    port, chain, key = int(sys.argv[1]), sys.argv[2], sys.argv[3]
    mode = sys.argv[4] if len(sys.argv) > 4 else default_mode
    ctx = server_context(chain, key)
    speak = lambda conn: converse(mode, conn)
    serve_threaded(port, lambda conn: upgrade_after(conn, ctx, speak, timeout))
