#!/usr/bin/env bash
# usage: newer-pythons.sh [--cache DIR] [VERSION...]   (versions: 3.14 3.15, the default)
# Installs CPython interpreters newer than Debian 12 ships for the tests: Debian unstable's own
# builds (python3.X-minimal, libpython3.X-stdlib and the C library they were built with),
# unpacked into a cache outside the checkout (--cache, HANGSHIM_PYTHONS_CACHE; default
# ~/.cache/hangshim/pythons), never into the system, and pointed at that C library with
# patchelf. Idempotent: an interpreter already there is kept. Prints one line per interpreter:
# its path, or "newer-pythons: skipped VERSION: why" (its tests are then left out, never
# passed). Exit status 0 unless the arguments are wrong (2).
set -euo pipefail
cache=${HANGSHIM_PYTHONS_CACHE:-${XDG_CACHE_HOME:-$HOME/.cache}/hangshim/pythons}
versions=()
while (($#)); do
  case $1 in
    --cache) (($# > 1)) || { echo "newer-pythons: --cache needs a directory (see --help)" >&2; exit 2; }
             cache=$2; shift ;;
    -h|--help) sed -n '2,9p' "$0" | sed 's/^# \{0,1\}//'; exit 0 ;;
    3.1[4-9]) versions+=("$1") ;;
    *) echo "newer-pythons: unknown argument '$1' (versions: 3.14, 3.15; see --help)" >&2; exit 2 ;;
  esac
  shift
done
((${#versions[@]})) || versions=(3.14 3.15)

root=$cache/sid            # the unpacked packages: usr/bin/python3.X, usr/lib/...
apt=$cache/apt             # a private apt state: the system's sources and lists stay as they are
libc=$root/usr/lib/x86_64-linux-gnu
skip() { echo "newer-pythons: skipped $1: $2"; }

# The C library and what the interpreters' modules link to; Debian unstable's, like the builds.
runtime=(libc6 libgcc-s1 zlib1g libexpat1 libffi8 libbz2-1.0 liblzma5 libzstd1 libuuid1)

wanted=()
for v in "${versions[@]}"; do
  [[ -x $root/usr/bin/python$v && -e $cache/ok-$v ]] && { echo "$root/usr/bin/python$v"; continue; }
  wanted+=("$v")
done
((${#wanted[@]})) || exit 0

for tool in apt-get dpkg-deb patchelf; do
  command -v $tool >/dev/null || { for v in "${wanted[@]}"; do skip "$v" "$tool is not installed (scripts/setup.sh installs it)"; done; exit 0; }
done
mkdir -p "$apt/lists/partial" "$apt/cache/archives/partial" "$root" "$cache/debs"
echo "deb http://deb.debian.org/debian sid main" > "$apt/sources.list"
options=(-o "Dir::Etc::sourcelist=$apt/sources.list" -o Dir::Etc::sourceparts=- -o "Dir::State::Lists=$apt/lists"
         -o "Dir::Cache=$apt/cache" -o APT::Sandbox::User=root -q)
if ! apt-get "${options[@]}" update >"$apt/update.log" 2>&1; then
  for v in "${wanted[@]}"; do skip "$v" "Debian unstable's package lists could not be read (no network? see $apt/update.log)"; done
  exit 0
fi

for v in "${wanted[@]}"; do
  packages=("python$v-minimal" "libpython$v-minimal" "libpython$v-stdlib" "${runtime[@]}")
  rm -f "$cache/debs/"*.deb  # only this download's packages get unpacked
  if ! (cd "$cache/debs" && apt-get "${options[@]}" download "${packages[@]}" >"$apt/download-$v.log" 2>&1); then
    skip "$v" "Debian unstable has no python$v packages to download (see $apt/download-$v.log)"
    continue
  fi
  unpacked=1
  for p in "${packages[@]}"; do
    for deb in "$cache/debs/${p}_"*.deb; do
      dpkg-deb -x "$deb" "$root" 2>>"$apt/unpack-$v.log" || unpacked=0
    done
  done
  python=$root/usr/bin/python$v
  if ((!unpacked)) || [[ ! -x $python ]]; then
    skip "$v" "its packages could not be unpacked (see $apt/unpack-$v.log)"
    continue
  fi
  # DT_RPATH (--force-rpath), not DT_RUNPATH: it also applies to what the extension modules load
  # (_ctypes' libffi), which would otherwise come from the system's directories.
  if ! patchelf --set-interpreter "$libc/ld-linux-x86-64.so.2" --force-rpath --set-rpath "$libc" "$python" \
       2>"$apt/patchelf-$v.log"; then
    skip "$v" "patchelf could not point $python at its C library (see $apt/patchelf-$v.log)"
    continue
  fi
  if ! "$python" -c 'import ctypes, sys; assert sys.version_info[:2] == tuple(map(int, sys.argv[1].split(".")))' "$v" \
       >"$apt/check-$v.log" 2>&1; then
    skip "$v" "$python does not start (see $apt/check-$v.log)"
    continue
  fi
  "$python" -c 'import sys; print(sys.version.split()[0])' > "$cache/ok-$v"
  echo "$python"
done
