#pragma once
// Stand-in: ProcessGroupGloo.hpp includes this header but uses nothing from it inline.
