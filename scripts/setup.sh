#!/usr/bin/env bash
# Installs the build dependencies (Debian packages; idempotent, non-interactive) and builds
# hangshim into ${HANGSHIM_BUILD_DIR:-build}. Extra arguments go to the cmake configure step.
#   scripts/setup.sh [-DHANGSHIM_WERROR=ON ...]
# HANGSHIM_SETUP_DEPS_ONLY=1: install the packages, build nothing.
set -euo pipefail
if [[ ${1:-} == --help || ${1:-} == -h ]]; then
  sed -n '2,5p' "$0" | sed 's/^# \{0,1\}//'
  exit 0
fi
top=$(cd "$(dirname "$0")/.." && pwd)
build=${HANGSHIM_BUILD_DIR:-$top/build}

# What the build needs, then what only the tests use (installed while the project compiles).
build_packages=(build-essential cmake pkg-config libelf-dev libdw-dev libunwind-dev libfmt-dev zlib1g-dev
                doctest-dev python3)
test_packages=(gdb gdbserver procps shellcheck
               clang libclang-rt-14-dev llvm strace  # fuzzers and sanitizer runs (scripts/fuzz.sh, test.sh), fault tests
               python3-torch  # Debian's PyTorch 1.13 (CPU) for /usr/bin/python3.11: gloo and torchrun (tests/system/torch)
               slurm-wlm munge pdsh openssh-server openssh-client  # tests/system/cluster: the collectors against a real SLURM, pdsh and sshd
               patchelf  # scripts/newer-pythons.sh: Debian unstable's CPython 3.14 and 3.15 for the tests
               curl xz-utils libffi-dev libbz2-dev liblzma-dev libexpat1-dev  # scripts/build-pythons.sh: CPython from source
               chromium  # tests/preload/report/run_html_case.py: the HTML report in a real (headless) browser
               python3-build python3-wheel python3-venv  # tests/system/install/run_wheel_test.py: the pip package
               debootstrap)  # scripts/make-roots.sh: the distribution roots of the release and tests/system/release

# Installs the packages of its arguments that are missing.
install_missing() {
  local missing=() p sudo=()
  for p in "$@"; do
    dpkg-query -W -f='${Status}' "$p" 2>/dev/null | grep -q "install ok installed" || missing+=("$p")
  done
  ((${#missing[@]})) || return 0
  echo "setup: installing ${missing[*]}" >&2
  [[ $(id -u) -ne 0 ]] && sudo=(sudo)
  export DEBIAN_FRONTEND=noninteractive
  "${sudo[@]}" apt-get update -qq
  "${sudo[@]}" apt-get install -y -qq --no-install-recommends "${missing[@]}" >/dev/null
}

# The test packages; then, at once, the distribution roots the release is proven on (and whose
# Ubuntu 20.04 glibc its shim links against: scripts/make-roots.sh, minutes each, mostly
# downloads) and the interpreters newer than Debian 12's and the variants no distribution here
# ships, into caches outside the checkout (the configure step finds the interpreters there).
# HANGSHIM_ROOTS=0, HANGSHIM_NEWER_PYTHONS=0, HANGSHIM_BUILD_PYTHONS=0 leave them out. A failure of
# any of these scripts costs those tests only, never the set-up.
test_components() {
  install_missing "${test_packages[@]}"
  local roots=
  if [[ ${HANGSHIM_ROOTS:-1} != 0 ]]; then
    { "$top/scripts/make-roots.sh" >&2 ||
        echo "setup: scripts/make-roots.sh failed: the release and the release tests of the missing roots are skipped" >&2; } &
    roots=$!
  fi
  [[ ${HANGSHIM_NEWER_PYTHONS:-1} == 0 ]] || "$top/scripts/newer-pythons.sh" >&2 ||
    echo "setup: scripts/newer-pythons.sh failed: the CPython 3.14 and 3.15 tests are left out" >&2
  # The free-threaded 3.13t and 3.14t and a shared-libpython 3.14, built from CPython's sources
  # (HANGSHIM_PYTHON_VARIANTS: which of them; scripts/test.sh leaves 3.14-shared to --full).
  # shellcheck disable=SC2086  # one name per word
  [[ ${HANGSHIM_BUILD_PYTHONS:-1} == 0 ]] || "$top/scripts/build-pythons.sh" ${HANGSHIM_PYTHON_VARIANTS:-} >&2 ||
    echo "setup: scripts/build-pythons.sh failed: the free-threaded and shared 3.14 tests are left out" >&2
  [[ -z $roots ]] || wait "$roots"
}

install_missing "${build_packages[@]}"
if [[ ${HANGSHIM_SETUP_DEPS_ONLY:-0} == 1 ]]; then
  test_components
  exit 0
fi
# The test components install and the interpreters build while the project compiles: apt, the
# downloads and CPython's configure steps leave the cores idle much of the time. The configure
# step runs again once they are there, for the tests (and C extensions) of the new interpreters.
test_components &
components=$!
cmake -S "$top" -B "$build" -DCMAKE_BUILD_TYPE=RelWithDebInfo "$@" >/dev/null
cmake --build "$build" -j"$(nproc)" || { wait "$components" || true; exit 1; }
wait "$components"
cmake -S "$top" -B "$build" >/dev/null
cmake --build "$build" -j"$(nproc)"
# The release (build-release/, dist/) for tests/system/release: with the default build only, not the
# sanitizer builds. HANGSHIM_RELEASE=0 leaves it out (scripts/test.sh builds it in the background
# instead); a failure costs those tests only.
if [[ ${HANGSHIM_RELEASE:-1} != 0 && $build == "$top/build" ]]; then
  HANGSHIM_RELEASE_JOBS=$(nproc) "$top/scripts/release.sh" >&2 ||
    echo "setup: scripts/release.sh failed: the release tests are skipped" >&2
fi
