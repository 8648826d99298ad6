#!/usr/bin/env python3
"""pyca/cryptography's verifier (cryptography.x509.verification, 43 and later) as a verifier of
the differential test.

Usage: pyca_verify.py CHAIN.pem ROOTS.pem NAME EPOCH | --check
Prints "accept" or "reject: REASON" and exits 0; exits 2 when it cannot judge (no module).
"""

import datetime
import ipaddress
import sys


def main():
    try:
        from cryptography import x509
        from cryptography.x509 import verification
    except ImportError as e:
        print(f"no cryptography.x509.verification: {e}", file=sys.stderr)
        return 2
    if sys.argv[1:] == ["--check"]:
        return 0
    chain_file, roots_file, name, at = sys.argv[1:5]
    try:
        with open(chain_file, "rb") as f:
            chain = x509.load_pem_x509_certificates(f.read())
        with open(roots_file, "rb") as f:
            roots = x509.load_pem_x509_certificates(f.read())
    except ValueError as e:
        # pyca refuses to load some certificates at all (negative serials, malformed fields).
        print(f"reject: cannot load: {e}")
        return 0
    try:
        subject = x509.IPAddress(ipaddress.ip_address(name))
    except ValueError:
        subject = x509.DNSName(name)
    when = datetime.datetime.fromtimestamp(int(at), datetime.timezone.utc).replace(tzinfo=None)
    try:
        verifier = (verification.PolicyBuilder().store(verification.Store(roots)).time(when)
                    .build_server_verifier(subject))
        verifier.verify(chain[0], chain[1:])
    except Exception as e:  # pylint: disable=broad-except  # every failure is a verdict
        print("reject: " + " ".join(str(e).split())[:300])
        return 0
    print("accept")
    return 0


if __name__ == "__main__":
    sys.exit(main())
