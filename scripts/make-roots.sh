#!/usr/bin/env bash
# Makes the minimal root filesystems of the distributions the release is proven on (debootstrap,
# from their own archives), once per machine, into a cache outside the checkout:
#   scripts/make-roots.sh [focal|jammy|noble|bullseye ...]     (default: all four)
# Each root has that system's python3, venv, pip and gdb, and nothing of hangshim's build.
# focal (Ubuntu 20.04, glibc 2.31) also carries libc6-dev: it is the sysroot the portable shim is
# linked against (scripts/release.sh), so that no symbol newer than its glibc is bound.
# A root is complete only once ROOT/.hangshim-root-complete exists; the roots are made at once,
# and a lock per root keeps concurrent callers (setup, release, tests) from building one twice. Needs root and debootstrap.
# HANGSHIM_ROOTS_DIR: where the roots go (default ~/.cache/hangshim/roots).
# Exit status: 0 all requested roots are there; 1 one could not be made (the reason is printed).
set -euo pipefail
if [[ ${1:-} == --help || ${1:-} == -h ]]; then
  sed -n '2,10p' "$0" | sed 's/^# \{0,1\}//'
  exit 0
fi
roots=${HANGSHIM_ROOTS_DIR:-$HOME/.cache/hangshim/roots}
systems=("$@")
((${#systems[@]})) || systems=(focal jammy noble bullseye)

ubuntu_mirror=http://archive.ubuntu.com/ubuntu
debian_mirror=http://deb.debian.org/debian
# Debian 12 has no Ubuntu archive keyring package: this one (noble's, holding the 2012 and 2018
# archive keys that sign focal, jammy and noble) is fetched from Ubuntu's pool and pinned here.
ubuntu_keyring_deb=pool/main/u/ubuntu-keyring/ubuntu-keyring_2023.11.28.1_all.deb
ubuntu_keyring_sha256=36de43b15853ccae0028e9a767613770c704833f82586f28eb262f0311adb8a8

die() { echo "make-roots: $*" >&2; exit 1; }
command -v debootstrap >/dev/null || die "debootstrap is missing: apt-get install -y debootstrap (scripts/setup.sh installs it)"
[[ $(id -u) -eq 0 ]] || die "debootstrap needs root"
mkdir -p "$roots"

ubuntu_keyring() {
  local keyring=$roots/ubuntu-archive-keyring.gpg
  if [[ ! -s $keyring ]]; then
    local tmp
    tmp=$(mktemp -d)
    curl -fsS -m 120 -o "$tmp/keyring.deb" "$ubuntu_mirror/$ubuntu_keyring_deb" || { rm -rf "$tmp"; return 1; }
    echo "$ubuntu_keyring_sha256  $tmp/keyring.deb" | sha256sum -c --quiet - || { rm -rf "$tmp"; return 1; }
    dpkg-deb -x "$tmp/keyring.deb" "$tmp/x"
    cp "$tmp/x/usr/share/keyrings/ubuntu-archive-keyring.gpg" "$keyring.tmp" && mv "$keyring.tmp" "$keyring"
    rm -rf "$tmp"
  fi
  echo "$keyring"
}

# apt-get install inside a root, with /proc mounted for the duration (always unmounted).
install_in_root() {
  local dir=$1
  shift
  cp /etc/resolv.conf "$dir/etc/resolv.conf" 2>/dev/null || true
  mount -t proc proc "$dir/proc"
  local status=0
  chroot "$dir" env DEBIAN_FRONTEND=noninteractive apt-get install -y -q --no-install-recommends "$@" || status=$?
  umount "$dir/proc"
  return $status
}

make_root() {
  local name=$1 dir=$roots/$1
  [[ -e $dir/.hangshim-root-complete ]] && return 0
  # gdb comes after, with the root's own apt: in debootstrap's one-pass configure, its
  # dependencies (libsource-highlight on jammy and bullseye) fail to configure.
  local packages=python3,python3-venv,python3-pip,procps
  local args=(--variant=minbase)
  case $name in
    focal | jammy | noble)
      local keyring
      keyring=$(ubuntu_keyring) || { echo "make-roots: $name: the Ubuntu archive keyring could not be fetched from $ubuntu_mirror" >&2; return 1; }
      args+=("--components=main,universe" "--keyring=$keyring")
      [[ $name == focal ]] && packages+=,libc6-dev
      args+=("--include=$packages" "$name" "$dir.partial" "$ubuntu_mirror" /usr/share/debootstrap/scripts/gutsy) ;;
    bullseye)
      args+=("--include=$packages" "$name" "$dir.partial" "$debian_mirror") ;;
    *) echo "make-roots: unknown system $name (focal, jammy, noble, bullseye)" >&2; return 1 ;;
  esac
  rm -rf "$dir.partial" "$dir"
  echo "make-roots: $name: debootstrap into $dir (a few minutes)" >&2
  if ! debootstrap "${args[@]}" >"$roots/$name.log" 2>&1; then
    echo "make-roots: $name: debootstrap failed (archive unreachable?); last lines of $roots/$name.log:" >&2
    tail -n 5 "$roots/$name.log" >&2
    rm -rf "$dir.partial"
    return 1
  fi
  if ! install_in_root "$dir.partial" gdb >>"$roots/$name.log" 2>&1; then
    echo "make-roots: $name: apt-get install gdb failed in the root; see $roots/$name.log" >&2
    rm -rf "$dir.partial"
    return 1
  fi
  rm -rf "$dir.partial/var/cache/apt/archives/"*.deb "$dir.partial/var/lib/apt/lists/"*_Packages
  touch "$dir.partial/.hangshim-root-complete"
  mv "$dir.partial" "$dir"
  echo "make-roots: $name: done" >&2
}

# The roots are made at once (each is mostly downloads and unpacking); the Ubuntu keyring they
# share is fetched first, by one process.
for name in "${systems[@]}"; do
  case $name in focal | jammy | noble) [[ -e $roots/$name/.hangshim-root-complete ]] || ubuntu_keyring >/dev/null || true; break ;; esac
done
builders=()
for name in "${systems[@]}"; do
  # One builder per root; others wait for it, then find it complete.
  (
    exec 9>"$roots/.$name.lock"
    flock 9
    make_root "$name"
  ) &
  builders+=($!)
done
status=0
for pid in "${builders[@]}"; do wait "$pid" || status=1; done
exit $status
