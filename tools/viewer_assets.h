// The replay viewer's files (viewer/ plus three.js and Chart.js from Debian's libjs-three and
// libjs-chart.js), compiled into the binary so `myriad view` needs no install tree and no
// network. MYRIAD_VIEWER_DIR=<folder> serves that folder's files instead (viewer development).
#pragma once

#include <optional>
#include <string>
#include <vector>

namespace myriad::tools {

// name: a path as the page requests it ("index.html", "vendor/three.min.js").
std::optional<std::string> viewer_asset(const std::string& name);
std::vector<std::string> viewer_asset_names();

}  // namespace myriad::tools
