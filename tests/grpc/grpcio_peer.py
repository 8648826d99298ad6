#!/usr/bin/env python3
"""The other side of getcert's gRPC rotation tests, in Python's grpcio (Debian python3-grpcio).

A peer that is not built on getcert nor on gRPC C++'s API: grpcio judges the chains with its
own verification against the CA file it is given, so a rotation that leaves a bad chain on the
wire shows up as a failed call here.

Speaks the Echo service of examples/proto/echo.proto (getcert.examples.Echo/Echo) without
generated code: the two messages are encoded by hand (proto3, string fields only).

Usage:
  grpcio_peer.py client TARGET CA_FILE STOP_FILE
      Calls Echo over and over, alternating a long-lived channel and a new channel (own
      subchannel pool: a new connection and handshake each time), until STOP_FILE exists.
      Prints "ready" after the first successful call, one "fail CODE DETAILS" line per failed
      call, "calls N failures M" after every 10th call and at the end. Exit 0 when no call failed, 1 otherwise.
  grpcio_peer.py server KEY CHAIN CA_FILE STOP_FILE
      Mutual-TLS server on 127.0.0.1 (a port the kernel picks; no race with other tests):
      prints "listening PORT", then serves until STOP_FILE exists (or it is killed). Replies with the
      message and the client certificate's common name, and prints "peer CN" for each call.
"""
import os
import sys
import time
from concurrent import futures

import grpc

SERVICE = "getcert.examples.Echo"
METHOD = "/getcert.examples.Echo/Echo"


def encode_strings(*fields):
    """Proto3 message of string fields 1..n: tag (field << 3 | 2), varint length, bytes."""
    out = b""
    for number, text in enumerate(fields, start=1):
        data = text.encode("utf-8")
        if not data:
            continue  # proto3 leaves empty strings out
        out += bytes([number << 3 | 2])
        length = len(data)
        while length >= 0x80:
            out += bytes([length & 0x7F | 0x80])
            length >>= 7
        out += bytes([length]) + data
    return out


def decode_strings(data):
    """The string fields of a proto3 message as {number: text}; other wire types are refused."""
    fields = {}
    i = 0
    while i < len(data):
        key = data[i]
        i += 1
        if key & 7 != 2:
            raise ValueError("unexpected wire type %d" % (key & 7))
        length = 0
        shift = 0
        while True:
            byte = data[i]
            i += 1
            length |= (byte & 0x7F) << shift
            shift += 7
            if not byte & 0x80:
                break
        fields[key >> 3] = data[i:i + length].decode("utf-8")
        i += length
    return fields


def identity(raw):
    return raw


def run_client(target, ca_file, stop_file):
    with open(ca_file, "rb") as f:
        credentials = grpc.ssl_channel_credentials(root_certificates=f.read())
    options = [("grpc.use_local_subchannel_pool", 1)]
    long_lived = grpc.secure_channel(target, credentials, options=options)
    calls = failures = 0
    ready = False
    while not os.path.exists(stop_file):
        for fresh in (False, True):
            channel = grpc.secure_channel(target, credentials, options=options) if fresh \
                else long_lived
            echo = channel.unary_unary(METHOD, request_serializer=identity,
                                       response_deserializer=identity)
            calls += 1
            try:
                reply = decode_strings(echo(encode_strings("from grpcio"), timeout=10))
                if reply.get(1) != "from grpcio":
                    raise ValueError("echo replied %r" % reply)
                if not ready:
                    print("ready", flush=True)
                    ready = True
            except (grpc.RpcError, ValueError) as error:
                failures += 1
                code = error.code() if isinstance(error, grpc.RpcError) else "BAD_REPLY"
                details = error.details() if isinstance(error, grpc.RpcError) else str(error)
                print("fail %s %s" % (code, details), flush=True)
            finally:
                if fresh:
                    channel.close()
            if calls % 10 == 0:
                print("calls %d failures %d" % (calls, failures), flush=True)
        time.sleep(0.01)
    long_lived.close()
    print("calls %d failures %d" % (calls, failures), flush=True)
    return 0 if failures == 0 else 1


def run_server(key_file, chain_file, ca_file, stop_file):
    with open(key_file, "rb") as f:
        key = f.read()
    with open(chain_file, "rb") as f:
        chain = f.read()
    with open(ca_file, "rb") as f:
        roots = f.read()

    def echo(request, context):
        names = context.auth_context().get("x509_common_name", [])
        common_name = names[0].decode("utf-8") if names else ""
        print("peer %s" % common_name, flush=True)
        return encode_strings(decode_strings(request).get(1, ""), common_name)

    handler = grpc.method_handlers_generic_handler(SERVICE, {
        "Echo": grpc.unary_unary_rpc_method_handler(
            echo, request_deserializer=identity, response_serializer=identity),
    })
    server = grpc.server(futures.ThreadPoolExecutor(max_workers=4))
    server.add_generic_rpc_handlers((handler,))
    credentials = grpc.ssl_server_credentials([(key, chain)], root_certificates=roots,
                                              require_client_auth=True)
    port = server.add_secure_port("127.0.0.1:0", credentials)
    if port == 0:
        print("cannot listen", file=sys.stderr, flush=True)
        return 2
    server.start()
    print("listening %d" % port, flush=True)
    while not os.path.exists(stop_file):
        time.sleep(0.05)
    server.stop(grace=1).wait()
    return 0


def main(argv):
    if len(argv) == 5 and argv[1] == "client":
        return run_client(argv[2], argv[3], argv[4])
    if len(argv) == 6 and argv[1] == "server":
        return run_server(argv[2], argv[3], argv[4], argv[5])
    print(__doc__, file=sys.stderr)
    return 2


if __name__ == "__main__":
    sys.exit(main(sys.argv))
