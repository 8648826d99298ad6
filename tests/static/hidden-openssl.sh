#!/usr/bin/env bash
# The static getcert on a system without OpenSSL's files: in a private mount namespace, OpenSSL's
# OPENSSLDIR (openssl.cnf, the default certs link) and its provider module directory are covered
# by empty directories, and /etc/ssl by a tmpfs holding only /etc/ssl/cert.pem, Alpine's trust
# store location, with the test root in it. Then getcert must still:
#   - start, and decrypt PKCS#12 files made with RC2-40, RC2-128, RC4-40 and RC4-128 (legacy
#     provider algorithms) and the public RC2 vectors
#     (tests/vectors/pkcs12);
#   - fetch a chain from a local TLS server and verify it against the system store it found
#     through the search list.
# Usage: hidden-openssl.sh GETCERT TESTCERTS_DIR VECTORS_DIR
set -euo pipefail
getcert="$1"
pki="$2"
vectors="$3"
skip() {
  echo "GETCERT-TEST-SKIPPED: $*"
  exit 77 # ctest: SKIP_RETURN_CODE
}
[[ $(id -u) -eq 0 ]] || skip "a mount namespace needs root"
command -v unshare >/dev/null || skip "unshare (util-linux) is not installed"
command -v openssl >/dev/null || skip "openssl is not installed"
unshare -m true 2>/dev/null || skip "mount namespaces are not available here"

modules=$(openssl version -m | sed 's/^MODULESDIR: "\(.*\)"$/\1/')
openssldir=$(openssl version -d | sed 's/^OPENSSLDIR: "\(.*\)"$/\1/')
work=$(mktemp -d)
server_pid=""
cleanup() {
  [[ -n "$server_pid" ]] && kill "$server_pid" 2>/dev/null
  rm -rf "$work"
}
trap cleanup EXIT
mkdir "$work/empty"

# PKCS#12 files in every legacy scheme, made here while OpenSSL's legacy provider is reachable.
printf 'legacy-pass' >"$work/pass"
for scheme in PBE-SHA1-RC2-40 PBE-SHA1-RC2-128 PBE-SHA1-RC4-40 PBE-SHA1-RC4-128; do
  openssl pkcs12 -export -provider legacy -provider default -certpbe "$scheme" -keypbe "$scheme" \
    -macalg sha1 -in "$pki/ecdsa.pem" -inkey "$pki/ecdsa.key" -certfile "$pki/intermediate.pem" \
    -passout file:"$work/pass" -out "$work/$scheme.p12"
done

# A TLS server on a free loopback port, outside the namespace (the network is shared).
port=$(python3 -c 'import socket; s=socket.socket(); s.bind(("127.0.0.1", 0)); print(s.getsockname()[1])')
openssl s_server -quiet -accept "127.0.0.1:$port" -cert "$pki/ecdsa.pem" -key "$pki/ecdsa.key" \
  -cert_chain "$pki/intermediate.pem" >/dev/null 2>&1 </dev/null &
server_pid=$!
for _ in $(seq 100); do
  (exec 3<>"/dev/tcp/127.0.0.1/$port") 2>/dev/null && break
  sleep 0.05
done

export GETCERT="$getcert" PKI="$pki" VECTORS="$vectors" WORK="$work" PORT="$port"
export MODULES="$modules" OPENSSLDIR="$openssldir"
unshare -m --propagation private bash -euo pipefail -c '
  mount --bind "$WORK/empty" "$MODULES"
  mount --bind "$WORK/empty" "$OPENSSLDIR"
  mount -t tmpfs tmpfs /etc/ssl
  cp "$PKI/root.pem" /etc/ssl/cert.pem
  unset OPENSSL_CONF OPENSSL_MODULES SSL_CERT_FILE SSL_CERT_DIR
  if ls "$MODULES"/*.so >/dev/null 2>&1 || [[ -e /etc/ssl/openssl.cnf || -e "$OPENSSLDIR/openssl.cnf" ]]; then
    echo "FAIL: OpenSSL files are still visible" >&2; exit 1
  fi
  if openssl pkcs12 -provider legacy -in "$WORK/PBE-SHA1-RC2-40.p12" -passin pass:legacy-pass \
       -nokeys >/dev/null 2>&1; then
    echo "FAIL: the legacy provider is still loadable" >&2; exit 1
  fi
  "$GETCERT" --version

  leaf=$(sed -n "/BEGIN/,/END/p" "$PKI/ecdsa.pem")
  for f in "$WORK"/*.p12; do
    out=$("$GETCERT" p12 topem "$f" --password-file "$WORK/pass" --stdout)
    grep -q "BEGIN PRIVATE KEY" <<<"$out" || { echo "FAIL: no key from $f" >&2; exit 1; }
    grep -qF "$(sed -n 2p <<<"$leaf")" <<<"$out" || { echo "FAIL: no leaf from $f" >&2; exit 1; }
    echo "ok: $(basename "$f")"
  done
  for v in pyca-cert-rc2-key-3des.p12:cryptography openssl-v3-certs-RC2.p12:v3-certs \
           "bc-pkcs12-ber-davidhook.p12:hello world"; do
    file=${v%%:*}
    printf "%s" "${v#*:}" >"$WORK/vpass"
    "$GETCERT" p12 info "$VECTORS/$file" --password-file "$WORK/vpass" >/dev/null
    echo "ok: $file"
  done

  json=$("$GETCERT" "localhost:$PORT" -o json --no-fetch-missing)
  python3 - "$json" <<PY
import json, sys
v = json.loads(sys.argv[1])["verification"]
assert v["ok"], v
assert v["trust_store"] == "system (/etc/ssl/cert.pem)", v["trust_store"]
print("ok: fetch verified against", v["trust_store"])
PY
'
echo "OK: the static getcert needs no OpenSSL configuration, modules or Debian trust store"
