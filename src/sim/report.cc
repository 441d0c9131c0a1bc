#include "sim/report.h"

#include <algorithm>
#include <array>
#include <charconv>
#include <cmath>
#include <cstdint>
#include <cstdio>
#include <string>
#include <system_error>

#include "sched/types.h"

namespace fairq::sim {
namespace {

// A table line is either cells (aligned in columns) or a free-text note.
struct Line {
  std::vector<std::string> cells;
  std::string note;
};

std::string Fixed(double value, int decimals) {
  std::array<char, 64> buffer;
  std::snprintf(buffer.data(), buffer.size(), "%.*f", decimals, value);
  return buffer.data();
}

std::string Counted(uint64_t count, const std::string& noun) {
  return std::to_string(count) + " " + noun + (count == 1 ? "" : "s");
}

std::string Percent(double fraction) { return Fixed(fraction * 100, 1) + "%"; }

// Columns 0 and 1 (policy, tenant) are text and align left; numbers right.
std::string Render(const std::vector<Line>& lines) {
  std::vector<size_t> widths;
  for (const Line& line : lines) {
    widths.resize(std::max(widths.size(), line.cells.size()));
    for (size_t c = 0; c < line.cells.size(); ++c) {
      widths[c] = std::max(widths[c], line.cells[c].size());
    }
  }
  std::string out;
  for (const Line& line : lines) {
    if (line.cells.empty()) {
      out += line.note + "\n";
      continue;
    }
    std::string text;
    for (size_t c = 0; c < line.cells.size(); ++c) {
      std::string pad(widths[c] - line.cells[c].size(), ' ');
      if (c > 0) text += "  ";
      text += c < 2 ? line.cells[c] + pad : pad + line.cells[c];
    }
    out += text.substr(0, text.find_last_not_of(' ') + 1) + "\n";
  }
  return out;
}

std::vector<std::string> TenantCells(const std::string& policy,
                                     const TenantResult& t) {
  return {policy,
          t.tenant,
          std::to_string(t.jobs),
          Fixed(t.wait_p50_s, 2),
          Fixed(t.wait_p99_s, 2),
          Fixed(t.wait_max_s, 2),
          t.finish_s ? Fixed(*t.finish_s, 1) : "unfinished",
          Fixed(t.worker_seconds, 1),
          Percent(t.share)};
}

std::string JsonNumber(double value) {
  if (!std::isfinite(value)) return "null";
  // Six decimals are far below anything a report distinguishes, and spare
  // readers digits such as 74.50000000000001.
  if (std::fabs(value) < 1e12) value = std::round(value * 1e6) / 1e6;
  if (value == 0) value = 0;  // no "-0"
  std::array<char, 64> buffer;
  auto [end, ec] =
      std::to_chars(buffer.data(), buffer.data() + buffer.size(), value);
  return ec == std::errc() ? std::string(buffer.data(), end) : "null";
}

std::string TenantJson(const TenantResult& t) {
  return "{\"tenant\": " + JsonString(t.tenant) +
         ", \"jobs\": " + std::to_string(t.jobs) +
         ", \"wait_p50_s\": " + JsonNumber(t.wait_p50_s) +
         ", \"wait_p99_s\": " + JsonNumber(t.wait_p99_s) +
         ", \"wait_max_s\": " + JsonNumber(t.wait_max_s) +
         ", \"finish_s\": " + (t.finish_s ? JsonNumber(*t.finish_s) : "null") +
         ", \"worker_seconds\": " + JsonNumber(t.worker_seconds) +
         ", \"share\": " + JsonNumber(t.share) + "}";
}

std::string PolicyJson(const PolicyResult& result) {
  std::string out =
      "{\"policy\": " + JsonString(sched::PolicyName(result.policy)) +
      ", \"utilization\": " + JsonNumber(result.utilization) +
      ", \"tenants\": [";
  for (size_t i = 0; i < result.tenants.size(); ++i) {
    out += (i > 0 ? ", " : "") + TenantJson(result.tenants[i]);
  }
  return out + "]}";
}

}  // namespace

std::string FormatTable(const Scenario& scenario,
                        const std::vector<PolicyResult>& results) {
  std::vector<Line> lines;
  lines.push_back({{},
                   scenario.name + " (" + scenario.source +
                       "): " + Counted(scenario.TotalWorkers(), "worker") +
                       ", " + Counted(scenario.tenants.size(), "tenant") +
                       ", " + Counted(scenario.TotalJobs(), "job")});
  lines.push_back({{}, ""});
  lines.push_back({{"policy", "tenant", "jobs", "wait p50 (s)", "wait p99 (s)",
                    "wait max (s)", "finish (s)", "worker-s", "share"},
                   ""});
  for (const PolicyResult& result : results) {
    std::string policy(sched::PolicyName(result.policy));
    for (const TenantResult& tenant : result.tenants) {
      lines.push_back({TenantCells(policy, tenant), ""});
      policy.clear();  // name the policy on its first row only
    }
    lines.push_back({{},
                     "  " + std::string(sched::PolicyName(result.policy)) +
                         " utilisation " + Percent(result.utilization) +
                         " over " + Fixed(result.horizon_s, 1) + " s"});
  }
  return Render(lines);
}

std::string FormatJson(const Scenario& scenario,
                       const std::vector<PolicyResult>& results) {
  std::string out =
      "{\"scenario\": " + JsonString(scenario.name) + ", \"results\": [";
  for (size_t i = 0; i < results.size(); ++i) {
    out += (i > 0 ? ", " : "") + PolicyJson(results[i]);
  }
  return out + "]}\n";
}

// No JSON library ships in this build's Debian packages (nlohmann-json and
// jsoncpp's -dev are absent), and the output is small and flat, so it is
// written by hand; strings are the only part that needs care.
std::string JsonString(std::string_view text) {
  std::string out = "\"";
  for (char c : text) {
    switch (c) {
      case '"':
        out += "\\\"";
        break;
      case '\\':
        out += "\\\\";
        break;
      case '\n':
        out += "\\n";
        break;
      case '\r':
        out += "\\r";
        break;
      case '\t':
        out += "\\t";
        break;
      default:
        if (static_cast<unsigned char>(c) < 0x20) {
          std::array<char, 8> escaped;
          std::snprintf(escaped.data(), escaped.size(), "\\u%04x",
                        static_cast<unsigned>(static_cast<unsigned char>(c)));
          out += escaped.data();
        } else {
          out += c;  // UTF-8 bytes pass through unchanged
        }
    }
  }
  return out + "\"";
}

}  // namespace fairq::sim
