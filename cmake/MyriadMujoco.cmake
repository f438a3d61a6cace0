# Which libmujoco Myriad links: the C library and headers of the PyPI `mujoco` wheel, the same
# package (and version) the Python side imports.
#   MYRIAD_MUJOCO_DIR  the wheel's package folder (holding libmujoco.so.X and include/mujoco/);
#                      by default asked of the venv's Python (`import mujoco`).
# The version is pinned (MYRIAD_MUJOCO_PINNED, as scripts/install-deps.sh installs it): the
# engine mirrors that release's arithmetic.
# Defines the imported target mujoco::mujoco and MYRIAD_MUJOCO_VERSION (e.g. 3.11.0).
set(MYRIAD_MUJOCO_PINNED 3.11.0)
set(MYRIAD_MUJOCO_DIR "" CACHE PATH "The mujoco wheel's package folder (default: the venv's)")

# A package's folder as the venv's Python (else the found Python) prints it with `code`; out is
# left alone when no Python can.
function(myriad_python_package_dir out code)
  foreach(py ${MYRIAD_VENV_PYTHON} ${Python_EXECUTABLE})
    execute_process(COMMAND ${py} -c "${code}" OUTPUT_VARIABLE _dir
                    OUTPUT_STRIP_TRAILING_WHITESPACE RESULT_VARIABLE _rc ERROR_QUIET)
    if(_rc EQUAL 0)
      set(${out} ${_dir} PARENT_SCOPE)
      return()
    endif()
  endforeach()
endfunction()

if(NOT MYRIAD_MUJOCO_DIR)
  myriad_python_package_dir(MYRIAD_MUJOCO_DIR
                            "import mujoco, os; print(os.path.dirname(mujoco.__file__))")
endif()
file(GLOB _mj_lib "${MYRIAD_MUJOCO_DIR}/libmujoco.so.*")
if(NOT MYRIAD_MUJOCO_DIR OR NOT _mj_lib OR NOT EXISTS "${MYRIAD_MUJOCO_DIR}/include/mujoco/mujoco.h")
  message(FATAL_ERROR
    "libmujoco not found: no libmujoco.so.* and include/mujoco/mujoco.h under the mujoco "
    "wheel's folder '${MYRIAD_MUJOCO_DIR}'. Install the pinned wheel (bash "
    "scripts/install-deps.sh), pass -DMYRIAD_MUJOCO_DIR=<site-packages>/mujoco or "
    "-DMYRIAD_VENV_PYTHON=<venv>/bin/python.")
endif()
list(GET _mj_lib 0 _mj_lib)
string(REGEX MATCH "[0-9]+\\.[0-9]+\\.[0-9]+$" MYRIAD_MUJOCO_VERSION "${_mj_lib}")
add_library(mujoco::mujoco SHARED IMPORTED GLOBAL)
# The wheel's library has no libmujoco.so link name; its soname is libmujoco.so.X.Y.Z.
set_target_properties(mujoco::mujoco PROPERTIES
  IMPORTED_LOCATION "${_mj_lib}"
  INTERFACE_INCLUDE_DIRECTORIES "${MYRIAD_MUJOCO_DIR}/include")
if(NOT MYRIAD_MUJOCO_VERSION VERSION_EQUAL MYRIAD_MUJOCO_PINNED)
  message(FATAL_ERROR
    "libmujoco ${MYRIAD_MUJOCO_VERSION} found in '${MYRIAD_MUJOCO_DIR}'; Myriad's engine follows "
    "MuJoCo ${MYRIAD_MUJOCO_PINNED} (its physics-check and tests compare with that version): "
    "pip install mujoco==${MYRIAD_MUJOCO_PINNED} (bash scripts/install-deps.sh does).")
endif()
message(STATUS "Myriad links libmujoco ${MYRIAD_MUJOCO_VERSION} (${MYRIAD_MUJOCO_DIR})")

# The mjlab package (robot models: "mjlab:<path>" in an MJCF file names a file in it), found
# without importing it (it is installed --no-deps). Empty when absent: such models then fail to
# load with a message naming the package; MYRIAD_MJLAB_DIR at run time overrides it.
set(MYRIAD_MJLAB_DIR "" CACHE PATH "The mjlab package's folder (default: the venv's)")
if(NOT MYRIAD_MJLAB_DIR)
  myriad_python_package_dir(
    MYRIAD_MJLAB_DIR
    "import importlib.util as u; print(u.find_spec('mjlab').submodule_search_locations[0])")
endif()
message(STATUS "mjlab robot models: ${MYRIAD_MJLAB_DIR}")
