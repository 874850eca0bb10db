# What `cmake --install` and CPack ship, so that a kernel project's CI gets ropecheck without
# building it: the `ropecheck` executable (its fixtures compiled in, fixtures/CMakeLists.txt),
# the C kernel ABI header, the Python package (lib/python3/dist-packages/ropecheck,
# python/CMakeLists.txt), and an exported CMake package — find_package(ropecheck) gives the
# target ropecheck::kernel_abi (the header's include directory). Everything lands under the
# prefix. CPack builds a .deb whose dependencies dpkg-shlibdeps derives from the
# executable's shared libraries (docs/ci.md, "Installing ropecheck").
include(GNUInstallDirs)
include(CMakePackageConfigHelpers)

add_library(ropecheck_kernel_abi INTERFACE)
add_library(ropecheck::kernel_abi ALIAS ropecheck_kernel_abi)
target_include_directories(ropecheck_kernel_abi INTERFACE
                           $<BUILD_INTERFACE:${PROJECT_SOURCE_DIR}/include>
                           $<INSTALL_INTERFACE:${CMAKE_INSTALL_INCLUDEDIR}>)
set_target_properties(ropecheck_kernel_abi PROPERTIES EXPORT_NAME kernel_abi)

install(TARGETS ropecheck RUNTIME DESTINATION ${CMAKE_INSTALL_BINDIR})
install(TARGETS ropecheck_kernel_abi EXPORT ropecheck_targets)
install(FILES ${PROJECT_SOURCE_DIR}/include/ropecheck/kernel_abi.h
        DESTINATION ${CMAKE_INSTALL_INCLUDEDIR}/ropecheck)
set(ropecheck_cmake_dir ${CMAKE_INSTALL_LIBDIR}/cmake/ropecheck)
install(EXPORT ropecheck_targets NAMESPACE ropecheck:: FILE ropecheckTargets.cmake
        DESTINATION ${ropecheck_cmake_dir})
configure_package_config_file(${PROJECT_SOURCE_DIR}/cmake/ropecheckConfig.cmake.in
                              ${PROJECT_BINARY_DIR}/ropecheckConfig.cmake
                              INSTALL_DESTINATION ${ropecheck_cmake_dir})
write_basic_package_version_file(${PROJECT_BINARY_DIR}/ropecheckConfigVersion.cmake
                                 COMPATIBILITY SameMinorVersion)
install(FILES ${PROJECT_BINARY_DIR}/ropecheckConfig.cmake
              ${PROJECT_BINARY_DIR}/ropecheckConfigVersion.cmake
        DESTINATION ${ropecheck_cmake_dir})

set(CPACK_GENERATOR DEB)
set(CPACK_PACKAGE_NAME ropecheck)
set(CPACK_PACKAGE_VERSION ${PROJECT_VERSION})
set(CPACK_PACKAGE_DESCRIPTION_SUMMARY
    "Verification suite for Rotary Position Embedding kernels (gate, audit, C kernel ABI)")
set(CPACK_PACKAGE_CONTACT "ropecheck maintainers <ropecheck@localhost>")
set(CPACK_DEBIAN_FILE_NAME DEB-DEFAULT)  # ropecheck_<version>_<arch>.deb
set(CPACK_DEBIAN_PACKAGE_SHLIBDEPS ON)
set(CPACK_DEBIAN_PACKAGE_SECTION devel)
set(CPACK_PACKAGING_INSTALL_PREFIX /usr)
# Every destination is relative to the prefix: a package never writes the build machine's paths.
set(CPACK_ERROR_ON_ABSOLUTE_INSTALL_DESTINATION ON)
include(CPack)

# The installed package in use, with nothing of the build machine
# (cmake/installed-package-test.sh):
# - installed_package_installs_under_its_prefix: cmake --install (with DESTDIR) writes only
#   under the prefix, and no installed file names the source or build tree;
# - installed_package_builds_the_example_kernel: the example kernel builds against
#   find_package(ropecheck) there and the installed executable lists it;
# - installed_package_runs_without_the_source_tree: the installed gate (quick, fixtures judged),
#   apply and audit, and the installed Python package, with both trees hidden;
# - deb_package_runs_without_the_source_tree: the .deb, unpacked with dpkg -x into a throwaway
#   root, runs its gate and Python package with both trees hidden.
# The hidden runs need unshare --mount (root) and are skipped without it.
if(ROPECHECK_BUILD_TESTS)
  set(install_test bash ${PROJECT_SOURCE_DIR}/cmake/installed-package-test.sh)
  set(install_test_trees ${PROJECT_SOURCE_DIR} ${PROJECT_BINARY_DIR})
  set(install_test_dir ${PROJECT_BINARY_DIR}/installed_package_test)
  set(install_test_python "")  # the interpreter the module is built for, if it is
  if(ROPECHECK_PYTHON)
    set(install_test_python ${Python_EXECUTABLE})
  endif()
  add_test(NAME installed_package_installs_under_its_prefix
           COMMAND ${install_test} install ${install_test_trees} ${install_test_dir}
                   ${install_test_python})
  add_test(NAME installed_package_builds_the_example_kernel
           COMMAND ${CMAKE_COMMAND} -DPREFIX=${install_test_dir}/prefix
                   -DSOURCE_DIR=${PROJECT_SOURCE_DIR}
                   -DWORK_DIR=${install_test_dir}/example_kernel
                   -P ${PROJECT_SOURCE_DIR}/cmake/RopecheckInstallTest.cmake)
  add_test(NAME installed_package_runs_without_the_source_tree
           COMMAND ${install_test} run-hidden ${install_test_trees} ${install_test_dir}
                   ${install_test_python})
  add_test(NAME deb_package_runs_without_the_source_tree
           COMMAND ${install_test} deb ${install_test_trees} ${PROJECT_BINARY_DIR}/deb_package_test
                   ${install_test_python})
  set_tests_properties(installed_package_installs_under_its_prefix PROPERTIES
                       FIXTURES_SETUP ropecheck_installed)
  set_tests_properties(installed_package_builds_the_example_kernel
                       installed_package_runs_without_the_source_tree PROPERTIES
                       FIXTURES_REQUIRED ropecheck_installed)
  set_tests_properties(installed_package_installs_under_its_prefix
                       installed_package_builds_the_example_kernel
                       installed_package_runs_without_the_source_tree
                       deb_package_runs_without_the_source_tree PROPERTIES
                       LABELS install SKIP_RETURN_CODE 77 TIMEOUT 300 ENVIRONMENT
                       "CMAKE_COMMAND=${CMAKE_COMMAND};CPACK_COMMAND=${CMAKE_CPACK_COMMAND}")
  # cpack compresses the executable and the Python module: start it early in a parallel run.
  set_tests_properties(deb_package_runs_without_the_source_tree PROPERTIES COST 60)
  # A sanitizer build's executables keep absolute source names (installed-package-test.sh).
  if(CMAKE_CXX_FLAGS MATCHES "-fsanitize")
    set_property(TEST installed_package_installs_under_its_prefix APPEND PROPERTY ENVIRONMENT ROPECHECK_SANITIZED=1)
  endif()
endif()
