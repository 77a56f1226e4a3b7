# What each fuzz target's code (tests/fuzz/fuzz_TARGET.cpp) needs beyond pyframes' public API, in
# one place for the two builds of that code: the fuzzers (tests/fuzz, clang) and the replay of the
# committed findings (tests/fuzz/replay, every build).
#   hangshim_fuzz_targets(OUT): the targets this build can make (ledger needs the preload library,
#     flight_recorder the report library; both need nccl.h)
#   hangshim_fuzz_needs(EXE TARGET): gives EXE, built from fuzz_TARGET.cpp, what TARGET needs

# The engine's targets test its internals (pyframes/src); ledger sees only pyframes' public API,
# like preload itself.
set(HANGSHIM_FUZZ_ENGINE_TARGETS linetable elf core walker)

function(hangshim_fuzz_targets out)
  set(targets ${HANGSHIM_FUZZ_ENGINE_TARGETS})
  if(TARGET preload_core)
    list(APPEND targets ledger)
  endif()
  if(TARGET hangshim_report)
    list(APPEND targets flight_recorder)
  endif()
  set(${out} ${targets} PARENT_SCOPE)
endfunction()

function(hangshim_fuzz_needs exe target)
  if(target IN_LIST HANGSHIM_FUZZ_ENGINE_TARGETS)
    target_link_libraries(${exe} PRIVATE pyframes_internals)
  elseif(target STREQUAL "ledger")
    # What `hangshim ledger` renders, compiled in.
    target_sources(${exe} PRIVATE ${PROJECT_SOURCE_DIR}/preload/cli/ledger_text.cpp
                                  ${PROJECT_SOURCE_DIR}/preload/cli/ledger_json.cpp)
    target_link_libraries(${exe} PRIVATE preload_core)
    target_include_directories(${exe} PRIVATE ${PROJECT_SOURCE_DIR}/preload)
  elseif(target STREQUAL "flight_recorder")
    # The Flight Recorder dump reader, through the report's analysis and the export.
    target_link_libraries(${exe} PRIVATE hangshim_report preload_core)
    target_include_directories(${exe} PRIVATE ${PROJECT_SOURCE_DIR}/preload)
  else()
    message(FATAL_ERROR "hangshim_fuzz_needs: no fuzz target named ${target}")
  endif()
endfunction()
