# Which libmujoco Myriad links: the C library and headers of the PyPI `mujoco` wheel, the same
# package (and version) the Python side imports.
#   MYRIAD_MUJOCO_DIR  the wheel's package folder (holding libmujoco.so.X and include/mujoco/);
#                      by default asked of the venv's Python (`import mujoco`).
#   MYRIAD_MUJOCO=system links Debian's libmujoco-dev (2.2.2) instead, as before the move.
# Defines the imported target mujoco::mujoco and MYRIAD_MUJOCO_VERSION (e.g. 3.11.0).
set(MYRIAD_MUJOCO "system" CACHE STRING "libmujoco from the PyPI wheel (wheel) or Debian (system)")
set_property(CACHE MYRIAD_MUJOCO PROPERTY STRINGS wheel system)
set(MYRIAD_MUJOCO_DIR "" CACHE PATH "The mujoco wheel's package folder (default: the venv's)")

if(MYRIAD_MUJOCO STREQUAL "system")
  find_package(mujoco REQUIRED)
  set_target_properties(mujoco::mujoco PROPERTIES IMPORTED_GLOBAL TRUE)
  set(MYRIAD_MUJOCO_VERSION ${mujoco_VERSION})
  if(NOT MYRIAD_MUJOCO_VERSION)
    set(MYRIAD_MUJOCO_VERSION 2.2.2)
  endif()
else()
  if(NOT MYRIAD_MUJOCO_DIR)
    foreach(py ${MYRIAD_VENV_PYTHON} ${Python_EXECUTABLE})
      execute_process(
        COMMAND ${py} -c "import mujoco, os; print(os.path.dirname(mujoco.__file__))"
        OUTPUT_VARIABLE _mj_dir OUTPUT_STRIP_TRAILING_WHITESPACE RESULT_VARIABLE _mj_rc
        ERROR_QUIET)
      if(_mj_rc EQUAL 0)
        set(MYRIAD_MUJOCO_DIR ${_mj_dir})
        break()
      endif()
    endforeach()
  endif()
  file(GLOB _mj_lib "${MYRIAD_MUJOCO_DIR}/libmujoco.so.*")
  if(NOT MYRIAD_MUJOCO_DIR OR NOT _mj_lib OR NOT EXISTS "${MYRIAD_MUJOCO_DIR}/include/mujoco/mujoco.h")
    message(FATAL_ERROR
      "libmujoco not found: no libmujoco.so.* and include/mujoco/mujoco.h under the mujoco "
      "wheel's folder '${MYRIAD_MUJOCO_DIR}'. Install the pinned wheel (bash "
      "scripts/install-deps.sh), pass -DMYRIAD_MUJOCO_DIR=<site-packages>/mujoco or "
      "-DMYRIAD_VENV_PYTHON=<venv>/bin/python, or -DMYRIAD_MUJOCO=system for Debian's 2.2.2.")
  endif()
  list(GET _mj_lib 0 _mj_lib)
  string(REGEX MATCH "[0-9]+\\.[0-9]+\\.[0-9]+$" MYRIAD_MUJOCO_VERSION "${_mj_lib}")
  add_library(mujoco::mujoco SHARED IMPORTED GLOBAL)
  # The wheel's library has no libmujoco.so link name; its soname is libmujoco.so.X.Y.Z.
  set_target_properties(mujoco::mujoco PROPERTIES
    IMPORTED_LOCATION "${_mj_lib}"
    INTERFACE_INCLUDE_DIRECTORIES "${MYRIAD_MUJOCO_DIR}/include")
endif()
message(STATUS "Myriad links libmujoco ${MYRIAD_MUJOCO_VERSION} (${MYRIAD_MUJOCO})")
