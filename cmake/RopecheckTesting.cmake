# ropecheck_add_test(NAME SOURCES a.cpp ... [LIBS ...] [LABELS ...] [RAPIDCHECK])
# The one way tests are registered: a GoogleTest executable, discovered test by test.
include_guard(GLOBAL)
include(GoogleTest)

function(ropecheck_add_test name)
  if(NOT ROPECHECK_BUILD_TESTS)
    return()
  endif()
  cmake_parse_arguments(ARG "RAPIDCHECK" "" "SOURCES;LIBS;LABELS" ${ARGN})
  add_executable(${name} ${ARG_SOURCES})
  target_link_libraries(${name} PRIVATE ${ARG_LIBS} GTest::gtest GTest::gtest_main
                        ropecheck::warnings)
  if(ARG_RAPIDCHECK)
    # rapidcheck_gtest does not pull GTest in by itself.
    target_link_libraries(${name} PRIVATE rapidcheck_gtest rapidcheck)
  endif()
  target_compile_definitions(${name} PRIVATE
    ROPECHECK_SOURCE_DIR="${PROJECT_SOURCE_DIR}"
    ROPECHECK_SHARED_DIR="${PROJECT_SOURCE_DIR}/../shared")
  gtest_discover_tests(${name}
    WORKING_DIRECTORY ${PROJECT_SOURCE_DIR}
    PROPERTIES LABELS "${ARG_LABELS}"
    DISCOVERY_TIMEOUT 60)
endfunction()
