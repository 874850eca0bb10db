# ropecheck_add_test(NAME SOURCES a.cpp ... [LIBS ...] [LABELS ...] [RAPIDCHECK]
#                    [DEFINITIONS NAME=value ...] [DEPENDS target ...] [COST seconds])
# COST: a long test's expected seconds, so that ctest -j starts it first instead of leaving it
# as the tail of a parallel run (a fresh machine has no timing history).
# The one way C++ tests are registered: a GoogleTest executable, discovered test by test.
# ropecheck_add_pytest(NAME FILE test_x.py [LABELS ...] [TIMEOUT s]): the one way Python tests
# are (python/): pytest on one file with the built module on PYTHONPATH, label `python`.
include_guard(GLOBAL)
include(GoogleTest)

function(ropecheck_add_test name)
  if(NOT ROPECHECK_BUILD_TESTS)
    return()
  endif()
  cmake_parse_arguments(ARG "RAPIDCHECK" "COST" "SOURCES;LIBS;LABELS;DEFINITIONS;DEPENDS" ${ARGN})
  if(NOT ARG_COST)
    set(ARG_COST 0)
  endif()
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
    PROPERTIES LABELS "${ARG_LABELS}" COST ${ARG_COST}
    DISCOVERY_TIMEOUT 60)
endfunction()

# ropecheck_add_pytest(NAME FILE tests.py [LABELS ...] [TIMEOUT s] [COST s]): one pytest file as
# one ctest (label python), run against the module in the build tree.
function(ropecheck_add_pytest name)
  if(NOT ROPECHECK_BUILD_TESTS OR NOT ROPECHECK_PYTHON)
    return()
  endif()
  cmake_parse_arguments(ARG "" "FILE;TIMEOUT;COST" "LABELS" ${ARGN})
  if(NOT ARG_TIMEOUT)
    set(ARG_TIMEOUT 600)
  endif()
  if(NOT ARG_COST)
    set(ARG_COST 0)
  endif()
  file(MAKE_DIRECTORY ${PROJECT_BINARY_DIR}/pytest-tmp)  # --basetemp's parent must exist
  # -p no:cacheprovider: pytest writes no .pytest_cache into the source tree; --basetemp and
  # ROPECHECK_REPORT_DIR keep its temporary files and failing gates' reports in the build tree.
  add_test(NAME ${name}
           COMMAND ${Python_EXECUTABLE} -m pytest -q -p no:cacheprovider
                   --basetemp=${PROJECT_BINARY_DIR}/pytest-tmp/${name} ${ARG_FILE}
           WORKING_DIRECTORY ${PROJECT_SOURCE_DIR})
  set_tests_properties(${name} PROPERTIES
    LABELS "python;${ARG_LABELS}"
    TIMEOUT ${ARG_TIMEOUT}
    COST ${ARG_COST}
    ENVIRONMENT "PYTHONPATH=${PROJECT_BINARY_DIR}/python;ROPECHECK_EXE=$<TARGET_FILE:ropecheck>;PYTHONDONTWRITEBYTECODE=1;ROPECHECK_REPORT_DIR=${PROJECT_BINARY_DIR}/pytest-reports/${name}")
endfunction()
