# Runs a command and fails unless it exits with EXPECT_EXIT and, where given:
# - EXPECT_OUTPUT: its output (stdout and stderr together) matches the regex (ctest's
#   PASS_REGULAR_EXPRESSION alone ignores the exit code, which is what tools/commands.h
#   promises);
# - CHECKS (for --json): its stdout is one JSON document (progress and errors go to stderr)
#   whose exit_code is the process's and every check holds. A check is KEY/KEY/...=VALUE, the
#   keys a path into the document (array indices as numbers), VALUE the member's text (a
#   string's contents, a number, ON/OFF for true/false); VALUE * only asks that it exist.
#   Checks are separated by &.
#   cmake -DCOMMAND=<program>,<arg>,... -DEXPECT_EXIT=<code> [-DEXPECT_OUTPUT=<regex>]
#         [-DCHECKS=<check>&...] -P this
string(REPLACE "," ";" command "${COMMAND}")
if(DEFINED CHECKS)
  execute_process(COMMAND ${command} RESULT_VARIABLE code OUTPUT_VARIABLE stdout
                  ERROR_VARIABLE stderr)
  set(output "${stdout}${stderr}")
else()  # the two streams interleaved as written
  execute_process(COMMAND ${command} RESULT_VARIABLE code OUTPUT_VARIABLE output
                  ERROR_VARIABLE output)
endif()
if(NOT "${code}" STREQUAL "${EXPECT_EXIT}")
  message(FATAL_ERROR "exit code ${code}, expected ${EXPECT_EXIT}, from ${command}:\n${output}")
endif()
if(DEFINED EXPECT_OUTPUT AND NOT "${output}" MATCHES "${EXPECT_OUTPUT}")
  message(FATAL_ERROR "output of ${command} does not match '${EXPECT_OUTPUT}':\n${output}")
endif()
if(NOT DEFINED CHECKS)
  return()
endif()
string(JSON command_name ERROR_VARIABLE parse_error GET "${stdout}" command)
if(parse_error)
  message(FATAL_ERROR "stdout of ${command} is not one JSON document (${parse_error}):\n${stdout}")
endif()
string(JSON exit_code GET "${stdout}" exit_code)
if(NOT "${exit_code}" STREQUAL "${EXPECT_EXIT}")
  message(FATAL_ERROR "the document's exit_code is ${exit_code}, the process's ${code}")
endif()
string(REPLACE "&" ";" checks "${CHECKS}")
foreach(check IN LISTS checks)
  string(FIND "${check}" "=" at REVERSE)
  string(SUBSTRING "${check}" 0 ${at} path)
  math(EXPR value_at "${at} + 1")
  string(SUBSTRING "${check}" ${value_at} -1 want)
  string(REPLACE "/" ";" keys "${path}")
  string(JSON have ERROR_VARIABLE missing GET "${stdout}" ${keys})
  if(missing)
    message(FATAL_ERROR "${path}: not in the document (${missing}):\n${stdout}")
  endif()
  if(NOT want STREQUAL "*" AND NOT "${have}" STREQUAL "${want}")
    message(FATAL_ERROR "${path} is '${have}', expected '${want}':\n${stdout}")
  endif()
endforeach()
