# What `cmake --install` and CPack ship, so that a kernel project's CI gets ropecheck without
# building it: the `ropecheck` executable, the C kernel ABI header, and an exported CMake
# package — find_package(ropecheck) gives the target ropecheck::kernel_abi (the header's
# include directory). CPack builds a .deb whose dependencies dpkg-shlibdeps derives from the
# executable's shared libraries (README.md, "Installing ropecheck").
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
include(CPack)

# The installed package in use: install into a temporary prefix, build the example kernel
# against find_package(ropecheck) there, and list it with the installed executable.
if(ROPECHECK_BUILD_TESTS)
  add_test(NAME installed_package_builds_the_example_kernel
           COMMAND ${CMAKE_COMMAND} -DBUILD_DIR=${PROJECT_BINARY_DIR}
                   -DSOURCE_DIR=${PROJECT_SOURCE_DIR}
                   -DWORK_DIR=${PROJECT_BINARY_DIR}/installed_package_test
                   -P ${PROJECT_SOURCE_DIR}/cmake/RopecheckInstallTest.cmake)
  set_tests_properties(installed_package_builds_the_example_kernel PROPERTIES LABELS install)
endif()
