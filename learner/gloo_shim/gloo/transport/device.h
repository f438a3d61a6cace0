#pragma once
// Stand-in: ProcessGroupGloo.hpp only holds these through std::shared_ptr / std::unique_ptr.
namespace gloo {
namespace transport {
class Device;
class UnboundBuffer;
}  // namespace transport
}  // namespace gloo
