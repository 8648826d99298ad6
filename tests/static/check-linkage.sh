#!/usr/bin/env bash
# Fails unless GETCERT's only dynamic dependencies are glibc's: libc, libm and the dynamic
# loader (libpthread and libdl are part of libc since glibc 2.34). Checks both what the ELF file
# asks for (DT_NEEDED) and what the loader resolves (ldd), and that OpenSSL, libidn2, c-ares and
# libstdc++ are inside.
set -euo pipefail
bin="$1"
allowed='^(libc\.so\.6|libm\.so\.6|ld-linux-x86-64\.so\.2)$'

needed=$(readelf -d "$bin" | sed -n 's/.*(NEEDED).*\[\(.*\)\]/\1/p')
echo "DT_NEEDED:"; echo "$needed" | sed 's/^/  /'
bad=$(echo "$needed" | grep -Ev "$allowed" || true)
if [[ -n "$bad" ]]; then
  echo "FAIL: $bin needs shared libraries other than glibc's: $bad" >&2
  exit 1
fi

echo "ldd:"; ldd "$bin" | sed 's/^/  /'
resolved=$(ldd "$bin" | awk '{print $1}' | sed 's|.*/||' | grep -Ev '^linux-vdso\.so\.1$' || true)
bad=$(echo "$resolved" | grep -Ev "$allowed" || true)
if [[ -n "$bad" ]]; then
  echo "FAIL: ldd resolves more than glibc: $bad" >&2
  exit 1
fi

# The libraries that must be linked in, each by a function it defines (the build tree's binary
# keeps its symbol table; tools/release strips the copy it ships).
symbols=$(nm "$bin" 2>/dev/null || true)
for sym in OPENSSL_init_crypto SSL_CTX_new idn2_lookup_u8 ares_getaddrinfo; do
  if ! grep -q " T $sym\$" <<<"$symbols"; then
    echo "FAIL: $sym is not defined inside $bin" >&2
    exit 1
  fi
done
if grep -q 'GLIBCXX\|CXXABI' <<<"$(nm -D "$bin" 2>/dev/null || true)"; then
  echo "FAIL: $bin imports libstdc++ symbols" >&2
  exit 1
fi
"$bin" --version
echo "OK: only glibc is dynamic; OpenSSL, libidn2, c-ares and libstdc++ are linked in"
