# Runs one fuzz target for SECONDS on a fresh copy of its seed corpus;
# fails when the fuzzer reports a finding (its exit code is non-zero).
file(REMOVE_RECURSE ${WORK})
file(MAKE_DIRECTORY ${WORK}/corpus ${WORK}/artifacts)
file(GLOB seeds ${SEEDS}/*)
file(COPY ${seeds} DESTINATION ${WORK}/corpus)
execute_process(
  COMMAND ${FUZZER} ${WORK}/corpus -max_total_time=${SECONDS}
          -artifact_prefix=${WORK}/artifacts/ -print_final_stats=1
  RESULT_VARIABLE result)
if(NOT result EQUAL 0)
  message(FATAL_ERROR "${FUZZER} found a crash (exit ${result}); the input "
                      "is in ${WORK}/artifacts")
endif()
