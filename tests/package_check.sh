#!/usr/bin/env bash
# The package a user installs trains. `cpack -G DEB` from the build folder; the .deb unpacked into an empty root
# (dpkg-deb -x puts on disk what dpkg would, without root); every library its programs link is either carried in
# lib/tokamak or comes from a Debian package its Depends names (dpkg -S says which package owns it here); and the
# packaged `tokamak` trains the default model on the default corpus for a few steps with an empty home, no
# set-up cache and no source tree in sight. Usage: package_check.sh BUILD_DIR
set -euo pipefail
build=$(cd "$1" && pwd)
work=$(mktemp -d)
trap 'rm -rf "$work"' EXIT
fail() {
  echo "package_check: $*" >&2
  exit 1
}

# The staging folder and the package go to the scratch folder (-B), not the build folder: 4 GB gone at the end.
if ! (cd "$build" && cpack -G DEB -B "$work/pkg" >"$work/cpack.log" 2>&1); then
  grep -v "^ *$" "$work/cpack.log" | grep -iE "error|warning: cannot|missing" | tail -20 >&2 || tail -20 "$work/cpack.log" >&2
  fail "cpack -G DEB failed (full log above; hint: run scripts/setup.sh so gpt2.tiktoken is in the set-up's cache)"
fi
deb=$(ls "$work"/pkg/*.deb)
echo "package: $(basename "$deb"), $(du -m "$deb" | cut -f1) MB"
depends=$(dpkg-deb -f "$deb" Depends)
echo "Depends: $depends"
has_dep() { tr ',' '\n' <<<"$depends" | sed 's/^ *//; s/ .*//; s/|.*//' | grep -qx "$1"; }
has_dep jargon-text || fail "Depends lacks jargon-text, the default corpus"

root=$work/root
dpkg-deb -x "$deb" "$root"
exes=(tokamak tokamak-engine)
[ -x "$build/app/studio/tokamak-studio" ] || [ -x "$build/app/tokamak-studio" ] && exes+=(tokamak-studio)  # a GUI build
for exe in "${exes[@]}"; do
  [ -x "$root/usr/bin/$exe" ] || fail "the package has no usr/bin/$exe"
done
[ -s "$root/usr/share/tokamak/assets/gpt2.tiktoken" ] || fail "the package lacks share/tokamak/assets/gpt2.tiktoken"
# The presets the studio opens (presets_dir, engine/base/util/files.h).
[ -s "$root/usr/share/tokamak/ladders/cpu-nano.json" ] || fail "the package lacks share/tokamak/ladders"
[ -s "$root/usr/share/tokamak/sweeps/small_lr_optimizer.json" ] || fail "the package lacks share/tokamak/sweeps"

# Every library that a file of the package links by name (its NEEDED entries: the programs' and the bundled
# libraries'), resolved as the loader resolves it from the unpacked root. A Debian library that another Debian
# library pulls in is that package's Depends, not ours.
declare -A where=()
resolve() {  # resolve FILE: records where the loader finds each library FILE needs, directly or not
  local name path
  while read -r name path; do
    [ -n "$path" ] || fail "${1#"$root"/}: the loader cannot find $name"
    where[$name]=$path
  done < <(ldd "$1" | awk '/=>/ { print $1, ($3 == "not" ? "" : $3); next }
                            $1 ~ /^\// { n = split($1, p, "/"); print p[n], $1 }')
}
checked=0
while IFS= read -r -d '' file; do
  objdump -p "$file" 2>/dev/null | grep -q NEEDED || continue
  objdump -p "$file" | grep -qE "NEEDED +(libcuda\.so|libnvidia-)" && continue  # the NVIDIA driver's, dlopened
  resolve "$file"
  for name in $(objdump -p "$file" | awk '$1 == "NEEDED" { print $2 }'); do
    path=${where[$name]:-}
    [ -n "$path" ] || fail "${file#"$root"/} links $name, which the loader does not find"
    case $path in
      "" | "$root"/*) ;;  # carried in the package
      *)
        owner=$(dpkg -S "$(readlink -f "$path")" 2>/dev/null | head -n1 | cut -d: -f1) ||
          owner=$(dpkg -S "$path" 2>/dev/null | head -n1 | cut -d: -f1) || true
        [ -n "$owner" ] || fail "${file#"$root"/} links $path, which no Debian package owns and the package does not carry"
        has_dep "$owner" || fail "${file#"$root"/} links $path from Debian's $owner, which the package's Depends does not name"
        ;;
    esac
    checked=$((checked + 1))
  done
done < <(find "$root/usr/bin" "$root/usr/lib/tokamak" -type f -print0)
echo "links checked: $checked (each to a library the package carries, or to one from a package its Depends names)"

# A user with an empty home: no ~/.cache/tokamak, no run store, nothing from this checkout on PATH.
home=$work/home
mkdir -p "$home"
env -i HOME="$home" PATH=/usr/bin:/bin LANG=C.UTF-8 "$root/usr/bin/tokamak" train --set train.steps=3 \
  --set eval.every=0 --set sample.every=-1 --set threads=2 >"$work/train.log" 2>&1 ||
  {
    tail -20 "$work/train.log" >&2
    fail "the packaged tokamak could not train the default with an empty home"
  }
grep -q "step 3" "$work/train.log" || {
  tail -20 "$work/train.log" >&2
  fail "the packaged run did not reach step 3"
}
[ -s "$home/.cache/tokamak/assets/jargon.txt" ] || fail "the default corpus was not unpacked from jargon-text"
[ -s "$home/.local/share/tokamak/runs.db" ] || fail "the packaged run left no run store in the empty home"
echo "the packaged tokamak trained the default for 3 steps with an empty home:"
grep "step 3" "$work/train.log" | head -n1
