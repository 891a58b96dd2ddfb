#!/usr/bin/env bash
# What `npm test` needs from the machine beyond node_modules, checked first so that a missing program is
# named before a test fails on it. As root with apt-get (our users' and CI's Debian machines) it installs
# what is missing, one line per package; otherwise it names the packages and the command, and stops.
# `npm test` (as `npm run setup:test`) and `.ci/run` both call this file: the one list of packages.
#
# ABADA_SETUP_ROOT (a test hook, unset in use) is put before every path checked, so a test can play a
# machine that lacks everything without removing anything.
set -euo pipefail

root="${ABADA_SETUP_ROOT:-}"
pg15=/usr/lib/postgresql/15/bin

# Debian package | the files it must provide (space-separated) | what needs them
PACKAGES=(
  "chromium|/usr/bin/chromium|the Playwright dashboard tests (test/e2e/)"
  "prometheus|/usr/bin/promtool|test/ops/metrics.promtool.test.ts"
  "postgresql-15|$pg15/postgres $pg15/initdb|test/faults/backup.restore.test.ts"
  "postgresql-client-15|$pg15/pg_dump $pg15/pg_restore|test/faults/backup.restore.test.ts"
)

missing=()
for entry in "${PACKAGES[@]}"; do
  IFS='|' read -r package files why <<<"$entry"
  for file in $files; do
    if [[ ! -x "$root$file" ]]; then
      missing+=("$package|$file|$why")
      break
    fi
  done
done
[[ ${#missing[@]} -eq 0 ]] && exit 0

names=()
for entry in "${missing[@]}"; do names+=("${entry%%|*}"); done

# Only root installs, and only with apt-get; anyone else gets the command to run, at once.
reason=""
if ! command -v apt-get >/dev/null 2>&1; then
  reason="no apt-get on this machine"
elif [[ $EUID -ne 0 ]]; then
  reason="not running as root"
fi
if [[ -n "$reason" ]]; then
  sudo=""
  [[ $EUID -ne 0 ]] && sudo="sudo "
  {
    echo "[setup:test] npm test needs the Debian packages ${names[*]} and cannot install them ($reason):"
    for entry in "${missing[@]}"; do
      IFS='|' read -r package file why <<<"$entry"
      echo "[setup:test]   $package: $file is missing, needed by $why"
    done
    echo "[setup:test] install them, then run npm test again: ${sudo}apt-get update && ${sudo}apt-get install -y ${names[*]}"
  } >&2
  exit 1
fi

for entry in "${missing[@]}"; do
  IFS='|' read -r package file why <<<"$entry"
  echo "[setup:test] installing $package: $file is missing, needed by $why"
done
log="$(mktemp -t abada-setup-test.XXXXXX)"
export DEBIAN_FRONTEND=noninteractive
# The lock timeout lets an apt-get that another process runs finish instead of failing this one at once.
if ! { apt-get -o DPkg::Lock::Timeout=300 update -qq &&
  apt-get -o DPkg::Lock::Timeout=300 install -y -qq "${names[@]}"; } >"$log" 2>&1; then
  echo "[setup:test] apt-get install ${names[*]} failed; its last lines ($log has them all):" >&2
  tail -n 20 "$log" >&2
  exit 1
fi
rm -f "$log"
for entry in "${missing[@]}"; do
  IFS='|' read -r package file why <<<"$entry"
  if [[ ! -x "$root$file" ]]; then
    echo "[setup:test] apt-get installed $package but $file is still missing" >&2
    exit 1
  fi
done
