#!/usr/bin/env bash
# Checks that release artifacts run where the release says they do:
#   scripts/check-portable.sh FLOOR FILE...        (e.g. 2.17 pyframes hangshim libhangshim.so)
# An executable must be static (no interpreter, no DT_NEEDED). A shared object may need only
# glibc's own libraries (libc, libm, libdl, libpthread, ld-linux), may bind no GLIBC_ or GLIBCXX_
# version newer than FLOOR (nor any GLIBCXX_/CXXABI_/GCC_ one: its C++ runtime is inside), and
# may export nothing but the NCCL API, dlsym/dlvsym and _exit/_Exit (the shim marks its ledger
# exited when a process leaves through os._exit). Prints one line per file; exit 1 if any fails.
set -euo pipefail
floor=$1
shift
allowed_needed='^(libc\.so\.6|libm\.so\.6|libdl\.so\.2|libpthread\.so\.0|ld-linux-x86-64\.so\.2)$'
status=0
newer_than_floor() {  # reads GLIBC_x.y versions, prints those above the floor
  awk -v floor="$floor" -F. '{ split(floor, f, "."); if ($1 > f[1] || ($1 == f[1] && $2 > f[2])) print "GLIBC_" $0 }'
}
for file in "$@"; do
  problems=()
  needed=$(readelf -d "$file" | sed -n 's/.*(NEEDED).*\[\(.*\)\]/\1/p')
  if readelf -h "$file" | grep -q 'EXEC\|DYN' && [[ $(readelf -h "$file" | awk '/Type:/{print $2}') == EXEC ]]; then
    readelf -l "$file" | grep -q INTERP && problems+=("has a program interpreter (not static)")
    [[ -n $needed ]] && problems+=("needs $(echo "$needed" | tr '\n' ' ')")
    summary="static"
  else
    bad_needed=$(echo "$needed" | grep -Ev "$allowed_needed" || true)
    [[ -n $bad_needed ]] && problems+=("needs $(echo "$bad_needed" | tr '\n' ' ')")
    versions=$(objdump -T "$file" | grep -o 'GLIBC_[0-9.]*' | sed 's/GLIBC_//' | sort -uV)
    too_new=$(echo "$versions" | newer_than_floor | tr '\n' ' ')
    [[ -n ${too_new// /} ]] && problems+=("binds $too_new")
    cxx=$(objdump -T "$file" | { grep -Eo '(GLIBCXX|CXXABI|GCC)_[0-9.]*' || true; } | sort -u | tr '\n' ' ')
    [[ -n ${cxx// /} ]] && problems+=("binds $cxx")
    exported=$(nm -D --defined-only "$file" | awk '{print $3}' | grep -Ev '^(nccl|pnccl)|^(dlsym|dlvsym|_exit|_Exit)$' | tr '\n' ' ' || true)
    [[ -n ${exported// /} ]] && problems+=("exports $exported")
    summary="needs $(echo "$needed" | tr '\n' ' '); newest GLIBC_$(echo "$versions" | tail -n 1)"
  fi
  if ((${#problems[@]})); then
    echo "check-portable: $file: FAILED: ${problems[*]}" >&2
    status=1
  else
    echo "check-portable: $file: ok ($summary)"
  fi
done
exit $status
