#!/usr/bin/env bash
# usage: build-pythons.sh [--cache DIR] [NAME...]   (names: 3.13t 3.14t 3.14-shared, the default)
# Builds the CPython variants no distribution here ships, for the tests: free-threaded 3.13t and
# 3.14t (--disable-gil) and a shared-libpython 3.14 (--enable-shared). The sources are the
# release tarballs Ubuntu's archive republishes (python3.X_*.orig.tar.xz, checked against the
# SHA-256 of the archive's signed Sources index); python.org and PyPI cannot be reached here.
# Builds go to a cache outside the checkout (--cache, HANGSHIM_PYTHONS_CACHE; default
# ~/.cache/hangshim/pythons, beside scripts/newer-pythons.sh's), into build/NAME, never into
# the system. Idempotent: a build already there (ok-NAME beside it) is kept. Prints one line per
# interpreter: its path, or "build-pythons: skipped NAME: why" (its tests are then left out,
# never passed). Exit status 0 unless the arguments are wrong (2).
set -euo pipefail
cache=${HANGSHIM_PYTHONS_CACHE:-${XDG_CACHE_HOME:-$HOME/.cache}/hangshim/pythons}
names=()
while (($#)); do
  case $1 in
    --cache) (($# > 1)) || { echo "build-pythons: --cache needs a directory (see --help)" >&2; exit 2; }
             cache=$2; shift ;;
    -h|--help) sed -n '2,11p' "$0" | sed 's/^# \{0,1\}//'; exit 0 ;;
    3.13t|3.14t|3.14-shared) names+=("$1") ;;
    *) echo "build-pythons: unknown argument '$1' (names: 3.13t, 3.14t, 3.14-shared; see --help)" >&2; exit 2 ;;
  esac
  shift
done
((${#names[@]})) || names=(3.13t 3.14t 3.14-shared)

archive=http://archive.ubuntu.com/ubuntu
# Where each minor version's source package is (the newest suite that has it).
declare -A suites=([3.13]="questing/main plucky/main" [3.14]="resolute/main questing/universe")
skip() { echo "build-pythons: skipped $1: $2"; }
mkdir -p "$cache/src" "$cache/build" "$cache/logs"

# The tarball of minor version $1: downloads it into $cache/src once, prints its path.
source_tarball() {
  local minor=$1 suite index entry name sum
  for suite in ${suites[$minor]}; do
    index=$cache/src/Sources-${suite//\//-}.xz
    [[ -s $index ]] || curl -fsS --max-time 120 -o "$index" "$archive/dists/${suite%/*}/${suite#*/}/source/Sources.xz" \
      2>>"$cache/logs/download.log" || { rm -f "$index"; continue; }
    # The Checksums-Sha256 line of the orig tarball in the python3.X stanza.
    entry=$(xzcat "$index" | awk -v pkg="python$minor" '
      /^Package: /{inside = ($2 == pkg)} inside && /^Directory: /{dir = $2}
      inside && /^Checksums-Sha256:/{sha = 1; next} /^[^ ]/{sha = 0}
      inside && sha && $3 ~ /\.orig\.tar\.xz$/{print dir, $1, $3; exit}')
    [[ -n $entry ]] || continue
    read -r dir sum name <<<"$entry"
    if [[ ! -s $cache/src/$name ]] || ! sha256sum -c --status <<<"$sum  $cache/src/$name"; then
      curl -fsS --max-time 600 -o "$cache/src/$name.part" "$archive/$dir/$name" 2>>"$cache/logs/download.log" || continue
      sha256sum -c --status <<<"$sum  $cache/src/$name.part" || { echo "$name: SHA-256 mismatch" >>"$cache/logs/download.log"; continue; }
      mv "$cache/src/$name.part" "$cache/src/$name"
    fi
    echo "$cache/src/$name"
    return 0
  done
  return 1
}

for name in "${names[@]}"; do
  minor=${name%%[!0-9.]*}
  prefix=$cache/build/$name
  suffix=; [[ $name == *t ]] && suffix=t
  python=$prefix/bin/python$minor$suffix
  # One build of a variant at a time (two set-ups at once wait here, then find it built).
  exec {lock}>"$cache/lock-$name"
  flock "$lock"
  if [[ -x $python && -e $cache/ok-$name ]]; then echo "$python"; exec {lock}>&-; continue; fi
  for tool in curl xzcat sha256sum make gcc flock; do
    command -v $tool >/dev/null || { skip "$name" "$tool is not installed (scripts/setup.sh installs it)"; continue 2; }
  done
  if ! tarball=$(source_tarball "$minor"); then
    skip "$name" "no CPython $minor source could be downloaded from $archive (see $cache/logs/download.log)"
    continue
  fi
  work=$cache/work/$name
  if ! rm -rf "$work" "$prefix" || ! mkdir -p "$work"; then
    skip "$name" "$work could not be emptied for the build"
    continue
  fi
  log=$cache/logs/build-$name.log
  options=(--prefix="$prefix" --without-ensurepip --disable-test-modules)
  [[ $suffix == t ]] && options+=(--disable-gil)
  # Shared: the interpreter finds its libpython by DT_RUNPATH, as pyenv's do.
  [[ $name == *-shared || $suffix == t ]] && options+=(--enable-shared "LDFLAGS=-Wl,-rpath,$prefix/lib")
  echo "build-pythons: building $name from $(basename "$tarball") (a few minutes; log: $log)" >&2
  # -O1 without debug information: half the build time of CPython's -O3 -g, and the same
  # object layouts, which is what the tests read (pyframes never uses the debug information).
  # The install byte-compiles only the top of the standard library (-l); the rest is compiled
  # when first imported, as for any module.
  if ! (tar -xf "$tarball" -C "$work" --strip-components=1 && cd "$work" && ./configure "${options[@]}" &&
        make -j"$(nproc)" OPT="-DNDEBUG -O1" && make install COMPILEALL_OPTS="-j0 -l") >"$log" 2>&1; then
    skip "$name" "the build failed (see $log)"
    continue
  fi
  rm -rf "$work"
  want_gil=True; [[ $suffix == t ]] && want_gil=False
  if ! "$python" -c 'import sys, ctypes, threading; g = getattr(sys, "_is_gil_enabled", lambda: True)(); sys.exit(str(g) != sys.argv[1])' \
       "$want_gil" >>"$log" 2>&1; then
    skip "$name" "$python does not start, or its GIL is not as built (see $log)"
    continue
  fi
  "$python" -c 'import sys; print(sys.version.split()[0])' > "$cache/ok-$name"
  echo "$python"
  exec {lock}>&-
done
