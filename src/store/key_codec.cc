#include "store/key_codec.h"

#include <bit>
#include <cstddef>

namespace fairq::store {
namespace {

constexpr size_t kJobIdSize = 8;
constexpr size_t kReadyPrefixSize = 8;  // tenant_id | pool_id
constexpr size_t kReadyKeySize = 20;
constexpr size_t kScheduledKeySize = 16;
constexpr size_t kTenantIdSize = 4;

template <class UInt>
void AppendBigEndian(UInt value, std::string* out) {
  for (int shift = 8 * (sizeof(UInt) - 1); shift >= 0; shift -= 8) {
    out->push_back(static_cast<char>((value >> shift) & 0xff));
  }
}

// REQUIRES: in.size() >= sizeof(UInt).
template <class UInt>
UInt ReadBigEndian(std::string_view in) {
  UInt value = 0;
  for (size_t i = 0; i < sizeof(UInt); ++i) {
    value = static_cast<UInt>((value << 8) | static_cast<unsigned char>(in[i]));
  }
  return value;
}

// Priorities sort descending: flipping the sign bit makes the unsigned order
// match the signed order, and the bitwise NOT then reverses it. Both steps
// together are XOR 0x7fffffff, which is its own inverse.
constexpr uint32_t kPriorityMask = 0x7fffffffu;
// Times sort ascending, negative ones (before 1970) first.
constexpr uint64_t kSignBit64 = uint64_t{1} << 63;

}  // namespace

std::string EncodeJobId(uint64_t job_id) {
  std::string out;
  out.reserve(kJobIdSize);
  AppendBigEndian(job_id, &out);
  return out;
}

std::optional<uint64_t> DecodeJobId(std::string_view key) {
  if (key.size() != kJobIdSize) return std::nullopt;
  return ReadBigEndian<uint64_t>(key);
}

std::string EncodeReadyKey(const ReadyKey& key) {
  std::string out;
  out.reserve(kReadyKeySize);
  AppendBigEndian(key.tenant_id, &out);
  AppendBigEndian(key.pool_id, &out);
  AppendBigEndian(std::bit_cast<uint32_t>(key.priority) ^ kPriorityMask, &out);
  AppendBigEndian(key.seq, &out);
  return out;
}

std::optional<ReadyKey> DecodeReadyKey(std::string_view key) {
  if (key.size() != kReadyKeySize) return std::nullopt;
  ReadyKey out;
  out.tenant_id = ReadBigEndian<uint32_t>(key.substr(0, 4));
  out.pool_id = ReadBigEndian<uint32_t>(key.substr(4, 4));
  out.priority = std::bit_cast<int32_t>(
      ReadBigEndian<uint32_t>(key.substr(8, 4)) ^ kPriorityMask);
  out.seq = ReadBigEndian<uint64_t>(key.substr(12, 8));
  return out;
}

std::string ReadyRangeBegin(uint32_t tenant_id, uint32_t pool_id) {
  std::string out;
  out.reserve(kReadyPrefixSize);
  AppendBigEndian(tenant_id, &out);
  AppendBigEndian(pool_id, &out);
  return out;
}

std::string ReadyRangeEnd(uint32_t tenant_id, uint32_t pool_id) {
  // The next (tenant, pool) prefix bounds this one's keys from above. The
  // very last prefix has no 8-byte successor; any string longer than the
  // largest 20-byte key that shares it works instead.
  const uint64_t prefix = (uint64_t{tenant_id} << 32) | pool_id;
  if (prefix == UINT64_MAX) return std::string(kReadyKeySize, '\xff') + '\0';
  std::string out;
  out.reserve(kReadyPrefixSize);
  AppendBigEndian(prefix + 1, &out);
  return out;
}

std::string EncodeScheduledKey(const ScheduledKey& key) {
  std::string out;
  out.reserve(kScheduledKeySize);
  AppendBigEndian(std::bit_cast<uint64_t>(key.due_unix_ms) ^ kSignBit64, &out);
  AppendBigEndian(key.job_id, &out);
  return out;
}

std::optional<ScheduledKey> DecodeScheduledKey(std::string_view key) {
  if (key.size() != kScheduledKeySize) return std::nullopt;
  ScheduledKey out;
  out.due_unix_ms = std::bit_cast<int64_t>(
      ReadBigEndian<uint64_t>(key.substr(0, 8)) ^ kSignBit64);
  out.job_id = ReadBigEndian<uint64_t>(key.substr(8, 8));
  return out;
}

std::string EncodeIdempotencyKey(uint32_t tenant_id, std::string_view key) {
  std::string out;
  out.reserve(kTenantIdSize + key.size());
  AppendBigEndian(tenant_id, &out);
  out.append(key);
  return out;
}

std::optional<std::pair<uint32_t, std::string>> DecodeIdempotencyKey(
    std::string_view key) {
  if (key.size() < kTenantIdSize) return std::nullopt;
  return std::make_pair(ReadBigEndian<uint32_t>(key),
                        std::string(key.substr(kTenantIdSize)));
}

}  // namespace fairq::store
