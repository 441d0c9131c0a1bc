// IdRange: the job ids [begin, end), as the read-ahead asks for them.
#ifndef FAIRQ_SERVER_BROKER_ID_RANGE_H_
#define FAIRQ_SERVER_BROKER_ID_RANGE_H_

#include <cstdint>

namespace fairq::server {

struct IdRange {
  uint64_t begin = 0;
  uint64_t end = 0;

  bool Contains(uint64_t id) const { return begin <= id && id < end; }
};

}  // namespace fairq::server

#endif  // FAIRQ_SERVER_BROKER_ID_RANGE_H_
