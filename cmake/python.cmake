# python.cmake - the `kettle` Python module (python/): the C extension
# kettle._kettle over the engine's layers, and python/kettle/__init__.py
# around it.  In the build tree it is assembled in BUILD/python/kettle (the
# `python` test puts BUILD/python on PYTHONPATH); `pip install .`
# (pyproject.toml, scikit-build-core) installs it with the kettle program,
# which runs the benches for kettle.bench.
set(KETTLE_HAVE_PYTHON OFF)
if(NOT KETTLE_PYTHON STREQUAL "OFF")
  # A sanitized extension cannot load into an unsanitized interpreter.
  if(KETTLE_SANITIZE OR KETTLE_FUZZ)
    if(KETTLE_PYTHON STREQUAL "ON")
      message(FATAL_ERROR "KETTLE_PYTHON=ON does not go with sanitizers or fuzzing")
    endif()
  else()
    find_package(Python3 COMPONENTS Interpreter Development.Module)
  endif()
  if(Python3_FOUND AND NOT SKBUILD)
    # the tests need NumPy and pytest beside the interpreter
    execute_process(COMMAND ${Python3_EXECUTABLE} -c "import numpy, pytest"
      RESULT_VARIABLE kettle_python_modules OUTPUT_QUIET ERROR_QUIET)
  endif()
  if(Python3_FOUND AND (SKBUILD OR kettle_python_modules EQUAL 0))
    set(KETTLE_HAVE_PYTHON ON)
  elseif(KETTLE_PYTHON STREQUAL "ON")
    message(FATAL_ERROR "KETTLE_PYTHON=ON needs Python 3 with its headers, NumPy and pytest "
                        "(Debian: python3-dev python3-numpy python3-pytest)")
  elseif(NOT KETTLE_SANITIZE AND NOT KETTLE_FUZZ)
    message(STATUS "Kettle: no Python 3 headers, NumPy or pytest: no Python module "
                   "(Debian: python3-dev python3-numpy python3-pytest)")
  endif()
endif()

if(KETTLE_HAVE_PYTHON)
  set(KETTLE_PYTHON_DIR ${CMAKE_CURRENT_BINARY_DIR}/python/kettle)
  Python3_add_library(kettle_python MODULE WITH_SOABI python/_kettle.c)
  set_target_properties(kettle_python PROPERTIES OUTPUT_NAME _kettle
    LIBRARY_OUTPUT_DIRECTORY ${KETTLE_PYTHON_DIR})
  target_link_libraries(kettle_python PRIVATE kettle_perform)
  if(KETTLE_HAVE_CUDA)
    set_target_properties(kettle_python PROPERTIES LINKER_LANGUAGE CUDA)
  endif()
  add_custom_command(OUTPUT ${KETTLE_PYTHON_DIR}/__init__.py
    COMMAND ${CMAKE_COMMAND} -E copy ${CMAKE_CURRENT_SOURCE_DIR}/python/kettle/__init__.py
            ${KETTLE_PYTHON_DIR}/__init__.py
    DEPENDS ${CMAKE_CURRENT_SOURCE_DIR}/python/kettle/__init__.py)
  add_custom_target(kettle_python_files ALL DEPENDS ${KETTLE_PYTHON_DIR}/__init__.py)
  if(SKBUILD)
    install(TARGETS kettle_python LIBRARY DESTINATION kettle COMPONENT python)
    install(TARGETS kettle RUNTIME DESTINATION ${SKBUILD_SCRIPTS_DIR} COMPONENT python)
  endif()
endif()
