#include "metrics/metrics.h"

namespace fairq::metrics {
namespace {

class Ignore final : public Metrics {
 public:
  void NameTenant(uint32_t, std::string_view) override {}
  void NamePool(uint32_t, std::string_view) override {}
  void Count(uint32_t, uint32_t, JobEvent) override {}
  void Rejected(uint32_t, Rejection) override {}
  void LeaseStarted(uint32_t, uint32_t, int64_t, int64_t) override {}
  void LeaseAdopted(uint32_t, uint32_t, int64_t) override {}
  void LeaseEnded(uint32_t, uint32_t, double, int64_t) override {}
  void TurnDone(double) override {}
  void LeasedSpec(SpecSource) override {}
  void ReadAheadUnused(size_t) override {}
  void ReportRepeated() override {}
  void GroupCommitted(double, size_t) override {}
  void RpcFinished(std::string_view, int, double) override {}
};

}  // namespace

Metrics& NoMetrics() {
  static Ignore ignore;
  return ignore;
}

}  // namespace fairq::metrics
