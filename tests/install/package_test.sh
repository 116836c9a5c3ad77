#!/usr/bin/env bash
# The Debian package. `cpack -G DEB` in the build tree makes rnnstate_VERSION_ARCH.deb; dpkg-deb shows its
# fields — Version from the build's revision, Depends computed by dpkg-shlibdeps and covering every library
# the binary links — and exactly the runtime files; the packaged binary runs. As root with apt-get, and not
# in sanitizer builds: `apt-get install ./rnnstate_*.deb`, run /usr/bin/rnnstate, remove it, nothing left.
# Installing is serialized across concurrent test runs on the machine (flock) and skipped when some
# rnnstate is already installed there.
# Usage: package_test.sh BUILD_DIR SOURCE_DIR SANITIZED(0|1)
set -uo pipefail
build=$1
src=$2
sanitized=$3
source "$(dirname "$0")/../cli/lib.sh"
model=$src/models/torch/lstm2_bf_dyn.onnx

for tool in cpack dpkg-deb dpkg-shlibdeps; do
  command -v $tool >/dev/null || { echo "$tool is not installed: run tools/setup.sh"; exit 1; }
done

# cpack packages the build as it is (cmake/install.cmake: no build of every target first), so it runs
# beside the suites that run the binary.
packs() {
  cpack -G DEB --config "$build/CPackConfig.cmake" -B "$work/package" >"$work/cpack.log" 2>&1 ||
    { cat "$work/cpack.log"; return 1; }
}
check "cpack -G DEB" packs
debs=("$work"/package/rnnstate_*.deb)
check "one package rnnstate_*.deb" test ${#debs[@]} -eq 1 -a -f "${debs[0]}"
deb=${debs[0]}
is() { [ "$1" = "$2" ] || { echo "  got '$1', expected '$2'"; return 1; }; }
field() { dpkg-deb -f "$deb" "$1"; }

check "Package: rnnstate" is "$(field Package)" rnnstate
check "Architecture: $(dpkg --print-architecture)" is "$(field Architecture)" "$(dpkg --print-architecture)"
check "Maintainer set" test -n "$(field Maintainer)"
check "Description set" test -n "$(field Description)"
"$build/rnnstate" --version >"$work/version"
release=$(sed -n 's/^rnnstate //p' "$work/version")
revision=$(sed -n 's/^revision //p' "$work/version")
expected=$release
if [ "$revision" != unknown ] && [ "$revision" != "v$release" ]; then
  expected="$release+g$(git -C "$src" rev-parse --short=12 HEAD)"
  [[ $revision == *-dirty ]] && expected+=.dirty
fi
check "Version $expected (release $release, revision $revision)" is "$(field Version)" "$expected"
check "the file is named after package, version and architecture" \
  is "$(basename "$deb")" "rnnstate_$(field Version)_$(field Architecture).deb"

# Depends: computed by dpkg-shlibdeps (versioned entries), naming for each library the binary links the
# package that has it (or a name that package provides, as libspdlog1.10 provides libspdlog1.10-fmt9).
depends=$(field Depends)
echo "Depends: $depends"
check "Depends computed (versioned entries such as libc6 (>= ...))" grep -qE '(^|, )libc6 \(>= [0-9]' <<<"$depends"
depends_names=" $(sed -e 's/ ([^)]*)//g' -e 's/,/ /g' <<<"$depends") "
multiarch=$(dpkg-architecture -qDEB_HOST_MULTIARCH 2>/dev/null || gcc -print-multiarch)
covered() {  # covered SONAME: the package that has SONAME, or a name it provides, is in Depends
  local owner provides name
  owner=$(dpkg -S "*/$multiarch/$1" 2>/dev/null | head -1 | cut -d: -f1)
  [ -n "$owner" ] || { echo "  no package has $1"; return 1; }
  provides=$(dpkg-query -W -f='${Provides}' "$owner" | sed -e 's/ ([^)]*)//g' -e 's/,/ /g')
  for name in $owner $provides; do [[ $depends_names == *" $name "* ]] && return 0; done
  echo "  $1 is in package $owner (provides: ${provides:-nothing}), not in Depends"
  return 1
}
for soname in $(objdump -p "$build/rnnstate" | awk '$1 == "NEEDED" { print $2 }'); do
  check "Depends covers $soname" covered "$soname"
done

# Contents: exactly the runtime files, under /usr.
dpkg-deb -c "$deb" >"$work/contents"
files=$(awk '$1 !~ /^d/ { print $6 }' "$work/contents" | sort)
helper=$(cd "$src/tools/js/rnnstate-stream" && ls *.mjs package.json README.md | sed 's|^|./usr/share/rnnstate/rnnstate-stream/|')
expected_files=$(printf '%s\n' ./usr/bin/rnnstate ./usr/share/bash-completion/completions/rnnstate \
  ./usr/share/doc/rnnstate/copyright ./usr/share/man/man1/rnnstate.1.gz $helper | sort)
check "files: binary, man page, completion, copyright, verify's checker" is "$files" "$expected_files"
check "binary mode 0755 root/root" grep -qE '^-rwxr-xr-x root/root .* \./usr/bin/rnnstate$' "$work/contents"
check "directories 0755" test -z "$(awk '$1 ~ /^d/ && $1 != "drwxr-xr-x"' "$work/contents")"

# The packaged binary (stripped) runs.
dpkg-deb -x "$deb" "$work/root"
check "packaged binary: same --version" is "$("$work/root/usr/bin/rnnstate" --version)" "$(cat "$work/version")"
reports() { "$work/root/usr/bin/rnnstate" report "$model" >"$work/report" && grep -q LSTM "$work/report"; }
check "packaged binary: report" reports
verify_help() { "$work/root/usr/bin/rnnstate" verify --help | grep -q -- '--chunks'; }
check "packaged binary: verify finds its checker" verify_help
if command -v file >/dev/null; then
  check "packaged binary stripped" grep -q ', stripped' <<<"$(file "$work/root/usr/bin/rnnstate")"
fi

# Install, run, remove.
skip() { echo "installing the package skipped: $1"; finish; exit; }
[ "$sanitized" = 1 ] && skip "sanitizer build"
[ "$(id -u)" -eq 0 ] || skip "not root"
command -v apt-get >/dev/null || skip "no apt-get"
exec 9>/tmp/rnnstate-package-test.lock
flock -w 600 9 || skip "another test run kept /tmp/rnnstate-package-test.lock for 10 minutes"
status() { dpkg-query -W -f='${db:Status-Status}' rnnstate 2>/dev/null; }
[ -z "$(status)" ] || [ "$(status)" = not-installed ] || skip "a package rnnstate is installed already ($(status))"
[ ! -e /usr/bin/rnnstate ] || skip "/usr/bin/rnnstate exists"
apt_get() { DEBIAN_FRONTEND=noninteractive apt-get -y -o DPkg::Lock::Timeout=600 "$@" >"$work/apt.log" 2>&1 ||
              { cat "$work/apt.log"; return 1; }; }
trap 'if [ "$(status)" = installed ]; then apt_get remove rnnstate; fi; rm -rf "$work"' EXIT
# Every dependency is installed already (the build needed it): apt must only add rnnstate.
only_adds() {
  apt_get install --simulate --no-install-recommends "$deb" &&
    grep -q "^0 upgraded, 1 newly installed, 0 to remove" "$work/apt.log" || { cat "$work/apt.log"; return 1; }
}
check "apt-get would only add rnnstate" only_adds || skip "apt-get would change other packages"
check "apt-get install ./$(basename "$deb")" apt_get install --no-install-recommends "$deb"
check "installed" is "$(status)" installed
check "/usr/bin/rnnstate --version" is "$(/usr/bin/rnnstate --version)" "$(cat "$work/version")"
rewrites() { /usr/bin/rnnstate rewrite "$model" -o "$work/streaming.onnx" >/dev/null && test -s "$work/streaming.onnx"; }
check "/usr/bin/rnnstate rewrite" rewrites
# (Docker images of Debian may exclude /usr/share/man from what dpkg installs.)
if command -v man >/dev/null && [ -e /usr/share/man/man1/rnnstate.1.gz ]; then
  check "man finds the page" is "$(man -w rnnstate 2>/dev/null)" /usr/share/man/man1/rnnstate.1.gz
fi
check "apt-get remove rnnstate" apt_get remove rnnstate
check "removed" test -z "$(status)" -o "$(status)" = not-installed
for file in $files; do check "removed: ${file#.}" test ! -e "${file#.}"; done
check "removed: /usr/share/doc/rnnstate" test ! -e /usr/share/doc/rnnstate
finish
