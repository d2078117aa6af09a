# Runs one picture sample and checks its frames (see CMakeLists.txt):
#   cmake -DSAMPLE=... -DCHECK=... -DBACKEND=... -DOUTPUT=DIR -DFRAMES=N -DWIDTH=W -DHEIGHT=H
#         [-DREFERENCE=DIR -DMAX_FRACTION=F] -P run_sample.cmake
file(REMOVE_RECURSE ${OUTPUT})
execute_process(
  COMMAND ${SAMPLE} --backend ${BACKEND} --frames ${FRAMES} --size ${WIDTH}x${HEIGHT} --output-dir ${OUTPUT}
  RESULT_VARIABLE result
  OUTPUT_VARIABLE output
  ERROR_VARIABLE error)
message("${output}${error}")
if(NOT result EQUAL 0)
  message(FATAL_ERROR "${SAMPLE} exited with ${result}")
endif()
string(REGEX MATCHALL "backend ${BACKEND} " lines "${output}")
list(LENGTH lines count)
if(NOT count EQUAL FRAMES)
  message(FATAL_ERROR "expected ${FRAMES} frame lines on backend ${BACKEND}, got ${count}")
endif()
set(check_args ${OUTPUT} ${FRAMES} ${WIDTH} ${HEIGHT})
if(DEFINED REFERENCE)
  list(APPEND check_args ${REFERENCE} ${MAX_FRACTION})
endif()
execute_process(COMMAND ${CHECK} ${check_args} RESULT_VARIABLE result)
if(NOT result EQUAL 0)
  message(FATAL_ERROR "the frames in ${OUTPUT} failed their checks")
endif()
