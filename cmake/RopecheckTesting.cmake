# ropecheck_add_test(NAME SOURCES a.cpp ... [LIBS ...] [LABELS ...] [RAPIDCHECK]
#                    [DEFINITIONS NAME=value ...] [DEPENDS target ...])
# The one way tests are registered: a GoogleTest executable, discovered test by test.
include_guard(GLOBAL)
include(GoogleTest)

function(ropecheck_add_test name)
  if(NOT ROPECHECK_BUILD_TESTS)
    return()
  endif()
  cmake_parse_arguments(ARG "RAPIDCHECK" "" "SOURCES;LIBS;LABELS;DEFINITIONS;DEPENDS" ${ARGN})
  add_executable(${name} ${ARG_SOURCES})
  target_link_libraries(${name} PRIVATE ${ARG_LIBS} GTest::gtest GTest::gtest_main
                        ropecheck::warnings)
  if(ARG_RAPIDCHECK)
    # rapidcheck_gtest does not pull GTest in by itself.
    target_link_libraries(${name} PRIVATE rapidcheck_gtest rapidcheck)
  endif()
  target_compile_definitions(${name} PRIVATE
    ROPECHECK_SOURCE_DIR="${PROJECT_SOURCE_DIR}"
    ${ARG_DEFINITIONS})
  if(ARG_DEPENDS)
    add_dependencies(${name} ${ARG_DEPENDS})
  endif()
  gtest_discover_tests(${name}
    WORKING_DIRECTORY ${PROJECT_SOURCE_DIR}
    NO_PRETTY_VALUES  # the name generators name each case; the value dump stays out of ctest names
    PROPERTIES LABELS "${ARG_LABELS}"
    DISCOVERY_TIMEOUT 60)
endfunction()
