// Test helper: an mjModel and mjData compiled by libmujoco from an MJCF string (through a
// one-file VFS), freed together.
#pragma once

#include <gtest/gtest.h>
#include <mujoco/mujoco.h>

#include <cstring>
#include <memory>
#include <string>

#include "physics/mujoco_compat.h"

namespace myriad::physics::test_support {

struct MjLoaded {
  mjModel* m = nullptr;
  mjData* d = nullptr;
  ~MjLoaded() {
    if (d) mj_deleteData(d);
    if (m) mj_deleteModel(m);
  }
};

// nullptr (and a test failure naming libmujoco's error) when the string does not compile.
inline std::unique_ptr<MjLoaded> load_mj_string(const std::string& xml) {
  auto vfs = std::make_unique<mjVFS>();
  mj_defaultVFS(vfs.get());
  const char* name = "model.xml";
  EXPECT_EQ(
      myriad::physics::vfs_add_text(vfs.get(), name, xml.data(), static_cast<int>(xml.size())), 0);
  char err[1000] = "";
  auto out = std::make_unique<MjLoaded>();
  out->m = mj_loadXML(name, vfs.get(), err, sizeof err);
  mj_deleteVFS(vfs.get());
  if (!out->m) {
    ADD_FAILURE() << "mj_loadXML: " << err << "\n" << xml;
    return nullptr;
  }
  out->d = mj_makeData(out->m);
  return out;
}

}  // namespace myriad::physics::test_support
