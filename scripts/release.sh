#!/usr/bin/env bash
# Builds the release of the committed HEAD from a clean clone of it:
#
#   scripts/release.sh VERSION [OUTDIR]     (OUTDIR: dist)
#
# writes to OUTDIR, for each of KRL_ARCHES (default "amd64 arm64"):
#   krl_VERSION_linux_ARCH.tar.gz   krl, README.md, LICENSE, NOTICE,
#                                   THIRD_PARTY_NOTICES.txt, docs/
#   krl_VERSION_ARCH.deb            /usr/bin/krl and /usr/share/doc/krl/
# and checksums.txt (SHA-256). It prints each file, its size and checksum.
#
# The binary is cgo with the librdkafka confluent-kafka-go bundles (glibc,
# static); arm64 is cross-compiled with Debian's aarch64-linux-gnu-gcc.
# Uncommitted changes are not in the release. Network: the Go module proxy
# only (modules missing from the cache). Two runs on one commit give the
# same bytes: -trimpath, no build ids, the commit time for every date.
set -euo pipefail

version=${1:?usage: scripts/release.sh VERSION [OUTDIR]}
[[ $version =~ ^v?[0-9]+(\.[0-9]+)*([-+~][0-9A-Za-z.]+)?$ ]] ||
  { echo "error: VERSION $version is not a version (want 1.2.3, v1.2.3 or 1.2.3-rc1)" >&2; exit 2; }
