// The Python a C++ test may run (the project's venv): MYRIAD_PYTHON when set, else the one CMake
// found (MYRIAD_VENV_PYTHON, compiled in by myriad_add_gtest), else "" (the test skips that part).
#pragma once

#include <cstdlib>

namespace myriad::testing_util {

inline const char* test_python() {
  const char* python = std::getenv("MYRIAD_PYTHON");
  if (python != nullptr && *python != '\0') return python;
#ifdef MYRIAD_TEST_PYTHON
  return MYRIAD_TEST_PYTHON;
#else
  return "";
#endif
}

}  // namespace myriad::testing_util
