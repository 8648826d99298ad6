#!/usr/bin/env bash
# The public PKCS#12 vectors are evidence for "reads any real-world PKCS#12": a vector that was
# changed, dropped or added without its checksum fails here, loudly, before any decoder test
# can quietly pass on different bytes.
# Usage: check.sh VECTORS_DIR
set -euo pipefail
dir="$1"
cd "$dir"
sums=SHA256SUMS
[[ -s $sums ]] || { echo "FAIL: $dir/$sums is missing or empty" >&2; exit 1; }

# Every listed file exists and has the committed hash.
if ! sha256sum --check --strict --quiet "$sums"; then
  echo "FAIL: a vector in $dir differs from $sums (see the lines above)" >&2
  exit 1
fi

# Every data file in the folder is listed (only the documentation files are not).
status=0
for f in *; do
  case "$f" in SHA256SUMS | SOURCES.md | MANIFEST.tsv | OPENSSL-INFO.txt) continue ;; esac
  if ! grep -q "  $f\$" "$sums"; then
    echo "FAIL: $f is not listed in $sums" >&2
    status=1
  fi
done

# Every vector the manifest describes is a listed file.
while IFS=$'\t' read -r file _; do
  [[ $file == file ]] && continue
  if ! grep -q "  $file\$" "$sums"; then
    echo "FAIL: MANIFEST.tsv names $file, which $sums does not list" >&2
    status=1
  fi
done <MANIFEST.tsv

files=$(wc -l <"$sums")
rows=$(($(wc -l <MANIFEST.tsv) - 1))
((status == 0)) && echo "ok: $files files match $sums; MANIFEST.tsv describes $rows vectors"
exit "$status"
