# XS_SANITIZE / XS_FUZZ (docs/fuzzing.md): one clang build tree serves the sanitizer run of the
# test suite and the fuzz targets. Every target is compiled with ASan+UBSan (-O1, frame pointers,
# UB is fatal); with XS_FUZZ the libraries also get libFuzzer's coverage instrumentation
# (-fsanitize=fuzzer-no-link) and only the harness executables link libFuzzer itself.
if(XS_FUZZ)
  set(XS_SANITIZE ON)
  if(NOT CMAKE_CXX_COMPILER_ID STREQUAL "Clang")
    message(FATAL_ERROR "XS_FUZZ needs clang (libFuzzer): configure with -DCMAKE_CXX_COMPILER=clang++-14")
  endif()
endif()
if(XS_SANITIZE)
  set(XS_SANITIZERS -fsanitize=address,undefined -fno-sanitize-recover=undefined -fno-omit-frame-pointer)
  add_compile_options(${XS_SANITIZERS} -O1 -g1)
  add_link_options(${XS_SANITIZERS})
  if(XS_FUZZ)
    add_compile_options(-fsanitize=fuzzer-no-link)
  endif()
  message(STATUS "xpusim: ASan+UBSan build (fuzz targets: ${XS_FUZZ})")
endif()
