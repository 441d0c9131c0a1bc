// Reading Prometheus text exposition in tests: each sample line becomes an
// entry keyed by its name and labels, the labels sorted by name, so a test
// can look a series up however the exporter ordered them:
//   Samples s = ParseExposition(text);
//   s.at(Key("fairq_jobs", {{"pool", "default"}, {"state", "ready"},
//                           {"tenant", "a"}}))
//
// Header-only, standard library only; pure functions.
#ifndef FAIRQ_METRICS_EXPOSITION_TEST_UTIL_H_
#define FAIRQ_METRICS_EXPOSITION_TEST_UTIL_H_

#include <algorithm>
#include <cstdlib>
#include <map>
#include <sstream>
#include <string>
#include <utility>
#include <vector>

namespace fairq::metrics {

using Samples = std::map<std::string, double>;
using LabelList = std::vector<std::pair<std::string, std::string>>;

// "name{a=\"x\",b=\"y\"}" with the labels sorted; "name" without labels.
inline std::string Key(const std::string& name, LabelList labels = {}) {
  if (labels.empty()) return name;
  std::sort(labels.begin(), labels.end());
  std::string key = name + "{";
  for (size_t i = 0; i < labels.size(); ++i) {
    key += (i ? "," : "") + labels[i].first + "=\"" + labels[i].second + "\"";
  }
  return key + "}";
}

// Label values are taken up to the next quote: fine for fairq's names,
// which never contain one.
inline Samples ParseExposition(const std::string& text) {
  Samples samples;
  std::istringstream lines(text);
  std::string line;
  while (std::getline(lines, line)) {
    if (line.empty() || line[0] == '#') continue;
    size_t brace = line.find('{');
    size_t space = line.rfind(' ');
    if (space == std::string::npos) continue;
    std::string name = line.substr(0, std::min(brace, space));
    LabelList labels;
    if (brace != std::string::npos && brace < space) {
      size_t at = brace + 1;
      while (at < line.size() && line[at] != '}') {
        size_t eq = line.find('=', at);
        size_t close = line.find('"', eq + 2);
        labels.emplace_back(line.substr(at, eq - at),
                            line.substr(eq + 2, close - eq - 2));
        at = close + 1;
        if (at < line.size() && line[at] == ',') ++at;
      }
    }
    samples[Key(name, labels)] = std::strtod(line.c_str() + space + 1, nullptr);
  }
  return samples;
}

// The value of a sample, or `missing` when the exposition has none.
inline double Value(const Samples& samples, const std::string& key,
                    double missing = -1) {
  auto it = samples.find(key);
  return it == samples.end() ? missing : it->second;
}

}  // namespace fairq::metrics

#endif  // FAIRQ_METRICS_EXPOSITION_TEST_UTIL_H_
