// CRC32C (Castagnoli): the checksum of TensorBoard records, checkpoints and server frames.
#pragma once

#include <cstddef>
#include <cstdint>

namespace myriad {

// CRC32C (reflected polynomial 0x82F63B78), as used by TFRecord framing and iSCSI;
// crc32c("123456789") == 0xE3069283. Reads exactly `size` bytes from `data`.
uint32_t crc32c(const void* data, size_t size);

}  // namespace myriad
