// FormatNumber: a double as people read it in error messages and reports
// ("1.5", "-2", "NaN"), without std::to_string's trailing zeros.
// Pure function; safe from any thread.
#ifndef FAIRQ_BASE_FORMAT_NUMBER_H_
#define FAIRQ_BASE_FORMAT_NUMBER_H_

#include <cmath>
#include <string>

namespace fairq {

inline std::string FormatNumber(double value) {
  if (std::isnan(value)) return "NaN";
  if (std::isinf(value)) return value > 0 ? "inf" : "-inf";
  std::string text = std::to_string(value);
  text.erase(text.find_last_not_of('0') + 1);
  if (text.back() == '.') text.pop_back();
  return text;
}

}  // namespace fairq

#endif  // FAIRQ_BASE_FORMAT_NUMBER_H_
