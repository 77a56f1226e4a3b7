# HANGSHIM_PORTABLE=ON: the release build (scripts/release.sh), whose programs run on any x86-64
# Linux with an old glibc and nothing else installed. The development build is unchanged.
#   * pyframes and hangshim: static, non-PIE executables (libelf, libunwind, zlib, liblzma, {fmt}
#     and glibc linked in): no shared library to be missing, no symbol version to be too new,
#     and no dynamic linking at start-up.
#   * libhangshim.so: libelf, zlib, libstdc++ and libgcc inside it, every symbol but the NCCL
#     API and dlsym/dlvsym hidden; linked against HANGSHIM_PORTABLE_SYSROOT, an old glibc's
#     development files (release.sh: Ubuntu 20.04's, glibc 2.31), so it binds no symbol version
#     that glibc did not have; preload/portable/ supplies the few newer symbols that Debian's
#     static libstdc++, libgcc and libelf ask for.
option(HANGSHIM_PORTABLE "Release build: static CLIs and a self-contained, old-glibc-safe shim" OFF)
set(HANGSHIM_PORTABLE_SYSROOT "" CACHE PATH "Root of an old glibc's libc6-dev that libhangshim.so links against (portable build)")

# No-ops unless HANGSHIM_PORTABLE; called by pyframes/ and preload/ for their executables.
function(hangshim_portable_executable target)
  if(HANGSHIM_PORTABLE)
    target_link_options(${target} PRIVATE -static -no-pie)
  endif()
endfunction()

if(NOT HANGSHIM_PORTABLE)
  return()
endif()
if(HANGSHIM_SANITIZE)
  message(FATAL_ERROR "HANGSHIM_PORTABLE and HANGSHIM_SANITIZE do not go together (sanitizers need shared runtimes)")
endif()
if(NOT HANGSHIM_PORTABLE_SYSROOT OR NOT EXISTS "${HANGSHIM_PORTABLE_SYSROOT}/usr/include/stdio.h")
  message(FATAL_ERROR "HANGSHIM_PORTABLE needs HANGSHIM_PORTABLE_SYSROOT: a root with an old libc6-dev "
                      "(scripts/make-roots.sh focal makes Ubuntu 20.04's; scripts/release.sh passes it)")
endif()

function(hangshim_static_archive var name package)
  find_library(${var} NAMES lib${name}.a NO_CACHE)
  if(NOT ${var})
    message(FATAL_ERROR "lib${name}.a is missing: apt-get install -y ${package} (or run scripts/setup.sh)")
  endif()
  set(${var} ${${var}} PARENT_SCOPE)
endfunction()
hangshim_static_archive(HANGSHIM_LIBELF_A elf libelf-dev)
hangshim_static_archive(HANGSHIM_LIBZ_A z zlib1g-dev)
hangshim_static_archive(HANGSHIM_LIBLZMA_A lzma liblzma-dev)
hangshim_static_archive(HANGSHIM_LIBUNWIND_X86_64_A unwind-x86_64 libunwind-dev)
hangshim_static_archive(HANGSHIM_LIBUNWIND_A unwind libunwind-dev)

# {fmt}: Debian ships no libfmt.a, so its out-of-line part is compiled here (the same file the
# shim compiles in; the shim links libpyframes.a by file and does not get this one too).
add_library(hangshim_fmt STATIC ${PROJECT_SOURCE_DIR}/preload/shim/fmt_in_shim.cpp)
target_include_directories(hangshim_fmt PUBLIC ${FMT_INCLUDE_DIRS})

# libunwind's remote unwinder (libunwind-x86_64.a) refers to one member of the local one,
# libunwind.a: setcontext.o (for resuming a local cursor, which pyframes never does). Only that
# member is taken: the rest of libunwind.a defines _Unwind_* too, clashing with libgcc_eh.
set(HANGSHIM_UNWIND_SETCONTEXT_O ${PROJECT_BINARY_DIR}/portable/setcontext.o)
file(MAKE_DIRECTORY ${PROJECT_BINARY_DIR}/portable)  # the working directory below, made before the build runs there
add_custom_command(OUTPUT ${HANGSHIM_UNWIND_SETCONTEXT_O}
  COMMAND ${CMAKE_AR} x ${HANGSHIM_LIBUNWIND_A} setcontext.o
  WORKING_DIRECTORY ${PROJECT_BINARY_DIR}/portable
  DEPENDS ${HANGSHIM_LIBUNWIND_A}
  COMMENT "setcontext.o out of libunwind.a")
