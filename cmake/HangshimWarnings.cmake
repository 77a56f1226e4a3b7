# Warning flags for every first-party target: call hangshim_warnings(target).
set(HANGSHIM_WARNING_FLAGS -Wall -Wextra -Wpedantic -Wshadow -Wnon-virtual-dtor
    -Wcast-align -Wunused -Woverloaded-virtual -Wnull-dereference -Wformat=2)
if(HANGSHIM_WERROR)
  list(APPEND HANGSHIM_WARNING_FLAGS -Werror)
endif()

if(HANGSHIM_SANITIZE)
  string(REPLACE ";" "," _hangshim_san "${HANGSHIM_SANITIZE}")
  add_compile_options(-fsanitize=${_hangshim_san} -fno-omit-frame-pointer -fno-sanitize-recover=all)
  add_link_options(-fsanitize=${_hangshim_san})
endif()

# Fuzzing (scripts/fuzz.sh): every library gets libFuzzer's coverage instrumentation; the
# fuzz targets themselves link the fuzzer's main (tests/fuzz).
if(HANGSHIM_FUZZ)
  add_compile_options(-fsanitize=fuzzer-no-link)
endif()

function(hangshim_warnings target)
  target_compile_options(${target} PRIVATE
    $<$<COMPILE_LANGUAGE:CXX>:${HANGSHIM_WARNING_FLAGS}>
    $<$<COMPILE_LANGUAGE:C>:-Wall -Wextra $<$<BOOL:${HANGSHIM_WERROR}>:-Werror>>)
endfunction()
