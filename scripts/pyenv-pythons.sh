#!/usr/bin/env bash
# Prints the pyenv interpreters, one path a line, oldest version first: the one place that knows
# where pyenv keeps them, so that the tests' CMake (tests/CMakeLists.txt) and scripts/test.sh
# find them wherever pyenv lives instead of naming /root/.pyenv.
#   scripts/pyenv-pythons.sh [VERSION_GLOB [PROGRAM]]   default: 3.* python3
#   scripts/pyenv-pythons.sh --root                      pyenv's root itself
# pyenv's root: `pyenv root` when pyenv is on PATH, else $PYENV_ROOT, else ~/.pyenv. Prints
# nothing (exit 0) when there is no pyenv or it holds no such interpreter.
set -euo pipefail
if [[ ${1:-} == --help || ${1:-} == -h ]]; then
  sed -n '2,8p' "$0" | sed 's/^# \{0,1\}//'
  exit 0
fi
root=
if command -v pyenv >/dev/null 2>&1; then root=$(pyenv root 2>/dev/null || true); fi
[[ -n $root ]] || root=${PYENV_ROOT:-$HOME/.pyenv}
if [[ ${1:-} == --root ]]; then
  echo "$root"
  exit 0
fi
glob=${1:-3.*}
program=${2:-python3}
found=()
# shellcheck disable=SC2231  # the version glob is meant to expand
for p in "$root"/versions/$glob/bin/"$program"; do [[ -x $p ]] && found+=("$p"); done
((${#found[@]})) || exit 0
printf '%s\n' "${found[@]}" | sort -V
