#!/usr/bin/env bash
# The static getcert has no `serve` (Debian ships no libsystemd.a): it must say so in one line
# on stderr, print nothing on stdout, and exit 12 (README "Exit codes").
set -u
getcert="$1"
out="$("$getcert" serve --listen 127.0.0.1:0 2>/dev/null)"
err="$("$getcert" serve --listen 127.0.0.1:0 2>&1 >/dev/null)"
"$getcert" serve --listen 127.0.0.1:0 >/dev/null 2>&1
rc=$?
echo "exit $rc; stderr: $err"
[[ $rc -eq 12 ]] || { echo "expected exit 12"; exit 1; }
[[ -z "$out" ]] || { echo "expected nothing on stdout"; exit 1; }
[[ $(printf '%s\n' "$err" | wc -l) -eq 1 ]] || { echo "expected one line"; exit 1; }
[[ "$err" == *"built without 'serve'"* ]] || { echo "expected the reason"; exit 1; }
