// CRC32C (Castagnoli): the checksum of TensorBoard records, checkpoints and server frames.
#pragma once

#include <cstddef>
#include <cstdint>

namespace myriad {

// CRC32C (reflected polynomial 0x82F63B78), as used by TFRecord framing and iSCSI;
// crc32c("123456789") == 0xE3069283. Reads exactly `size` bytes from `data`.
// Uses the CPU's CRC32 instruction where it has one (x86-64 SSE 4.2), else a table.
uint32_t crc32c(const void* data, size_t size);
// The table version alone: the reference the fast path is tested against.
uint32_t crc32c_portable(const void* data, size_t size);

}  // namespace myriad