version=${version#v}
out=${2:-dist}
arches=${KRL_ARCHES:-amd64 arm64}

root=$(git -C "$(dirname "$0")" rev-parse --show-toplevel)
commit=$(git -C "$root" rev-parse HEAD)
[ -z "$(git -C "$root" status --porcelain)" ] ||
  echo "note: uncommitted changes in $root are not in the release (it builds $commit)" >&2
mkdir -p "$out"
out=$(cd "$out" && pwd)

work=$(mktemp -d /tmp/krl-release.XXXXXX)
trap 'rm -rf "$work"' EXIT
src=$work/src
git clone -q --no-hardlinks "$root" "$src"
git -C "$src" checkout -q --detach "$commit"
# Every date in the archives and packages is the commit's.
SOURCE_DATE_EPOCH=$(git -C "$src" log -1 --format=%ct "$commit")
export SOURCE_DATE_EPOCH

# The release chooses its own flags: none from the caller's GOFLAGS.
export GOFLAGS= CGO_ENABLED=1 GOOS=linux
modcache=$(go env GOMODCACHE)
ldflags="-s -w -buildid= -X github.com/kafka-recovery-lab/krl/internal/version.Version=$version -extldflags=-Wl,--build-id=none"

# notices writes THIRD_PARTY_NOTICES.txt for binary $1: the libraries the
# librdkafka bundle includes, librdkafka's own list, Go, and every Go
# module the binary links (from its build info), each license from the
# module cache.
notices() {
  local bin=$1 ckg
  ckg=$(go -C "$src" list -m -f '{{.Dir}}' github.com/confluentinc/confluent-kafka-go/v2)
  {
    echo "Third-party software in krl $version"
    echo
    echo "=============================================================================="
    echo "librdkafka (from confluent-kafka-go's static bundle) and what it bundles"
    echo "=============================================================================="
    cat "$src/scripts/release/bundled-licenses.txt"
    echo
    cat "$ckg/kafka/librdkafka_vendor/LICENSES.txt"
    echo
    echo "=============================================================================="
    echo "Go $(go env GOVERSION) (the standard library and runtime)"
    echo "=============================================================================="
    cat "$(go env GOROOT)/LICENSE"
    echo
    echo "=============================================================================="
    echo "xterm.js, embedded in krl serve's browser seat page"
    echo "=============================================================================="
    cat "$src/tui/serve/web/LICENSE-xterm.txt"
    go version -m "$bin" | awk '$1 == "dep" || $1 == "=>" { print $2, $3 }' | while read -r path ver; do
      local dir=$modcache/$(printf '%s' "$path" | sed 's/[A-Z]/!\L&/g')@$ver
      echo
      echo "=============================================================================="
      echo "$path $ver"
      echo "=============================================================================="
      local found=
      for f in "$dir"/LICENSE* "$dir"/LICENCE* "$dir"/COPYING* "$dir"/NOTICE*; do
        [ -f "$f" ] || continue
        found=1
        cat "$f"
        echo
      done
      [ -n "$found" ] || echo "(this module ships no license file of its own: its repository's root license applies)"
    done
  } >"$2"
}

# glibc is the newest GLIBC_ symbol version binary $1 needs.
glibc() {
  local objdump=objdump
  [ "$2" = arm64 ] && objdump=aarch64-linux-gnu-objdump
  "$objdump" -T "$1" | grep -o 'GLIBC_[0-9.]*' | sed 's/GLIBC_//' | sort -uV | tail -1
}

build() {
  local arch=$1 cc=gcc name stage
  [ "$arch" = arm64 ] && cc=aarch64-linux-gnu-gcc
  command -v "$cc" >/dev/null || { echo "error: $cc not found (Debian: apt-get install gcc-aarch64-linux-gnu)" >&2; exit 1; }
  name=krl_${version}_linux_$arch
  stage=$work/$arch/$name
  mkdir -p "$stage"
  echo "building $name with $cc" >&2
  (cd "$src" && GOARCH=$arch CC=$cc go build -trimpath -buildvcs=true -ldflags "$ldflags" -o "$stage/krl" ./tui)
  cp "$src/README.md" "$src/LICENSE" "$src/NOTICE" "$stage/"
  cp -r "$src/docs" "$stage/docs"
  notices "$stage/krl" "$stage/THIRD_PARTY_NOTICES.txt"
  chmod -R u=rwX,go=rX "$stage"
  tar --sort=name --mtime="@$SOURCE_DATE_EPOCH" --owner=0 --group=0 --numeric-owner --format=gnu \
    -C "$work/$arch" -cf - "$name" | gzip -n -9 >"$out/$name.tar.gz"

  local deb_libc
  deb_libc=$(glibc "$stage/krl" "$arch")
  cat >"$work/$arch/nfpm.yaml" <<EOF
name: krl
arch: $arch
platform: linux
version: $version
section: utils
priority: optional
maintainer: Kafka Recovery Lab <krl@kafka-recovery-lab.invalid>
description: |
  Kafka Recovery Lab: watch Kafka consumers crash and recover, live,
  in a terminal dashboard, on an embedded broker and store.
homepage: https://github.com/kafka-recovery-lab/krl
license: Apache-2.0
depends:
  - libc6 (>= $deb_libc)
contents:
  - src: $stage/krl
    dst: /usr/bin/krl
    file_info: {mode: 0755}
  - src: $stage/README.md
    dst: /usr/share/doc/krl/README.md
  - src: $stage/LICENSE
    dst: /usr/share/doc/krl/LICENSE
  - src: $stage/NOTICE
    dst: /usr/share/doc/krl/NOTICE
  - src: $stage/THIRD_PARTY_NOTICES.txt
    dst: /usr/share/doc/krl/THIRD_PARTY_NOTICES.txt
  - src: $stage/docs
    dst: /usr/share/doc/krl/docs
EOF
  (cd "$src/scripts/release" && go tool nfpm package -f "$work/$arch/nfpm.yaml" -p deb -t "$out/krl_${version}_$arch.deb" >&2)
}

for arch in $arches; do
  build "$arch"
done

cd "$out"
files=()
for arch in $arches; do
  files+=("krl_${version}_linux_$arch.tar.gz" "krl_${version}_$arch.deb")
done
sha256sum "${files[@]}" >checksums.txt
echo "commit $commit ($(date -u -d "@$SOURCE_DATE_EPOCH" +%FT%TZ)), version $version, in $out:"
for f in "${files[@]}"; do
  printf '%-36s %10s bytes  %s\n' "$f" "$(stat -c %s "$f")" "$(sha256sum "$f" | cut -d' ' -f1)"
done
