#include "yaml/yaml_fields.h"

#include <array>
#include <charconv>
#include <cmath>
#include <system_error>

namespace fairq::yaml {
namespace {

std::string_view KindName(const YAML::Node& node) {
  if (node.IsSequence()) return "a list";
  if (node.IsMap()) return "a mapping";
  if (node.IsNull()) return "nothing";
  return "a scalar";
}

std::string Quoted(std::string_view text) {
  return "\"" + std::string(text) + "\"";
}

}  // namespace

int LineOf(const YAML::Node& node) {
  if (!node.IsDefined()) return 0;
  YAML::Mark mark = node.Mark();
  return mark.is_null() ? 0 : mark.line + 1;
}

Status ErrorAt(std::string_view source, int line, std::string_view field,
               std::string_view problem) {
  std::string message(source);
  if (line > 0) message += ":" + std::to_string(line);
  message += ": ";
  if (!field.empty()) message += std::string(field) + ": ";
  message += problem;
  return InvalidArgument(std::move(message));
}

std::string FormatNumber(double value) {
  std::array<char, 64> buffer;
  auto [end, ec] =
      std::to_chars(buffer.data(), buffer.data() + buffer.size(), value);
  if (ec != std::errc()) return "?";
  return std::string(buffer.data(), end);
}

std::string_view FieldOf(const Status& status) {
  std::string_view message = status.message();
  size_t colon = message.find(": ");
  return colon == std::string_view::npos ? std::string_view()
                                         : message.substr(0, colon);
}

std::string_view ProblemOf(const Status& status) {
  std::string_view message = status.message();
  size_t colon = message.find(": ");
  return colon == std::string_view::npos ? message : message.substr(colon + 2);
}

FieldReader::FieldReader(std::string source, const YAML::Node& node,
                         std::string path,
                         std::initializer_list<std::string_view> allowed)
    : source_(std::move(source)), path_(std::move(path)), line_(LineOf(node)) {
  Open(node, &allowed);
}

FieldReader::FieldReader(std::string source, const YAML::Node& node,
                         std::string path)
    : source_(std::move(source)), path_(std::move(path)), line_(LineOf(node)) {
  Open(node, nullptr);
}

void FieldReader::Open(const YAML::Node& node,
                       const std::initializer_list<std::string_view>* allowed) {
  if (!node.IsMap()) {
    status_ = ErrorAt(source_, line_, path_.empty() ? "(top level)" : path_,
                      "expected a mapping, got " + std::string(KindName(node)));
    return;
  }
  CheckKeys(node, allowed);
}

std::vector<std::string> FieldReader::Keys() const {
  std::vector<std::string> keys;
  for (const Entry& entry : entries_) keys.push_back(entry.key);
  return keys;
}

void FieldReader::CheckKeys(
    const YAML::Node& node,
    const std::initializer_list<std::string_view>* allowed) {
  for (const auto& item : node) {
    int key_line = LineOf(item.first);
    if (!item.first.IsScalar()) {
      status_ = ErrorAt(source_, key_line, path_, "field names must be text");
      return;
    }
    const std::string& key = item.first.Scalar();
    int value_line = LineOf(item.second);
    entries_.push_back(
        {key, item.second, value_line > 0 ? value_line : key_line});
    if (entries_.size() > 1 && Find(key) != &entries_.back()) {
      status_ = ErrorAt(source_, key_line, FieldPath(key), "duplicate field");
      return;
    }
    if (allowed == nullptr) continue;
    bool known = false;
    std::string expected;
    for (std::string_view name : *allowed) {
      known = known || name == key;
      expected += (expected.empty() ? "" : ", ") + std::string(name);
    }
    if (!known) {
      status_ = ErrorAt(source_, key_line, FieldPath(key),
                        "unknown field (expected one of: " + expected + ")");
      return;
    }
  }
}

const FieldReader::Entry* FieldReader::Find(std::string_view key) const {
  for (const Entry& entry : entries_) {
    if (entry.key == key) return &entry;
  }
  return nullptr;
}

YAML::Node FieldReader::Get(std::string_view key) const {
  const Entry* entry = Find(key);
  return entry == nullptr ? YAML::Node(YAML::NodeType::Undefined)
                          : entry->value;
}

std::string FieldReader::FieldPath(std::string_view key) const {
  return path_.empty() ? std::string(key) : path_ + "." + std::string(key);
}

int FieldReader::Line(std::string_view key) const {
  const Entry* entry = Find(key);
  return entry == nullptr ? line_ : entry->line;
}

std::optional<std::string> FieldReader::ScalarText(std::string_view key) {
  const Entry* entry = Find(key);
  if (!ok() || entry == nullptr) return std::nullopt;
  if (!entry->value.IsScalar()) {
    Fail(key,
         "expected a single value, got " + std::string(KindName(entry->value)));
    return std::nullopt;
  }
  return entry->value.Scalar();
}

std::string FieldReader::String(std::string_view key) {
  if (ok() && !Has(key)) Fail(key, "missing required field");
  return OptString(key).value_or("");
}

std::optional<std::string> FieldReader::OptString(std::string_view key) {
  return ScalarText(key);
}

double FieldReader::Number(std::string_view key) {
  if (ok() && !Has(key)) Fail(key, "missing required field");
  return OptNumber(key).value_or(0);
}

std::optional<double> FieldReader::OptNumber(std::string_view key) {
  std::optional<std::string> text = ScalarText(key);
  if (!text) return std::nullopt;
  double value = 0;
  const char* last = text->data() + text->size();
  auto [end, ec] = std::from_chars(text->data(), last, value);
  if (ec != std::errc() || end != last || !std::isfinite(value)) {
    Fail(key, "expected a number, got " + Quoted(*text));
    return std::nullopt;
  }
  return value;
}

std::optional<int64_t> FieldReader::OptInteger(std::string_view key) {
  std::optional<std::string> text = ScalarText(key);
  if (!text) return std::nullopt;
  int64_t value = 0;
  const char* last = text->data() + text->size();
  auto [end, ec] = std::from_chars(text->data(), last, value);
  if (ec != std::errc() || end != last) {
    Fail(key, "expected a whole number, got " + Quoted(*text));
    return std::nullopt;
  }
  return value;
}

std::optional<bool> FieldReader::OptBool(std::string_view key) {
  std::optional<std::string> text = ScalarText(key);
  if (!text) return std::nullopt;
  if (*text == "true" || *text == "True" || *text == "TRUE") return true;
  if (*text == "false" || *text == "False" || *text == "FALSE") return false;
  Fail(key, "expected true or false, got " + Quoted(*text));
  return std::nullopt;
}

void FieldReader::Require(bool condition, std::string_view key,
                          std::string_view problem) {
  if (!condition) Fail(key, problem);
}

void FieldReader::Fail(std::string_view key, std::string_view problem) {
  if (!ok()) return;
  status_ = ErrorAt(source_, Line(key), FieldPath(key), problem);
}

Status FieldReader::ForEachItem(std::string_view key, ListRule rule,
                                const ItemReader& read) {
  YAML::Node list = Get(key);
  bool absent = !list.IsDefined() ||
                (rule == ListRule::kOptional && list.IsNull());
  if (absent) {
    if (rule == ListRule::kRequiredNonEmpty) Fail(key, "missing required field");
    return status();
  }
  if (rule == ListRule::kOptional && !list.IsSequence()) {
    Fail(key, "expected a list");
  } else if (rule != ListRule::kOptional &&
             (!list.IsSequence() || list.size() == 0)) {
    Fail(key, "expected a non-empty list");
  }
  if (!ok()) return status();
  size_t index = 0;
  for (const YAML::Node& item : list) {
    FAIRQ_RETURN_IF_ERROR(
        read(item, FieldPath(key) + "[" + std::to_string(index++) + "]"));
  }
  return status();
}

void FieldReader::Adopt(std::string_view key, const Status& status) {
  if (!status.ok()) Fail(key, ProblemOf(status));
}

}  // namespace fairq::yaml
