// Key encoding for every column family. Integers are fixed-width big-endian
// so that byte order is logical order: a tenant's ready queue in one pool is
// one contiguous key range, highest priority first, then arrival; the
// scheduled family iterates in due-time order.
//
// Pure functions; safe from any thread.
#ifndef FAIRQ_STORE_KEY_CODEC_H_
#define FAIRQ_STORE_KEY_CODEC_H_

#include <cstdint>
#include <optional>
#include <string>
#include <string_view>

namespace fairq::store {

// The column families, in the order of the table in column_families.cc.
// Persisted by name; never rename or reorder a released family.
enum class Family : uint8_t {
  kMeta = 0,
  kJobs = 1,
  kReady = 2,
  kScheduled = 3,
  kLeases = 4,
  kDead = 5,
  kTenants = 6,
  kIdempotency = 7,
  kDone = 8,
};
inline constexpr int kFamilyCount = 9;

// ready: tenant_id (4) | pool_id (4) | priority (4, flipped so higher sorts
// first) | seq (8).
struct ReadyKey {
  uint32_t tenant_id = 0;
  uint32_t pool_id = 0;
  int32_t priority = 0;
  uint64_t seq = 0;
  bool operator==(const ReadyKey&) const = default;
};

// scheduled: due_unix_ms (8, sign-flipped) | job_id (8).
struct ScheduledKey {
  int64_t due_unix_ms = 0;
  uint64_t job_id = 0;
  bool operator==(const ScheduledKey&) const = default;
};

std::string EncodeJobId(uint64_t job_id);
std::optional<uint64_t> DecodeJobId(std::string_view key);

std::string EncodeReadyKey(const ReadyKey& key);
std::optional<ReadyKey> DecodeReadyKey(std::string_view key);
// The key range [begin, end) of one tenant's queue in one pool.
std::string ReadyRangeBegin(uint32_t tenant_id, uint32_t pool_id);
std::string ReadyRangeEnd(uint32_t tenant_id, uint32_t pool_id);

std::string EncodeScheduledKey(const ScheduledKey& key);
std::optional<ScheduledKey> DecodeScheduledKey(std::string_view key);

// idempotency: tenant_id (4) | the key's bytes.
std::string EncodeIdempotencyKey(uint32_t tenant_id, std::string_view key);
std::optional<std::pair<uint32_t, std::string>> DecodeIdempotencyKey(
    std::string_view key);

// meta keys.
inline constexpr std::string_view kFormatVersionKey = "format_version";
inline constexpr std::string_view kIdReservationKey = "job_id_reserved";
inline constexpr std::string_view kPoolKeyPrefix = "pool/";

}  // namespace fairq::store

#endif  // FAIRQ_STORE_KEY_CODEC_H_
