#!/usr/bin/env bash
# Checks deploy/systemd/fairqd.service with systemd-analyze:
#   check_systemd_unit.sh SYSTEMD_ANALYZE UNIT FAIRQD
# `verify` also checks that ExecStart's binary exists, so a copy of the unit
# runs the built fairqd instead of /usr/local/bin/fairqd; nothing else
# changes. Any warning fails. `security --offline` scores the sandboxing:
# the exposure must stay at or under 2.0 ("OK"), so dropping hardening
# options fails here.
set -euo pipefail

analyze=$1 unit=$2 fairqd=$3
tmp=$(mktemp -d)
trap 'rm -rf "$tmp"' EXIT
copy="$tmp/$(basename "$unit")"
sed "s|^ExecStart=/usr/local/bin/fairqd |ExecStart=$fairqd |" "$unit" > "$copy"
if ! grep -q "^ExecStart=$fairqd " "$copy"; then
  echo "$unit: no 'ExecStart=/usr/local/bin/fairqd ...' line" >&2
  exit 1
fi
# verify exits 0 on a misspelt key or value ("..., ignoring"): any message
# fails the check.
messages=$("$analyze" verify "$copy" 2>&1) || { echo "$messages" >&2; exit 1; }
if [ -n "$messages" ]; then
  echo "$messages" >&2
  exit 1
fi
# --threshold is in tenths: 20 means an exposure of 2.0.
"$analyze" security --offline=true --threshold=20 "$copy"
