#!/usr/bin/env python3
"""Connects a real gRPC client (grpcio) to a TLS server and says whether it accepted the chain.

Usage: grpc_probe.py ROOTS.pem NAME PORT    (or: grpc_probe.py --check)

The channel trusts ROOTS.pem (grpc.ssl_channel_credentials) and checks the certificate against
NAME (grpc.ssl_target_name_override) while connecting to 127.0.0.1:PORT. It prints "accept"
once the channel is READY, "reject" once it fails; gRPC's own log line on stderr says why.
Exit 0 for a verdict, 2 when grpcio is missing or no verdict came in time. One process per
probe, so that gRPC's log (process-wide) belongs to one case.
"""

import os
import sys
import threading

VERDICT_TIMEOUT = 15  # seconds; a handshake on loopback takes milliseconds


def main():
    # Handshake failures are logged at ERROR: that line is the reason the caller reports.
    os.environ.setdefault("GRPC_VERBOSITY", "ERROR")
    try:
        import grpc  # pylint: disable=import-outside-toplevel
        grpc.secure_channel  # pylint: disable=pointless-statement
    except (ImportError, AttributeError):
        print("grpcio is not installed", file=sys.stderr)
        return 2
    if sys.argv[1:] == ["--check"]:
        return 0
    if len(sys.argv) != 4:
        print("usage: grpc_probe.py ROOTS.pem NAME PORT", file=sys.stderr)
        return 2
    roots, name, port = sys.argv[1:]
    with open(roots, "rb") as f:
        creds = grpc.ssl_channel_credentials(root_certificates=f.read())
    channel = grpc.secure_channel(f"127.0.0.1:{port}", creds,
                                  options=[("grpc.ssl_target_name_override", name)])
    decided = threading.Event()
    seen = []

    def on_state(state):
        seen.append(state)
        if state in (grpc.ChannelConnectivity.READY, grpc.ChannelConnectivity.TRANSIENT_FAILURE):
            decided.set()

    channel.subscribe(on_state, try_to_connect=True)
    decided.wait(VERDICT_TIMEOUT)
    channel.unsubscribe(on_state)
    channel.close()
    # READY comes only after the TLS handshake (certificate and name checks) succeeded and the
    # server's HTTP/2 preface arrived; a rejected certificate ends in TRANSIENT_FAILURE.
    if grpc.ChannelConnectivity.READY in seen:
        print("accept")
        return 0
    if grpc.ChannelConnectivity.TRANSIENT_FAILURE in seen:
        print("reject")
        return 0
    print("channel neither READY nor failed in time", file=sys.stderr)
    return 2


if __name__ == "__main__":
    sys.exit(main())
