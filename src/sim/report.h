// Report: renders one scenario's simulation results, as an aligned table for
// people or as a single JSON object for scripts.
//
// Pure functions of their arguments; thread-safe.
#ifndef FAIRQ_SIM_REPORT_H_
#define FAIRQ_SIM_REPORT_H_

#include <string>
#include <string_view>
#include <vector>

#include "sim/scenario.h"
#include "sim/simulator.h"

namespace fairq::sim {

// One table, rows policy x tenant, with each policy's utilisation under its
// rows. Ends with a newline.
std::string FormatTable(const Scenario& scenario,
                        const std::vector<PolicyResult>& results);

// {"scenario": NAME, "results": [{"policy": P, "utilization": U,
//   "tenants": [{"tenant": T, "jobs": N, "wait_p50_s": .., "wait_p99_s": ..,
//   "wait_max_s": .., "finish_s": .. or null, "worker_seconds": ..,
//   "share": ..}]}]} on one line, ending with a newline.
std::string FormatJson(const Scenario& scenario,
                       const std::vector<PolicyResult>& results);

// `text` as a JSON string literal, quotes included.
std::string JsonString(std::string_view text);

}  // namespace fairq::sim

#endif  // FAIRQ_SIM_REPORT_H_