add_library(hangshim_unwind_setcontext STATIC ${HANGSHIM_UNWIND_SETCONTEXT_O})
set_target_properties(hangshim_unwind_setcontext PROPERTIES LINKER_LANGUAGE C)

# The pkg-config targets the sources link against now name the static archives.
set_property(TARGET PkgConfig::FMT PROPERTY INTERFACE_LINK_LIBRARIES hangshim_fmt)
set_property(TARGET PkgConfig::ZLIB PROPERTY INTERFACE_LINK_LIBRARIES ${HANGSHIM_LIBZ_A})
set_property(TARGET PkgConfig::LIBELF PROPERTY INTERFACE_LINK_LIBRARIES ${HANGSHIM_LIBELF_A} ${HANGSHIM_LIBZ_A})
set_property(TARGET PkgConfig::LIBUNWIND_GENERIC PROPERTY INTERFACE_LINK_LIBRARIES
             ${HANGSHIM_LIBUNWIND_X86_64_A} hangshim_unwind_setcontext ${HANGSHIM_LIBLZMA_A})

# libelf for the shim: Debian's libelf.a is position-independent except elf_error.o (its error
# state is local-exec TLS, which a shared object cannot hold); the copy below leaves that member
# out and preload/portable/libelf_error.cpp takes its place.
set(HANGSHIM_SHIM_LIBELF_A ${PROJECT_BINARY_DIR}/portable/libelf_pic.a)
add_custom_command(OUTPUT ${HANGSHIM_SHIM_LIBELF_A}
  COMMAND ${CMAKE_COMMAND} -E make_directory ${PROJECT_BINARY_DIR}/portable
  COMMAND ${CMAKE_COMMAND} -E copy ${HANGSHIM_LIBELF_A} ${HANGSHIM_SHIM_LIBELF_A}
  COMMAND ${CMAKE_AR} d ${HANGSHIM_SHIM_LIBELF_A} elf_error.o
  DEPENDS ${HANGSHIM_LIBELF_A}
  COMMENT "libelf.a without elf_error.o, for libhangshim.so")
add_custom_target(hangshim_shim_libelf DEPENDS ${HANGSHIM_SHIM_LIBELF_A})

# What every portable shared library gets: the compat objects for the symbols Debian's static
# libstdc++ and libgcc ask of a newer glibc (preload/portable/), static libstdc++ and libgcc with
# their symbols hidden, and the old glibc to link against. Called for libhangshim.so below and
# for the NCCL stand-in of the release tests (standin/: built, never installed).
function(hangshim_portable_shared_library target)
  target_sources(${target} PRIVATE ${PROJECT_SOURCE_DIR}/preload/portable/glibc_compat.cpp
                 ${PROJECT_SOURCE_DIR}/preload/portable/dl_find_object.cpp
                 ${PROJECT_SOURCE_DIR}/preload/portable/thread_atexit.cpp)
  # libpthread and libdl by name: before glibc 2.34 they are separate libraries, which
  # FindThreads and CMAKE_DL_LIBS, looking at the host's glibc, do not know. By soname: a root's
  # libdl.so is an absolute symlink, which would lead to the host's.
  target_link_libraries(${target} PRIVATE -l:libpthread.so.0 -l:libdl.so.2)
  # The old glibc's crt files, libc.so, libc_nonshared.a, libm, libdl and libpthread; gcc's own
  # libraries (static libstdc++ and libgcc) still come from the compiler. --sysroot alone is not
  # enough: gcc searches the host's multiarch directory before the sysroot's, so those go first
  # (-B for the crt files, -L for the libraries); --sysroot makes libc.so's absolute paths the
  # root's.
  set(_root ${HANGSHIM_PORTABLE_SYSROOT})
  target_link_options(${target} PRIVATE --sysroot=${_root} -B${_root}/usr/lib/x86_64-linux-gnu
                      -L${_root}/lib/x86_64-linux-gnu -L${_root}/usr/lib/x86_64-linux-gnu
                      -static-libstdc++ -static-libgcc -Wl,--exclude-libs,ALL)
endfunction()

# What preload/CMakeLists.txt adds to libhangshim.so in the portable build: libelf (without its
# local-exec TLS member, preload/portable/libelf_error.cpp in its place) and zlib inside it.
function(hangshim_portable_shim target)
  target_sources(${target} PRIVATE ${PROJECT_SOURCE_DIR}/preload/portable/libelf_error.cpp)
  add_dependencies(${target} hangshim_shim_libelf)
  target_link_libraries(${target} PRIVATE ${HANGSHIM_SHIM_LIBELF_A} ${HANGSHIM_LIBZ_A})
  hangshim_portable_shared_library(${target})
endfunction()
