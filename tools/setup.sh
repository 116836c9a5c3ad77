#!/usr/bin/env bash
# Installs what rnnstate needs to build and test on Debian 12, only where missing:
# Debian packages (build and test) and the project-local onnxruntime-node used by end-to-end tests.
# tools/setup.sh --fuzz: also clang and its fuzzer and sanitizer runtimes, for tools/fuzz/run.sh (the CI
# does not fuzz; it replays the saved finds with the tests).
set -euo pipefail
cd "$(dirname "$0")/.."
source tools/progress.sh

packages=(cmake g++ make pkg-config libonnx-dev libprotobuf-dev protobuf-compiler libcli11-dev libspdlog-dev
          nlohmann-json3-dev libre2-dev libgtest-dev libgmock-dev libonnx-testdata nodejs npm graphviz strace
          dpkg-dev file groff-base     # the Debian package (dpkg-shlibdeps) and the man page test
          espeak-ng sox                # speech for the voice-activity tests (tests/e2e/lib/speech.mjs)
          chromium)                    # the browser suite (tests/browser): Debian's, never a downloaded one
[ "${1:-}" = --fuzz ] && packages+=(clang libclang-rt-14-dev)
missing=()
for p in "${packages[@]}"; do
  dpkg-query -W -f='${Status}' "$p" 2>/dev/null | grep -q "install ok installed" || missing+=("$p")
done
# Node.js may come from outside Debian (as on the CI image): accept any node >= 18 with npm.
if command -v node >/dev/null && command -v npm >/dev/null; then
  missing=("${missing[@]/nodejs}"); missing=("${missing[@]/npm}")
fi
missing=($(printf '%s\n' "${missing[@]}" | grep -v '^$' || true))
if ((${#missing[@]})); then
  echo "setup: installing Debian packages: ${missing[*]}"
  SUDO=""; [ "$(id -u)" -eq 0 ] || SUDO="sudo"
  # -q: one line per package fetched, unpacked and set up (no progress bars); the heartbeat covers the
  # quiet stretches.
  $SUDO apt-get update -q 2>&1 | heartbeat "apt-get update"
  DEBIAN_FRONTEND=noninteractive $SUDO apt-get install -y -q -o Dpkg::Use-Pty=0 --no-install-recommends \
    "${missing[@]}" 2>&1 | heartbeat "still installing Debian packages"
else
  echo "setup: the Debian packages are installed"
fi

# onnxruntime-node ships its CPU runtime in the package; its postinstall only fetches GPU add-ons, which
# fail offline, so scripts are skipped.
if [ ! -d tests/e2e/node_modules/onnxruntime-node ]; then
  echo "setup: installing onnxruntime-node into tests/e2e/node_modules"
  (cd tests/e2e && ONNXRUNTIME_NODE_INSTALL=skip npm ci --ignore-scripts --no-audit --no-fund 2>&1) |
    heartbeat "still installing onnxruntime-node"
else
  echo "setup: onnxruntime-node is installed (tests/e2e/node_modules)"
fi
# The browser suite's onnxruntime-web, esbuild and Vite, as its package-lock.json pins them (esbuild's
# binary comes in its platform package; no install script is needed).
if [ ! -d tests/browser/node_modules/onnxruntime-web ]; then
  echo "setup: installing the browser suite's packages into tests/browser/node_modules" >&2
  (cd tests/browser && npm ci --ignore-scripts --no-audit --no-fund >&2)
fi
