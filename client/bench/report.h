// Report: a scenario's results as one table (named columns, one row per
// measured configuration) plus run-level facts (server, run id, settings).
// Printed aligned for people, or as exactly one JSON line:
//   {"scenario":"cycle","facts":{"server":"...",...},"rows":[{...},...]}
// Column order is the order in which columns first appear; a row without a
// column shows "-" in the table and omits the key in JSON.
//
// Not thread-safe: built on the scenario's main thread after the load ends.
#ifndef FAIRQ_CLIENT_BENCH_REPORT_H_
#define FAIRQ_CLIENT_BENCH_REPORT_H_

#include <cstdint>
#include <ostream>
#include <string>
#include <utility>
#include <variant>
#include <vector>

#include "bench/stats.h"

namespace fairq::bench {

using Cell = std::variant<std::string, int64_t, double>;
using Row = std::vector<std::pair<std::string, Cell>>;

class Report {
 public:
  explicit Report(std::string scenario) : scenario_(std::move(scenario)) {}

  void Fact(std::string key, Cell value);
  void AddRow(Row row) { rows_.push_back(std::move(row)); }
  void Print(std::ostream& out, bool json) const;

 private:
  void PrintTable(std::ostream& out) const;
  void PrintJson(std::ostream& out) const;

  std::string scenario_;
  Row facts_;
  std::vector<Row> rows_;
};

// Appends "<prefix>p50", "<prefix>p99" and "<prefix>max" (and the count as
// "<prefix>n") of `summary` to `row`.
void AddSummary(Row& row, const std::string& prefix, const Summary& summary);

}  // namespace fairq::bench

#endif  // FAIRQ_CLIENT_BENCH_REPORT_H_
