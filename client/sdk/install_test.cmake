# Run by ctest (fairq_client_install_test): installs the SDK component of
# the build at BUILD_DIR into WORK_DIR/prefix, then configures, builds and
# runs test_consumer/ against it. Any failing step fails the test.
function(run what)
  execute_process(COMMAND ${ARGN} RESULT_VARIABLE rc OUTPUT_VARIABLE out
                  ERROR_VARIABLE out)
  if(NOT rc EQUAL 0)
    message(FATAL_ERROR "${what} failed (${rc}):\n${out}")
  endif()
  message(STATUS "${what}: ok")
endfunction()

file(REMOVE_RECURSE ${WORK_DIR})
run("install" ${CMAKE_COMMAND} --install ${BUILD_DIR}
    --prefix ${WORK_DIR}/prefix --component fairq_client)
run("configure consumer" ${CMAKE_COMMAND} -S ${CONSUMER_DIR}
    -B ${WORK_DIR}/build -G ${GENERATOR}
    -DCMAKE_MAKE_PROGRAM=${MAKE_PROGRAM}
    -DCMAKE_CXX_COMPILER=${CXX}
    -DCMAKE_CXX_COMPILER_LAUNCHER=${LAUNCHER}
    -DCMAKE_PREFIX_PATH=${WORK_DIR}/prefix)
run("build consumer" ${CMAKE_COMMAND} --build ${WORK_DIR}/build)
run("run consumer" ${WORK_DIR}/build/fairq_consumer)
