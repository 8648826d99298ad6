"""The listening side shared by the tests' Python servers (connect_proxy.py, starttls_server.py)."""
import socket


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
