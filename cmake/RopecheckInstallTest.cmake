# ctest installed_package_builds_the_example_kernel (cmake -P): configure and build
# examples/installed_package against PREFIX, which the ctest
# installed_package_installs_under_its_prefix filled, then list the built kernel with the
# installed `ropecheck kernels --kernel-lib`. Fails on any step's exit code.
file(REMOVE_RECURSE ${WORK_DIR})
function(step)
  execute_process(COMMAND ${ARGN} RESULT_VARIABLE code OUTPUT_VARIABLE out ERROR_VARIABLE err)
  if(NOT code EQUAL 0)
    message(FATAL_ERROR "failed (${code}): ${ARGN}\n${out}\n${err}")
  endif()
  set(step_output "${out}" PARENT_SCOPE)
endfunction()
if(NOT EXISTS ${PREFIX}/bin/ropecheck)
  message(FATAL_ERROR "nothing installed in ${PREFIX}")
endif()
step(${CMAKE_COMMAND} -S ${SOURCE_DIR}/examples/installed_package -B ${WORK_DIR}/build
     -DCMAKE_PREFIX_PATH=${PREFIX} -DCMAKE_BUILD_TYPE=Release)
step(${CMAKE_COMMAND} --build ${WORK_DIR}/build)
step(${PREFIX}/bin/ropecheck kernels --json --kernel-lib ${WORK_DIR}/build/libfloat32_recipe_rope.so)
if(NOT step_output MATCHES "\"name\": \"float32_recipe\"")
  message(FATAL_ERROR "the installed ropecheck does not list the kernel built against the package:\n${step_output}")
endif()
message(STATUS "installed package: OK")
