#!/usr/bin/env bash
# Tries the release the way a user takes it home (.ci/run runs it; it runs
# by hand too):
#
#   scripts/release-check.sh [OUTDIR]     (OUTDIR: a fresh temp dir)
#
# builds the amd64 and arm64 archives and .debs (scripts/release.sh),
# checks what each archive and the amd64 .deb hold, unpacks the .deb into
# a throwaway root, and from there, with no Go toolchain on PATH, runs
# `krl --version` and the guided scenario "stateless" headless to a
# passing report. The arm64 binary is checked with file, and run with
# --version under qemu-user when qemu-aarch64 is installed.
set -euo pipefail
cd "$(dirname "$0")/.."
root=$(pwd)
version=0.0.0-check
commit=$(git rev-parse HEAD)
out=${1:-$(mktemp -d /tmp/krl-release-check.XXXXXX)}
scenario=stateless

step() { printf '\n--- %s (%s)\n' "$*" "$(date -u +%H:%M:%S)"; }
fail() { echo "release check failed: $*" >&2; exit 1; }

step "scripts/release.sh $version $out"
scripts/release.sh "$version" "$out"
(cd "$out" && sha256sum -c --quiet checksums.txt) || fail "checksums.txt does not match the files"

step "the archives hold the binary, the README, the licenses and the docs"
for arch in amd64 arm64; do
  listing=$(tar -tzf "$out/krl_${version}_linux_$arch.tar.gz")
  for f in krl README.md LICENSE NOTICE THIRD_PARTY_NOTICES.txt docs/ARCHITECTURE.md; do
    grep -qx "krl_${version}_linux_$arch/$f" <<<"$listing" || fail "$arch archive lacks $f"
  done
done
echo "ok: both archives"

step "the amd64 .deb, unpacked into a throwaway root"
troot=$(mktemp -d /tmp/krl-deb-root.XXXXXX)
trap 'rm -rf "$troot"' EXIT
dpkg-deb -I "$out/krl_${version}_amd64.deb" | grep -E '^ (Package|Version|Architecture|Depends):'
dpkg-deb -x "$out/krl_${version}_amd64.deb" "$troot"
for f in usr/bin/krl usr/share/doc/krl/LICENSE usr/share/doc/krl/NOTICE usr/share/doc/krl/THIRD_PARTY_NOTICES.txt usr/share/doc/krl/README.md; do
  [ -f "$troot/$f" ] || fail ".deb lacks /$f"
done
krl=$troot/usr/bin/krl

# The installed binary runs from a directory of its own with PATH holding
# no Go toolchain: what it needs, it carries.
run=$(mktemp -d "$troot/run.XXXXXX")
nogo() { (cd "$run" && env -i HOME="$run" TMPDIR="$run" PATH=/usr/bin:/bin TERM=dumb "$@"); }
if nogo sh -c 'command -v go'; then
  fail "go is on PATH=/usr/bin:/bin: the check would not show the binary runs without it"
fi
echo "ok: no go on PATH=/usr/bin:/bin"

step "installed krl --version"
v=$(nogo "$krl" --version)
echo "$v"
grep -qx "krl $version" <<<"$v" || fail "--version does not say $version"
grep -q "^commit *$commit\$" <<<"$v" || fail "--version does not say commit $commit"
grep -q "^librdkafka *[0-9]" <<<"$v" || fail "--version does not say the librdkafka version"

step "installed krl --headless --scenario $scenario"
start=$(date +%s)
code=0
nogo "$krl" --headless --scenario "$scenario" --report "$run/report.json" --interval 200ms --seed 7 \
  --data-dir "$run/data" 2>"$run/stderr.log" || code=$?
if [ "$code" -ne 0 ]; then
  tail -n 40 "$run/stderr.log" >&2
  fail "the scenario exited $code"
fi
# The report's scenario result, read with the tools of a bare machine.
passed=$(tr -d '\n' <"$run/report.json" | grep -o '"scenario": *{ *"name": *"'"$scenario"'", *"title": *"[^"]*", *"passed": *[a-z]*' | sed 's/.*: *//')
[ "$passed" = true ] || { tail -n 40 "$run/stderr.log" >&2; fail "report: scenario $scenario passed=${passed:-missing}"; }
if tr -d '\n' <"$run/report.json" | grep -q '"observed": *"\(not measured[^"]*\)\?"'; then
  fail "report: a check of $scenario was not measured"
fi
echo "ok: $scenario passed in $(($(date +%s) - start)) s from the installed binary"

step "arm64"
arm=$(mktemp -d "$troot/arm64.XXXXXX")
tar -xzf "$out/krl_${version}_linux_arm64.tar.gz" -C "$arm"
armbin=$arm/krl_${version}_linux_arm64/krl
desc=$(file "$armbin")
echo "$desc"
grep -q 'ARM aarch64' <<<"$desc" || fail "the arm64 binary is not an aarch64 ELF"
if command -v qemu-aarch64 >/dev/null && [ -d /usr/aarch64-linux-gnu ]; then
  v=$(qemu-aarch64 -L /usr/aarch64-linux-gnu "$armbin" --version)
  echo "$v"
  grep -qx "krl $version" <<<"$v" || fail "the arm64 binary under qemu-aarch64 does not say $version"
else
  echo "qemu-aarch64 or the arm64 libc (/usr/aarch64-linux-gnu) is not installed: the arm64 binary was not run"
fi

step "release check passed ($out)"
