#include "bench/report.h"

#include <algorithm>
#include <cmath>
#include <cstdio>

namespace fairq::bench {
namespace {

// For people: big rates without decimals, small latencies with three.
std::string TableText(const Cell& cell) {
  if (const auto* text = std::get_if<std::string>(&cell)) return *text;
  if (const auto* whole = std::get_if<int64_t>(&cell)) {
    return std::to_string(*whole);
  }
  double value = std::get<double>(cell);
  char buffer[64];
  const char* format = std::fabs(value) >= 100 ? "%.0f"
                       : std::fabs(value) >= 1 ? "%.2f"
                                               : "%.3f";
  std::snprintf(buffer, sizeof(buffer), format, value);
  return buffer;
}

std::string JsonString(const std::string& text) {
  std::string out = "\"";
  for (char c : text) {
    if (c == '"' || c == '\\') {
      out += '\\';
      out += c;
    } else if (static_cast<unsigned char>(c) < 0x20) {
      char escaped[8];
      std::snprintf(escaped, sizeof(escaped), "\\u%04x", c);
      out += escaped;
    } else {
      out += c;
    }
  }
  return out + "\"";
}

std::string JsonValue(const Cell& cell) {
  if (const auto* text = std::get_if<std::string>(&cell)) {
    return JsonString(*text);
  }
  if (const auto* whole = std::get_if<int64_t>(&cell)) {
    return std::to_string(*whole);
  }
  double value = std::get<double>(cell);
  if (!std::isfinite(value)) return "null";
  char buffer[64];
  std::snprintf(buffer, sizeof(buffer), "%.9g", value);
  return buffer;
}

std::string JsonObject(const Row& row) {
  std::string out = "{";
  for (size_t i = 0; i < row.size(); ++i) {
    if (i > 0) out += ",";
    out += JsonString(row[i].first) + ":" + JsonValue(row[i].second);
  }
  return out + "}";
}

const Cell* Find(const Row& row, const std::string& column) {
  for (const auto& [name, cell] : row) {
    if (name == column) return &cell;
  }
  return nullptr;
}

}  // namespace

void Report::Fact(std::string key, Cell value) {
  facts_.emplace_back(std::move(key), std::move(value));
}

void Report::Print(std::ostream& out, bool json) const {
  if (json) {
    PrintJson(out);
  } else {
    PrintTable(out);
  }
  out.flush();
}

void Report::PrintJson(std::ostream& out) const {
  out << "{\"scenario\":" << JsonString(scenario_)
      << ",\"facts\":" << JsonObject(facts_) << ",\"rows\":[";
  for (size_t i = 0; i < rows_.size(); ++i) {
    out << (i > 0 ? "," : "") << JsonObject(rows_[i]);
  }
  out << "]}\n";
}

void Report::PrintTable(std::ostream& out) const {
  out << "fairq-bench " << scenario_ << "\n";
  for (const auto& [key, value] : facts_) {
    out << "  " << key << ": " << TableText(value) << "\n";
  }
  std::vector<std::string> columns;
  for (const Row& row : rows_) {
    for (const auto& cell : row) {
      if (std::find(columns.begin(), columns.end(), cell.first) ==
          columns.end()) {
        columns.push_back(cell.first);
      }
    }
  }
  std::vector<std::vector<std::string>> lines(1, columns);
  for (const Row& row : rows_) {
    std::vector<std::string>& line = lines.emplace_back();
    for (const std::string& column : columns) {
      const Cell* cell = Find(row, column);
      line.push_back(cell == nullptr ? "-" : TableText(*cell));
    }
  }
  std::vector<size_t> widths(columns.size(), 0);
  for (const auto& line : lines) {
    for (size_t c = 0; c < line.size(); ++c) {
      widths[c] = std::max(widths[c], line[c].size());
    }
  }
  for (const auto& line : lines) {
    out << " ";
    for (size_t c = 0; c < line.size(); ++c) {
      // Right-aligned: the columns are mostly numbers.
      out << " " << std::string(widths[c] - line[c].size(), ' ') << line[c];
    }
    out << "\n";
  }
}

void AddSummary(Row& row, const std::string& prefix, const Summary& summary) {
  row.emplace_back(prefix + "n", static_cast<int64_t>(summary.count));
  row.emplace_back(prefix + "p50", summary.p50);
  row.emplace_back(prefix + "p99", summary.p99);
  row.emplace_back(prefix + "max", summary.max);
}

}  // namespace fairq::bench
