# shellcheck shell=bash
# The offline stage tools/demo and README's runnable recipes play on: a temporary folder, a real
# TLS server (`openssl s_server` serving the generated test PKI's RSA leaf and intermediate on a
# free loopback port) and the files the recipes name. Sourced, never run; one place, so the demo
# and the recipe test (tests/docs/check_recipes.py) cannot drift apart.
#
#   source tools/sandbox.bash
#   sandbox_start BUILD_DIR   # sets getcert, pki, work, port; stops the server and removes
#                             # $work on exit
#   sandbox_files             # writes the recipe files into $work (below)

# sandbox_serve CERT_STEM: an `openssl s_server` on a free loopback port for the test PKI's
# STEM.pem/STEM.key with the intermediate; sets sandbox_port, adds the server to those stopped.
sandbox_serve() {
  sandbox_port=$(python3 -c 'import socket; s=socket.socket(); s.bind(("127.0.0.1", 0)); print(s.getsockname()[1])')
  openssl s_server -accept "127.0.0.1:$sandbox_port" -cert "$pki/$1.pem" \
    -cert_chain "$pki/intermediate.pem" -key "$pki/$1.key" -quiet -www </dev/null >/dev/null 2>&1 &
  sandbox_servers+=("$!")
  local _
  for _ in $(seq 100); do
    (exec 3<>"/dev/tcp/127.0.0.1/$sandbox_port") 2>/dev/null && return 0
    sleep 0.1
  done
  echo "sandbox: openssl s_server did not start on port $sandbox_port" >&2
  return 1
}

sandbox_start() {
  local build=$1
  getcert="$build/cli/getcert"
  pki="$build/testcerts/pki"
  [[ -x "$getcert" && -f "$pki/.complete" ]] || {
    echo "sandbox: no getcert or test PKI in $build (run tools/bootstrap first)" >&2
    return 2
  }
  work=$(mktemp -d)
  sandbox_servers=()
  trap sandbox_stop EXIT
  sandbox_serve rsa || return 1
  port=$sandbox_port
}

sandbox_stop() {
  local pid
  for pid in "${sandbox_servers[@]}"; do kill "$pid" 2>/dev/null || true; done
  [[ -n "${work:-}" ]] && rm -rf "$work"
}

# The files README's recipes use, with the names a reader would have:
#   ca.pem           the test PKI's root (the private CA the server chains to)
#   fullchain.pem    the server's leaf and intermediate
#   key.pem          its private key (0600)
#   bundle.p12       its key and chain as PKCS#12, password in $P12_PASSWORD
#   endpoints.txt    the local server, a second one whose leaf expires in 4 days, and a port
#                    nothing listens on
#   keystore.jks     (only when SANDBOX_JKS=1 and keytool is installed) the same identity in a
#                    Java KeyStore, password in $STORE_PASSWORD
# and exports P12_PASSWORD, P12_BASE64 (base64 of bundle.p12, as a CI secret holds it) and
# STORE_PASSWORD.
sandbox_files() {
  cp "$pki/root.pem" "$work/ca.pem"
  cat "$pki/rsa.pem" "$pki/intermediate.pem" >"$work/fullchain.pem"
  install -m 0600 "$pki/rsa.key" "$work/key.pem"
  export P12_PASSWORD=demo-password STORE_PASSWORD=store-password
  openssl pkcs12 -export -inkey "$pki/rsa.key" -in "$pki/rsa.pem" -certfile "$pki/intermediate.pem" \
    -name demo -passout env:P12_PASSWORD -out "$work/bundle.p12"
  P12_BASE64=$(base64 -w0 "$work/bundle.p12")
  export P12_BASE64
  local closed
  closed=$(python3 -c 'import socket; s=socket.socket(); s.bind(("127.0.0.1", 0)); print(s.getsockname()[1])')
  sandbox_serve expiring || return 1
  printf '# services to watch\nlocalhost:%s\nlocalhost:%s\nlocalhost:%s\n' "$port" "$sandbox_port" "$closed" \
    >"$work/endpoints.txt"
  if [[ "${SANDBOX_JKS:-0}" == 1 ]] && command -v keytool >/dev/null; then
    keytool -importkeystore -noprompt -srckeystore "$work/bundle.p12" -srcstoretype PKCS12 \
      -srcstorepass "$P12_PASSWORD" -destkeystore "$work/keystore.jks" -deststoretype JKS \
      -deststorepass "$STORE_PASSWORD" -destkeypass "$STORE_PASSWORD" >/dev/null 2>&1
  fi
}
