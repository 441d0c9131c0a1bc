#!/usr/bin/env bash
# Checks that RUNTIME_PACKAGES in scripts/dev.sh (the packages of
# deploy/Dockerfile's runtime stage) provide every shared library that the
# given binaries link directly; apt brings the rest through their Depends.
#   check_runtime_packages.sh SOURCE_DIR BINARY...
# Needs dpkg and readelf, as on the Debian 12 machines this project builds on.
set -euo pipefail

source_dir=$1
shift
# In every Debian image already (apt itself needs them).
base="libc6 libgcc-s1 libstdc++6"
runtime=$(sed -n '/^RUNTIME_PACKAGES=(/,/^)/p' "$source_dir/scripts/dev.sh" |
  sed -e '1d' -e '$d' | tr -s ' \n' '\n' | grep -v '^$' || true)
if [ -z "$runtime" ]; then
  echo "no RUNTIME_PACKAGES=( ... ) list in scripts/dev.sh" >&2
  exit 1
fi

# "binary lib path" for every library a binary links directly.
needed=()
for binary in "$@"; do
  resolved=$(ldd "$binary")
  for lib in $(readelf -d "$binary" | sed -n 's/.*(NEEDED).*\[\(.*\)\]/\1/p'); do
    path=$(awk -v lib="$lib" '$1 == lib && $3 ~ /^\// {print $3}' <<<"$resolved")
    needed+=("$(basename "$binary") $lib ${path:-?}")
  done
done

# One dpkg query for all of them ("package: path" lines). On merged-/usr
# systems dpkg may know a file under /lib rather than /usr/lib, or the other
# way round, so every spelling is asked.
paths=()
for entry in "${needed[@]}"; do
  path=${entry##* }
  paths+=("$path" "${path#/usr}" "/usr$path" "$(readlink -f "$path")")
done
owners=$(dpkg -S "${paths[@]}" 2>/dev/null || true)

status=0
for entry in "${needed[@]}"; do
  read -r binary lib path <<<"$entry"
  package=?
  for candidate in "$path" "${path#/usr}" "/usr$path" "$(readlink -f "$path")"; do
    found=$(awk -v p="$candidate" '$NF == p {sub(/:.*/, "", $1); print $1; exit}' <<<"$owners")
    if [ -n "$found" ]; then package=$found; break; fi
  done
  if ! grep -qxF "$package" <<<"$runtime" && [[ " $base " != *" $package "* ]]; then
    echo "$binary: $lib ($path) comes from package '$package', which is not in" \
      "RUNTIME_PACKAGES (scripts/dev.sh); the container would not start" >&2
    status=1
  fi
done
[ $status -eq 0 ] && echo "RUNTIME_PACKAGES cover $*"
exit $status
