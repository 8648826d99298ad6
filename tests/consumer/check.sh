#!/usr/bin/env bash
# check.sh BUILD_DIR PKI_DIR: installs BUILD_DIR into a temporary prefix, then builds and runs
# the consumer in this folder against it twice: with find_package(getcert CONFIG) and with
# pkg-config, both as C++17.
set -euo pipefail
build=$1
pki=$2
here=$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)
work=$(mktemp -d)
trap 'rm -rf "$work"' EXIT

cmake --install "$build" --prefix "$work/prefix" >/dev/null
openssl pkcs12 -export -inkey "$pki/rsa.key" -in "$pki/rsa.pem" -certfile "$pki/intermediate.pem" \
  -passout pass:consumer -out "$work/id.p12"
args=("$pki/rsa-chain.pem" "$pki/root.pem" "$work/id.p12")

# Relocatable: move the prefix before using it.
mv "$work/prefix" "$work/moved"

flags=${CONSUMER_CXXFLAGS:-}
cmake -S "$here" -B "$work/cmake-build" -DCMAKE_PREFIX_PATH="$work/moved" \
  -DCMAKE_CXX_FLAGS="$flags" -DCMAKE_EXE_LINKER_FLAGS="$flags" >/dev/null
cmake --build "$work/cmake-build" >/dev/null
"$work/cmake-build/consumer" "${args[@]}"

pc_dir=$(dirname "$(find "$work/moved" -name getcert.pc | head -n 1)")
# shellcheck disable=SC2046
# shellcheck disable=SC2086
g++ -std=c++17 -Wall -Werror $flags -o "$work/pc-consumer" "$here/main.cpp" \
  $(PKG_CONFIG_PATH="$pc_dir" pkg-config --cflags --libs getcert)
"$work/pc-consumer" "${args[@]}"
echo "consumer: find_package and pkg-config builds both work"
