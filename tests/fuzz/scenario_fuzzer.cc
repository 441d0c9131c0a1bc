// Fuzz target: `fairqctl simulate`'s scenario files (sim::ParseScenario),
// then the scheduler each policy would build from a scenario that parses.
// Any text gives a scenario or an error that names the file. Simulating is
// left out: a valid scenario may ask for hours of simulated work.
#include <cstddef>
#include <cstdint>
#include <cstdlib>
#include <string_view>

#include "sim/scenario.h"
#include "sim/scheduler_setup.h"

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  std::string_view text(reinterpret_cast<const char*>(data), size);
  auto scenario = fairq::sim::ParseScenario(text, "fuzz.yaml");
  if (!scenario.ok()) {
    if (scenario.status().message().find("fuzz.yaml") == std::string::npos) {
      std::abort();
    }
    return 0;
  }
  for (fairq::sched::Policy policy : fairq::sim::AllPolicies()) {
    (void)fairq::sim::BuildScheduler(*scenario, policy);
  }
  return 0;
}
