# Shared compile options for host C++ targets: warnings, Werror, sanitizers.
add_library(parplan_options INTERFACE)
add_library(parplan::options ALIAS parplan_options)
target_compile_options(parplan_options INTERFACE
  $<$<COMPILE_LANGUAGE:CXX>:-Wall -Wextra -Wpedantic -Wno-unused-parameter>)
# GCC 12 reports false -Wrestrict overlaps inside std::string concatenation at -O2/-O3
# (GCC bugs 105329, 105651), which breaks Release builds under -Werror.
if(CMAKE_CXX_COMPILER_ID STREQUAL "GNU" AND CMAKE_CXX_COMPILER_VERSION VERSION_LESS 13)
  target_compile_options(parplan_options INTERFACE $<$<COMPILE_LANGUAGE:CXX>:-Wno-restrict>)
endif()
if(PARPLAN_WERROR)
  target_compile_options(parplan_options INTERFACE $<$<COMPILE_LANGUAGE:CXX>:-Werror>)
endif()
target_include_directories(parplan_options INTERFACE
  "${PROJECT_SOURCE_DIR}" "${PROJECT_BINARY_DIR}/generated")

if(PARPLAN_SANITIZE)
  string(REPLACE ";" "," _parplan_san "${PARPLAN_SANITIZE}")
  target_compile_options(parplan_options INTERFACE
    $<$<COMPILE_LANGUAGE:CXX>:-fsanitize=${_parplan_san} -fno-omit-frame-pointer -fno-sanitize-recover=all>)
  target_link_options(parplan_options INTERFACE -fsanitize=${_parplan_san})
endif()

# libFuzzer: clang only. Every library gets coverage instrumentation; the fuzz targets
# (tests/fuzz) link the fuzzer runtime.
if(PARPLAN_ENABLE_FUZZERS)
  if(NOT CMAKE_CXX_COMPILER_ID MATCHES "Clang")
    message(FATAL_ERROR
      "PARPLAN_ENABLE_FUZZERS needs clang's libFuzzer, not ${CMAKE_CXX_COMPILER_ID}: configure "
      "a separate build folder with -DCMAKE_CXX_COMPILER=clang++ -DCMAKE_C_COMPILER=clang "
      "(Debian: apt-get install clang libclang-rt-14-dev), or run tools/fuzz.sh, which does.")
  endif()
  target_compile_options(parplan_options INTERFACE
    $<$<COMPILE_LANGUAGE:CXX>:-fsanitize=fuzzer-no-link>)
endif()
