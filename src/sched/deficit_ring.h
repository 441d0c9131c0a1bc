// DeficitRing: the active ring of deficit round robin. Members take turns;
// on each turn a member earns its grant of credit (capped at its ceiling) and
// keeps the turn while its credit is positive. Dispatches may drive credit
// negative (a debt repaid by later grants), so a job larger than one grant
// never stalls the ring.
//
// The links live in the caller's per-member storage (an intrusive list), so
// joining, leaving and each decision are O(1) and need no allocation. Not
// thread-safe; owned by the Scheduler's thread.
//
// `Access` supplies, for a member id:
//   RingLinks& Links(uint32_t id);   double& Deficit(uint32_t id);
//   double Grant(uint32_t id);       double Ceiling(uint32_t id);
#ifndef FAIRQ_SCHED_DEFICIT_RING_H_
#define FAIRQ_SCHED_DEFICIT_RING_H_

#include <algorithm>
#include <cassert>
#include <cmath>
#include <cstdint>
#include <limits>

namespace fairq::sched {

inline constexpr uint32_t kNoMember = std::numeric_limits<uint32_t>::max();

struct RingLinks {
  uint32_t prev = kNoMember;
  uint32_t next = kNoMember;
  bool turn_open = false;  // the member at the cursor has had this turn's grant
  bool linked() const { return next != kNoMember; }
};

class DeficitRing {
 public:
  bool empty() const { return size_ == 0; }
  uint32_t size() const { return size_; }

  // Joins at the back of the round: every current member has its turn first.
  // REQUIRES: the member is in no ring that uses the same links.
  template <class Access>
  void Insert(Access& access, uint32_t id) {
    RingLinks& links = access.Links(id);
    assert(!links.linked());
    if (size_ == 0) {
      links.prev = links.next = id;
      cursor_ = id;
    } else {
      RingLinks& cursor = access.Links(cursor_);
      links.prev = cursor.prev;
      links.next = cursor_;
      access.Links(cursor.prev).next = id;
      cursor.prev = id;
    }
    links.turn_open = false;
    ++size_;
  }

  // REQUIRES: the member is in this ring.
  template <class Access>
  void Erase(Access& access, uint32_t id) {
    RingLinks& links = access.Links(id);
    assert(links.linked());
    if (--size_ == 0) {
      cursor_ = kNoMember;
    } else {
      access.Links(links.prev).next = links.next;
      access.Links(links.next).prev = links.prev;
      if (cursor_ == id) cursor_ = links.next;
    }
    links = RingLinks();
  }

  // Plain round robin: the member at the cursor, which then moves on.
  // REQUIRES: !empty().
  template <class Access>
  uint32_t NextInTurn(Access& access) {
    uint32_t id = cursor_;
    cursor_ = access.Links(id).next;
    return id;
  }

  // The member whose turn it is and that holds positive credit, granting
  // credit as the cursor moves. When a whole round finds only debt, the
  // rounds it would take for the first member to turn positive are granted
  // at once, so a decision costs about two walks of the ring at most (a
  // rounding-short skip costs one more walk, never a loop).
  // REQUIRES: !empty().
  template <class Access>
  uint32_t NextWithCredit(Access& access) {
    uint32_t steps = 0;
    while (true) {
      uint32_t id = cursor_;
      RingLinks& links = access.Links(id);
      double& deficit = access.Deficit(id);
      if (!links.turn_open) {
        deficit = std::min(deficit + access.Grant(id), access.Ceiling(id));
        links.turn_open = true;
      }
      if (deficit > 0) return id;
      links.turn_open = false;
      cursor_ = links.next;
      if (++steps == size_) {
        SkipEmptyRounds(access);
        steps = 0;
      }
    }
  }

 private:
  // Every member is in debt after its grant. Grants the rounds that pass
  // before the first member would turn positive, minus the one the next walk
  // gives, which keeps the order exact DRR would produce.
  template <class Access>
  void SkipEmptyRounds(Access& access) {
    double rounds = std::numeric_limits<double>::infinity();
    uint32_t id = cursor_;
    for (uint32_t i = 0; i < size_; ++i, id = access.Links(id).next) {
      double needed = std::floor(-access.Deficit(id) / access.Grant(id)) + 1;
      rounds = std::min(rounds, needed);
    }
    // Callers bound weights and costs, so this holds; a non-finite skip
    // would poison every deficit with NaN and the ring would never stop.
    assert(std::isfinite(rounds));
    double skip = std::max(0.0, rounds - 1);
    for (uint32_t i = 0; i < size_; ++i, id = access.Links(id).next) {
      access.Deficit(id) += skip * access.Grant(id);
    }
  }

  uint32_t cursor_ = kNoMember;
  uint32_t size_ = 0;
};

}  // namespace fairq::sched

#endif  // FAIRQ_SCHED_DEFICIT_RING_H_
