#!/usr/bin/env bash
# usage: newer-pythons.sh [--cache DIR] [VERSION...]   (versions: 3.14 3.15, the default)
# Installs CPython interpreters newer than Debian 12 ships for the tests: Debian unstable's own
# builds (python3.X-minimal, libpython3.X-stdlib and the C library they were built with),
# unpacked into a cache outside the checkout (--cache, HANGSHIM_PYTHONS_CACHE; default
# ~/.cache/hangshim/pythons), never into the system, and pointed at that C library with
# patchelf; and their C headers (libpython3.X-dev's usr/include, of the same version) for the
# tests that build a C extension. Idempotent: an interpreter already there is kept. Prints one
# line per interpreter: its path, or "newer-pythons: skipped VERSION: why" (its tests are then
# left out, never passed); missing headers get a line on stderr and leave out only the C
# extension's tests. Exit status 0 unless the arguments are wrong (2).
set -euo pipefail
cache=${HANGSHIM_PYTHONS_CACHE:-${XDG_CACHE_HOME:-$HOME/.cache}/hangshim/pythons}
versions=()
while (($#)); do
  case $1 in
    --cache) (($# > 1)) || { echo "newer-pythons: --cache needs a directory (see --help)" >&2; exit 2; }
             cache=$2; shift ;;
    -h|--help) sed -n '2,11p' "$0" | sed 's/^# \{0,1\}//'; exit 0 ;;
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

wanted=()     # interpreters to download
headerless=()  # interpreters there, without their headers
for v in "${versions[@]}"; do
  if [[ -x $root/usr/bin/python$v && -e $cache/ok-$v ]]; then
    echo "$root/usr/bin/python$v"
    [[ -e $root/usr/include/python$v/Python.h ]] || headerless+=("$v")
    continue
  fi
  wanted+=("$v")
done
((${#wanted[@]} + ${#headerless[@]})) || exit 0

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

# The headers of interpreter $v (usr/include only: Python.h and Debian's multiarch pyconfig.h),
# from libpython$v-dev of the interpreter's own version; added beside it, never replacing it.
headers() {
  local v=$1 deb version
  rm -f "$cache/debs/"*.deb
  if ! (cd "$cache/debs" && apt-get "${options[@]}" download "libpython$v-dev" >"$apt/download-dev-$v.log" 2>&1); then
    echo "newer-pythons: no C headers for $v: libpython$v-dev could not be downloaded (see $apt/download-dev-$v.log); its C extension tests are left out" >&2
    return 0
  fi
  deb=$(echo "$cache/debs/libpython$v-dev_"*.deb)
  version=$(dpkg-deb -f "$deb" Version)
  version=${version%%-*}
  if [[ ${version//\~/} != "$(cat "$cache/ok-$v")" ]]; then
    echo "newer-pythons: no C headers for $v: Debian unstable's are of $version, the interpreter is $(cat "$cache/ok-$v") (remove $cache/ok-$v to download both again); its C extension tests are left out" >&2
    return 0
  fi
  dpkg-deb --fsys-tarfile "$deb" | tar -x -C "$root" ./usr/include 2>>"$apt/unpack-dev-$v.log" ||
    echo "newer-pythons: no C headers for $v: they could not be unpacked (see $apt/unpack-dev-$v.log)" >&2
}
for v in "${headerless[@]}"; do headers "$v"; done

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
  headers "$v"
done
