#!/usr/bin/env bash
# One entry point for a fresh Debian 12 machine, used by the README and CI:
#   scripts/dev.sh run    install what is missing, build, start the main job
#   scripts/dev.sh test   install what is missing, build, run every test
#   scripts/dev.sh deps   only install what is missing
#   scripts/dev.sh runtime-deps   only what the built binaries need to run
#                                 (deploy/Dockerfile's runtime stage)
# Works as root, or as a user with sudo (only apt-get is elevated).
set -euo pipefail

# Every Debian package the build, the tests and the benchmarks use.
# (libgrpc++-dev brings the protoc plugin's runtime; protobuf-compiler-grpc
# the plugin itself. prometheus ships promtool and python3 reads the
# dashboard JSON, for the tests of deploy/.) Not beanstalkd, which only
# scripts/peer_latency.sh needs: installing it starts a system beanstalkd.
PACKAGES=(
  cmake g++ ninja-build ccache pkg-config
  libgtest-dev libgmock-dev libbenchmark-dev
  libyaml-cpp-dev libcli11-dev
  libgrpc++-dev libprotobuf-dev protobuf-compiler protobuf-compiler-grpc
  librocksdb-dev libspdlog-dev libabsl-dev prometheus-cpp-dev libjemalloc-dev
  prometheus python3
)

# The shared libraries fairqd and fairqctl link, for machines that only run
# them (deploy/Dockerfile's runtime stage). libc6, libgcc-s1 and libstdc++6
# are in every Debian image already. tests/deploy checks that these packages
# provide every library the built binaries need.
RUNTIME_PACKAGES=(
  libabsl20220623 libfmt9 libgrpc++1.51 libgrpc29 libprotobuf32
  librocksdb7.8 libspdlog1.10 libyaml-cpp0.7
  libprometheus-cpp-core1.0 libprometheus-cpp-pull1.0 libjemalloc2
)

root=$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)
# Absolute: `run` changes to the checkout before it starts fairqd.
build=$(realpath -m "${FAIRQ_BUILD_DIR:-$root/build}")

as_root() {
  if [ "$(id -u)" -eq 0 ]; then
    "$@"
  elif command -v sudo >/dev/null; then
    sudo "$@"
  else
    echo "$0: installing packages needs root: run as root or install sudo" >&2
    exit 1
  fi
}

install_deps() {
  local missing=()
  for p in "$@"; do
    dpkg-query -W -f='${Status}' "$p" 2>/dev/null | grep -q "ok installed" ||
      missing+=("$p")
  done
  [ ${#missing[@]} -eq 0 ] && return 0
  echo "Installing: ${missing[*]}"
  as_root apt-get update -qq
  as_root env DEBIAN_FRONTEND=noninteractive \
    apt-get install -y -qq --no-install-recommends "${missing[@]}"
}

build_all() {
  cmake -S "$root" -B "$build" -G Ninja -DCMAKE_BUILD_TYPE=RelWithDebInfo
  cmake --build "$build" --parallel "$(nproc)"
}

case "${1:-}" in
  deps)
    install_deps "${PACKAGES[@]}"
    ;;
  runtime-deps)
    install_deps "${RUNTIME_PACKAGES[@]}"
    ;;
  run)
    install_deps "${PACKAGES[@]}"
    build_all
    # The broker on the example config; its data goes to ./data under the
    # checkout (data_dir in the config is relative to the working directory).
    cd "$root"
    exec "$build/server/fairqd" --config config/fairqd.yaml
    ;;
  test)
    install_deps "${PACKAGES[@]}"
    build_all
    ctest --test-dir "$build" --parallel "$(nproc)" --output-on-failure \
      --no-tests=error
    ;;
  *)
    echo "usage: $0 run|test|deps|runtime-deps" >&2
    exit 2
    ;;
esac
