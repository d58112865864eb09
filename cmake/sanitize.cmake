# XS_SANITIZE / XS_FUZZ (docs/fuzzing.md): one clang build tree serves the sanitizer run of the
# test suite and the fuzz targets. Every target is compiled with ASan+UBSan (XS_SAN_OPT, default
# -O1; frame pointers; UB is fatal). With XS_FUZZ the harness executables link libFuzzer, and
# libFuzzer's coverage instrumentation (-fsanitize=fuzzer-no-link: edge counters plus comparison
# tracing) goes only to the layers that read input (XS_FUZZ_COVERED_LAYERS, the CLI's flag layer
# and the harnesses): instrumenting the simulation layers as well made the test suite under the
# sanitizers about twice as slow (about 22 min against 11 min 52 s on 2 cores, docs/performance.md
# "CI time") and guides no parser.
if(XS_FUZZ)
  set(XS_SANITIZE ON)
  if(NOT CMAKE_CXX_COMPILER_ID STREQUAL "Clang")
    message(FATAL_ERROR "XS_FUZZ needs clang (libFuzzer): configure with -DCMAKE_CXX_COMPILER=clang++-14")
  endif()
endif()
set(XS_SAN_OPT "-O1" CACHE STRING "Optimisation level of the sanitizer tree")
set(XS_FUZZ_COVERED_LAYERS core config calib hw workload numerics scenario validation)
# The simulation layers (they get validated inputs). With XS_SAN_FULL (default) they are
# sanitized like every other target; without it they keep UBSan but not ASan, at XS_SIM_OPT: the
# suite under the sanitizers then runs in about half the time (docs/performance.md, "CI time").
set(XS_SIM_LAYERS compute net mapping engine serve cost report api)
set(XS_SIM_OPT "-O2" CACHE STRING "Optimisation level of the simulation layers in the sanitizer tree")
option(XS_SAN_FULL "Sanitizer tree: ASan on the simulation layers as well" ON)
set(XS_FUZZ_COVERAGE "")
if(XS_SANITIZE)
  set(XS_SANITIZERS -fsanitize=address,undefined -fno-sanitize-recover=undefined -fno-omit-frame-pointer)
  add_compile_options(${XS_SANITIZERS} ${XS_SAN_OPT} -g1)
  add_link_options(${XS_SANITIZERS})
  if(XS_FUZZ)
    set(XS_FUZZ_COVERAGE -fsanitize=fuzzer-no-link)
  endif()
  message(STATUS "xpusim: ASan+UBSan build ${XS_SAN_OPT} (fuzz targets: ${XS_FUZZ})")
endif()

# xs_sanitize_layer(TARGET LAYER): in the sanitizer tree a simulation layer (XS_SIM_LAYERS) keeps
# UBSan (less its vptr check, a runtime type lookup on every polymorphic access) but not ASan, at
# XS_SIM_OPT; with XS_SAN_FULL it keeps both, like every other target.
function(xs_sanitize_layer target layer)
  if(XS_SANITIZE AND NOT XS_SAN_FULL AND layer IN_LIST XS_SIM_LAYERS)
    target_compile_options(${target} PRIVATE -fno-sanitize=address,vptr ${XS_SIM_OPT})
  endif()
endfunction()

# xs_fuzz_cover(TARGET): libFuzzer's coverage instrumentation on TARGET in a fuzz tree.
function(xs_fuzz_cover target)
  if(XS_FUZZ_COVERAGE)
    target_compile_options(${target} PRIVATE ${XS_FUZZ_COVERAGE})
  endif()
endfunction()
