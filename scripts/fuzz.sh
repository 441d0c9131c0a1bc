#!/usr/bin/env bash
# Fuzzes one of tests/fuzz's targets with libFuzzer, by hand:
#   scripts/fuzz.sh TARGET [SECONDS] [libFuzzer flags...]
# TARGET is config, scenario, request or page; SECONDS defaults to 300.
# Builds the fuzzers with clang, AddressSanitizer and
# UndefinedBehaviorSanitizer in build-fuzz/ (needs clang and
# libclang-rt-14-dev), then fuzzes from the
# target's seeds and regressions with a working corpus in
# build-fuzz/corpus/TARGET. An input that crashes is written to
# build-fuzz/crash-*: fix the cause, then add the input to
# tests/fuzz/regressions/TARGET/ so every build replays it.
set -euo pipefail

root=$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)
target=${1:?usage: scripts/fuzz.sh config|scenario|request|page [SECONDS]}
seconds=${2:-300}
shift $(($# < 2 ? $# : 2))
case "$target" in
  config) seeds=$root/config ;;
  scenario) seeds=$root/config/scenarios ;;
  request) seeds=$root/tests/fuzz/seeds/request ;;
  page) seeds=$root/tests/fuzz/seeds/page ;;
  *) echo "fuzz.sh: unknown target '$target' (config, scenario, request, page)" >&2
     exit 2 ;;
esac

build=$root/build-fuzz
if [ ! -f "$build/build.ninja" ]; then
  CC=clang CXX=clang++ cmake -S "$root" -B "$build" -G Ninja \
    -DCMAKE_BUILD_TYPE=RelWithDebInfo -DFAIRQ_FUZZ=ON \
    -DFAIRQ_SANITIZE=address,undefined,fuzzer-no-link
fi
cmake --build "$build" --target "fairq_${target}_fuzzer"

corpus=$build/corpus/$target
mkdir -p "$corpus"
regressions=$root/tests/fuzz/regressions/$target
inputs=("$corpus" "$seeds")
if [ -d "$regressions" ]; then inputs+=("$regressions"); fi
cd "$build"
UBSAN_OPTIONS=halt_on_error=1:print_stacktrace=1 \
  "$build/tests/fuzz/fairq_${target}_fuzzer" -max_total_time="$seconds" \
  -max_len=65536 -timeout=10 "$@" "${inputs[@]}"
