#!/usr/bin/env bash
# cmake/build_info.cmake, the build step behind `rnnstate --version` and the Debian package version: the
# revision outside git, below the top of a checkout, at a release tag, after it, with uncommitted changes;
# files rewritten only when their content changes (builds stay incremental).
# Usage: build_info_test.sh SOURCE_DIR
set -uo pipefail
src=$1
source "$(dirname "$0")/../cli/lib.sh"

# generate DIR: runs the script for source tree DIR (version 0.1.0) into $work/out
generate() {
  cmake -DSOURCE_DIR="$1" -DOUTPUT_DIR="$work/out" -DVERSION=0.1.0 -DONNX_VERSION=1.12.0 \
        -P "$src/cmake/build_info.cmake" >"$work/log" 2>&1 || { cat "$work/log"; return 1; }
}
revision() { sed -n 's/^#define RNNSTATE_BUILD_REVISION "\(.*\)"$/\1/p' "$work/out/build_info.h"; }
deb_version() { sed -n 's/^set(RNNSTATE_DEB_VERSION \[==\[\(.*\)\]==\])$/\1/p' "$work/out/build_info.cmake"; }
is() { [ "$1" = "$2" ] || { echo "  got '$1', expected '$2'"; return 1; }; }

mkdir "$work/plain"
check "outside git: runs" generate "$work/plain"
check "outside git: revision unknown" is "$(revision)" unknown
check "outside git: Debian version is the release version" is "$(deb_version)" 0.1.0
check "header names the versions" grep -q '^#define RNNSTATE_BUILD_ONNX_VERSION "1.12.0"$' "$work/out/build_info.h"

if ! command -v git >/dev/null; then
  echo "git is not installed: git cases skipped"
  finish; exit
fi
repo=$work/repo
git() { command git -C "$repo" -c user.name=test -c user.email=test@invalid -c commit.gpgsign=false "$@"; }
mkdir -p "$repo/sub" && git init -q && echo a >"$repo/sub/file" && git add sub/file && git commit -qm one
hash=$(git rev-parse --short=12 HEAD)
check "no tag: runs" generate "$repo"
check "no tag: revision is the 12-digit hash" is "$(revision)" "$hash"
check "no tag: Debian version 0.1.0+g<hash>" is "$(deb_version)" "0.1.0+g$hash"
check "a directory below the top of a checkout is not its source tree" generate "$repo/sub"
check "below the top: revision unknown" is "$(revision)" unknown

echo b >"$repo/sub/file"
check "uncommitted change: runs" generate "$repo"
check "uncommitted change: revision <hash>-dirty" is "$(revision)" "$hash-dirty"
check "uncommitted change: Debian version ...dirty" is "$(deb_version)" "0.1.0+g$hash.dirty"

git commit -qam two && git tag v0.1.0
check "at tag v0.1.0: runs" generate "$repo"
check "at tag v0.1.0: revision v0.1.0" is "$(revision)" v0.1.0
check "at tag v0.1.0: Debian version 0.1.0" is "$(deb_version)" 0.1.0
echo c >"$repo/sub/file" && git commit -qam three
hash=$(git rev-parse --short=12 HEAD)
check "after the tag: runs" generate "$repo"
check "after the tag: revision v0.1.0-1-g<hash>" is "$(revision)" "v0.1.0-1-g$hash"
check "after the tag: Debian version 0.1.0+g<hash>" is "$(deb_version)" "0.1.0+g$hash"
if command -v dpkg >/dev/null; then
  check "a Debian version dpkg accepts" dpkg --validate-version "0.1.0+g$hash.dirty"
fi

# Unchanged content: files keep their time stamp, so nothing that includes them recompiles.
touch -d '2000-01-01' "$work/out/build_info.h" "$work/out/build_info.cmake"
generate "$repo"
check "unchanged revision: header not rewritten" is "$(stat -c %Y "$work/out/build_info.h")" "$(date -d 2000-01-01 +%s)"
check "unchanged revision: cmake file not rewritten" \
  is "$(stat -c %Y "$work/out/build_info.cmake")" "$(date -d 2000-01-01 +%s)"
finish
