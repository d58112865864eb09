# Helpers shared by every layer.

set(XS_WARNINGS -Wall -Wextra -Wpedantic -Wshadow)
if(CMAKE_CXX_COMPILER_ID STREQUAL "GNU")
  list(APPEND XS_WARNINGS -Wno-maybe-uninitialized -Wno-restrict)  # gcc-only false positives
endif()

# xs_add_layer(NAME SOURCES ... DEPS ...): one static library per layer, public headers in
# include/xpusim/NAME. Layering is enforced by the include path: each layer gets its own include
# root in the build tree holding only the link xpusim/NAME -> include/xpusim/NAME, and that root
# is the library's only PUBLIC include directory. Dependencies are linked PUBLIC, so a layer (and
# a test or app) sees exactly the headers of itself and the layers it links, transitively; an
# #include of a layer above (a back-edge) is "No such file" at compile time (tests/layering).
function(xs_add_layer name)
  cmake_parse_arguments(ARG "" "" "SOURCES;DEPS" ${ARGN})
  add_library(xpusim_${name} STATIC ${ARG_SOURCES})
  set(root ${CMAKE_BINARY_DIR}/layer_include/${name})
  file(MAKE_DIRECTORY ${root}/xpusim)
  if(NOT EXISTS ${root}/xpusim/${name})
    file(CREATE_LINK ${PROJECT_SOURCE_DIR}/include/xpusim/${name} ${root}/xpusim/${name} SYMBOLIC)
  endif()
  target_include_directories(xpusim_${name} PUBLIC ${root} PRIVATE ${CMAKE_CURRENT_SOURCE_DIR})
  target_link_libraries(xpusim_${name} PUBLIC ${ARG_DEPS})
  target_compile_options(xpusim_${name} PRIVATE ${XS_WARNINGS})
  if(XS_WERROR)
    target_compile_options(xpusim_${name} PRIVATE -Werror)
  endif()
  if(name IN_LIST XS_FUZZ_COVERED_LAYERS)
    xs_fuzz_cover(xpusim_${name})
  endif()
  xs_sanitize_layer(xpusim_${name} ${name})
endfunction()

# xs_add_test(NAME SOURCES ... DEPS ... [LABELS ...] [COST N]): one GoogleTest binary, discovered
# by CTest. COST orders a parallel ctest run (higher first): a fresh machine has no timings of its
# own, and the long end-to-end tests started last would finish alone on one core.
function(xs_add_test name)
  cmake_parse_arguments(ARG "" "COST" "SOURCES;DEPS;LABELS" ${ARGN})
  add_executable(${name} ${ARG_SOURCES})
  target_link_libraries(${name} PRIVATE ${ARG_DEPS} GTest::gtest_main)
  target_compile_options(${name} PRIVATE ${XS_WARNINGS})
  target_compile_definitions(${name} PRIVATE XS_TESTDATA_DIR="${PROJECT_SOURCE_DIR}/data")
  if(NOT ARG_LABELS)
    set(ARG_LABELS fast)
  endif()
  if(NOT ARG_COST)
    set(ARG_COST 0)
  endif()
  gtest_discover_tests(${name} PROPERTIES LABELS "${ARG_LABELS}" COST ${ARG_COST} DISCOVERY_TIMEOUT 60)
endfunction()
