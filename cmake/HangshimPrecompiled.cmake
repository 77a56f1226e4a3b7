# Precompiled headers for the larger targets: the standard headers and {fmt} that most of their
# files include are parsed once per target instead of once per file (a quarter less compile
# time measured on the ASan build's report files; every stage of scripts/test.sh compiles the
# sources again with other flags, so this counts several times). Each target precompiles with its
# own flags (CMake keeps them consistent); HANGSHIM_PCH=OFF compiles without.
option(HANGSHIM_PCH "Precompile the standard and {fmt} headers of the larger targets" ON)
set(HANGSHIM_PCH_HEADERS <algorithm> <cstdint> <cstring> <map> <memory> <optional> <string> <string_view>
    <unordered_map> <vector> <fmt/format.h>)

# hangshim_precompiled_headers(target [HEADERS extra...] [SKIP source...]): C++ files only; a
# SKIP file compiles without (doctest's main defines the configuration before its include).
function(hangshim_precompiled_headers target)
  if(NOT HANGSHIM_PCH)
    return()
  endif()
  cmake_parse_arguments(_pch "" "" "HEADERS;SKIP" ${ARGN})
  foreach(_header ${HANGSHIM_PCH_HEADERS} ${_pch_HEADERS})
    target_precompile_headers(${target} PRIVATE "$<$<COMPILE_LANGUAGE:CXX>:${_header}>")
  endforeach()
  if(_pch_SKIP)
    set_source_files_properties(${_pch_SKIP} TARGET_DIRECTORY ${target} PROPERTIES SKIP_PRECOMPILE_HEADERS ON)
  endif()
endfunction()
