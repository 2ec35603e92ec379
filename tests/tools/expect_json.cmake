# Runs a command with --json and fails unless it exits with EXPECT_EXIT, its stdout is one
# JSON document (nothing else: progress and errors go to stderr), and every check holds. A
# check is KEY/KEY/...=VALUE, the keys a path into the document (array indices as numbers),
# VALUE the member's text (a string's contents, a number or true/false); VALUE * only asks
# that the member exist.
#   cmake -DCOMMAND=<program>,<arg>,... -DEXPECT_EXIT=<code> -DCHECKS=<check>&... -P this
string(REPLACE "," ";" command "${COMMAND}")
execute_process(COMMAND ${command} RESULT_VARIABLE code OUTPUT_VARIABLE document
                ERROR_VARIABLE errors)
if(NOT "${code}" STREQUAL "${EXPECT_EXIT}")
  message(FATAL_ERROR "exit code ${code}, expected ${EXPECT_EXIT}, from ${command}:\n${document}\n${errors}")
endif()
string(JSON command_name ERROR_VARIABLE parse_error GET "${document}" command)
if(parse_error)
  message(FATAL_ERROR "stdout of ${command} is not one JSON document (${parse_error}):\n${document}")
endif()
string(JSON exit_code GET "${document}" exit_code)
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
  string(JSON have ERROR_VARIABLE missing GET "${document}" ${keys})
  if(missing)
    message(FATAL_ERROR "${path}: not in the document (${missing}):\n${document}")
  endif()
  if(NOT want STREQUAL "*" AND NOT "${have}" STREQUAL "${want}")
    message(FATAL_ERROR "${path} is '${have}', expected '${want}':\n${document}")
  endif()
endforeach()
