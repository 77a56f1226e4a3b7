# Every dependency comes from a Debian package. A missing one stops the configure step with the
# package name and the command that installs it, instead of a cryptic link error later.
find_package(PkgConfig)
if(NOT PKG_CONFIG_FOUND)
  message(FATAL_ERROR "pkg-config is missing: apt-get install -y pkg-config (or run scripts/setup.sh)")
endif()

function(hangshim_require_pkg name module package)
  pkg_check_modules(${name} IMPORTED_TARGET ${module})
  if(NOT ${name}_FOUND)
    message(FATAL_ERROR "${module} is missing: apt-get install -y ${package} (or run scripts/setup.sh)")
  endif()
endfunction()

hangshim_require_pkg(LIBELF libelf libelf-dev)
hangshim_require_pkg(LIBDW libdw libdw-dev)
hangshim_require_pkg(LIBUNWIND libunwind libunwind-dev)
hangshim_require_pkg(LIBUNWIND_PTRACE libunwind-ptrace libunwind-dev)
hangshim_require_pkg(LIBUNWIND_COREDUMP libunwind-coredump libunwind-dev)
hangshim_require_pkg(LIBUNWIND_GENERIC libunwind-generic libunwind-dev)
hangshim_require_pkg(FMT fmt libfmt-dev)
hangshim_require_pkg(ZLIB zlib zlib1g-dev)

find_path(DOCTEST_INCLUDE_DIR doctest/doctest.h)
if(HANGSHIM_BUILD_TESTS AND NOT DOCTEST_INCLUDE_DIR)
  message(FATAL_ERROR "doctest is missing: apt-get install -y doctest-dev (or run scripts/setup.sh)")
endif()

find_package(Threads REQUIRED)

# NCCL headers (no library: the shim resolves NCCL at run time). Searched in NCCL_ROOT,
# CUDAToolkit_ROOT and /usr/local/cuda. Optional for pyframes, required for the shim.
find_path(NCCL_INCLUDE_DIR nccl.h
  HINTS ${NCCL_ROOT} $ENV{NCCL_ROOT} ${CUDAToolkit_ROOT} $ENV{CUDAToolkit_ROOT} /usr/local/cuda
  PATH_SUFFIXES include)
if(NCCL_INCLUDE_DIR)
  message(STATUS "nccl.h: ${NCCL_INCLUDE_DIR}")
else()
  message(WARNING "nccl.h not found (set NCCL_ROOT or CUDAToolkit_ROOT): the shim and the NCCL stand-in are not built")
endif()
