# The development build's `pyframes` command, linked statically (-static -no-pie): libelf,
# libunwind-x86_64, zlib, liblzma, {fmt}, libstdc++ and glibc inside it, like the release build's
# (cmake/HangshimPortable.cmake). A dump of a live process is short, so start-up is a large
# share of it: linked against its nine shared libraries the command spent ~1.6 ms of CPU in the
# dynamic loader and relocations before main() (LD_DEBUG=statistics, perf stat), static ~0.2 ms
# (docs/benchmarks.md, "pyframes").
#
# Off where a static link cannot work or is not wanted: sanitizers (their runtimes are shared),
# the portable build (which links the command its own way), libFuzzer builds, or when a static
# archive is missing (a message names the package and the dynamic link is used). Off by choice:
# -DHANGSHIM_STATIC_PYFRAMES=OFF, e.g. to preload something into pyframes (LD_PRELOAD needs a
# dynamic program: tests/bench/native_bench.py's ptrace clock).
option(HANGSHIM_STATIC_PYFRAMES "Link the pyframes command statically (faster start-up)" ON)

# Sets PYFRAMES_STATIC_COMMAND to TRUE when the static link is possible, and defines
# pyframes_static_deps: the static archives the engine needs, in link order.
set(PYFRAMES_STATIC_COMMAND FALSE)
if(NOT HANGSHIM_STATIC_PYFRAMES OR HANGSHIM_PORTABLE OR HANGSHIM_SANITIZE OR HANGSHIM_FUZZ)
  return()
endif()

set(_pyframes_missing "")
foreach(_entry "elf;libelf-dev" "z;zlib1g-dev" "lzma;liblzma-dev" "unwind-x86_64;libunwind-dev" "unwind;libunwind-dev")
  list(GET _entry 0 _name)
  list(GET _entry 1 _package)
  string(MAKE_C_IDENTIFIER "PYFRAMES_LIB_${_name}_A" _var)
  find_library(${_var} NAMES lib${_name}.a NO_CACHE)
  if(NOT ${_var})
    list(APPEND _pyframes_missing "lib${_name}.a (${_package})")
  endif()
endforeach()
execute_process(COMMAND ${CMAKE_CXX_COMPILER} -print-file-name=libstdc++.a
                OUTPUT_VARIABLE _pyframes_libstdcxx_a OUTPUT_STRIP_TRAILING_WHITESPACE)
if(NOT IS_ABSOLUTE "${_pyframes_libstdcxx_a}")
  list(APPEND _pyframes_missing "libstdc++.a (libstdc++-dev)")
endif()
if(_pyframes_missing)
  list(JOIN _pyframes_missing ", " _pyframes_missing)
  message(STATUS "pyframes: linked dynamically (slower start-up): ${_pyframes_missing} missing")
  return()
endif()

# {fmt}: Debian ships no libfmt.a, so its out-of-line part is compiled here (the same file the
# shim and the portable build compile in).
add_library(pyframes_static_fmt STATIC ${PROJECT_SOURCE_DIR}/preload/shim/fmt_in_shim.cpp)
target_include_directories(pyframes_static_fmt PUBLIC ${FMT_INCLUDE_DIRS})

# libunwind-x86_64.a refers to one member of libunwind.a, setcontext.o (for resuming a local
# cursor, which pyframes never does); only that member is taken, the rest of libunwind.a defines
# _Unwind_* too, clashing with libgcc_eh.
set(_pyframes_setcontext_o ${CMAKE_CURRENT_BINARY_DIR}/static/setcontext.o)
file(MAKE_DIRECTORY ${CMAKE_CURRENT_BINARY_DIR}/static)
add_custom_command(OUTPUT ${_pyframes_setcontext_o}
  COMMAND ${CMAKE_AR} x ${PYFRAMES_LIB_unwind_A} setcontext.o
  WORKING_DIRECTORY ${CMAKE_CURRENT_BINARY_DIR}/static
  DEPENDS ${PYFRAMES_LIB_unwind_A}
  COMMENT "setcontext.o out of libunwind.a (static pyframes)")
add_library(pyframes_static_setcontext STATIC ${_pyframes_setcontext_o})
set_target_properties(pyframes_static_setcontext PROPERTIES LINKER_LANGUAGE C)

add_library(pyframes_static_deps INTERFACE)
target_link_libraries(pyframes_static_deps INTERFACE pyframes_static_fmt ${PYFRAMES_LIB_elf_A} ${PYFRAMES_LIB_z_A}
                      ${PYFRAMES_LIB_unwind_x86_64_A} pyframes_static_setcontext ${PYFRAMES_LIB_lzma_A}
                      Threads::Threads)
set(PYFRAMES_STATIC_COMMAND TRUE)
