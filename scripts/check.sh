#!/usr/bin/env bash
# `npm run lint` and `npm run typecheck` side by side (each is mostly one single-threaded program), each
# one's output printed whole once it ends; fails when either fails.
set -uo pipefail
cd "$(dirname "$0")/.."
out="$(mktemp -d)"
trap 'rm -rf "$out"' EXIT
npm run --silent lint >"$out/lint" 2>&1 &
lint=$!
npm run --silent typecheck >"$out/typecheck" 2>&1 &
typecheck=$!
status=0
wait "$lint" || { status=1; echo "[check] npm run lint failed:"; }
cat "$out/lint"
wait "$typecheck" || { status=1; echo "[check] npm run typecheck failed:"; }
cat "$out/typecheck"
exit "$status"
