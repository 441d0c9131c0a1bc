#!/usr/bin/env bash
# cmake/WriteRevision.cmake: the commit of a git checkout, "-dirty" with
# uncommitted changes, a new commit picked up on the next run, no rewrite
# when nothing changed, and "unknown" outside a checkout.
#   check_write_revision.sh CMAKE WRITE_REVISION_CMAKE
set -euo pipefail
cmake=$1 script=$2
tmp=$(mktemp -d)
trap 'rm -rf "$tmp"' EXIT
git() { command git -C "$tmp/repo" -c user.name=t -c user.email=t@t "$@"; }
fail() { echo "FAIL: $*" >&2; exit 1; }
write() { "$cmake" -DSOURCE_DIR="$1" -DOUT="$tmp/rev.cc" -P "$script"; }
expect() {
  grep -qF "return \"$1\";" "$tmp/rev.cc" || fail "want $1, got: $(grep return "$tmp/rev.cc")"
}

mkdir "$tmp/repo"
git init -q
echo one >"$tmp/repo/f"
git add f
git commit -qm one
write "$tmp/repo"
expect "$(git rev-parse --short=12 HEAD)"

echo two >"$tmp/repo/f"
write "$tmp/repo"
expect "$(git rev-parse --short=12 HEAD)-dirty"

git commit -qam two
write "$tmp/repo"
expect "$(git rev-parse --short=12 HEAD)"
before=$(stat -c %y "$tmp/rev.cc")
write "$tmp/repo"
[ "$(stat -c %y "$tmp/rev.cc")" = "$before" ] || fail "rewritten without a change"

mkdir "$tmp/plain"
write "$tmp/plain"
expect unknown
echo "ok"
