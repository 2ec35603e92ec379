# Runs a command and fails unless it exits with EXPECT_EXIT and its output (stdout and stderr
# together) matches EXPECT_OUTPUT: ctest's PASS_REGULAR_EXPRESSION alone ignores the exit
# code, which is what tools/commands.h promises.
#   cmake -DCOMMAND=<program>,<arg>,... -DEXPECT_EXIT=<code> -DEXPECT_OUTPUT=<regex> -P this
string(REPLACE "," ";" command "${COMMAND}")
execute_process(COMMAND ${command} RESULT_VARIABLE code OUTPUT_VARIABLE output
                ERROR_VARIABLE output)
if(NOT "${code}" STREQUAL "${EXPECT_EXIT}")
  message(FATAL_ERROR "exit code ${code}, expected ${EXPECT_EXIT}, from ${command}:\n${output}")
endif()
if(NOT "${output}" MATCHES "${EXPECT_OUTPUT}")
  message(FATAL_ERROR "output of ${command} does not match '${EXPECT_OUTPUT}':\n${output}")
endif()
