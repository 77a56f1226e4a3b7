#!/usr/bin/env bash
# release/artifacts: scripts/check-portable.sh on build-release's pyframes, hangshim and
# libhangshim.so; exit 77 (skipped) when scripts/release.sh has not made them.
#   check_artifacts.sh BUILD_DIR CHECK_PORTABLE_SH
set -u
build=$1
files=("$build/pyframes/pyframes" "$build/preload/hangshim" "$build/preload/libhangshim.so")
for file in "${files[@]}"; do
  if [[ ! -e $file ]]; then
    echo "SKIPPED: $file is missing: scripts/release.sh builds the release into $build"
    exit 77
  fi
done
exec "$2" 2.17 "${files[@]}"
