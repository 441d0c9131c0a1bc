// FieldReader: typed, strict access to the fields of one YAML mapping of a
// configuration file (simulator scenarios, the daemon's config); every problem
// becomes "file:line: path.field: problem".
//
// Sticky errors: after the first problem every getter returns its fallback and
// status() keeps that first problem, so a loader reads a whole block and
// checks once. Unknown and duplicate keys are problems too (a typo must not be
// silently ignored). Never throws. Not thread-safe; lives on a loader's stack.
#ifndef FAIRQ_YAML_YAML_FIELDS_H_
#define FAIRQ_YAML_YAML_FIELDS_H_

#include <yaml-cpp/yaml.h>

#include <cstdint>
#include <exception>
#include <functional>
#include <initializer_list>
#include <optional>
#include <string>
#include <string_view>
#include <utility>
#include <vector>

#include "base/status.h"

namespace fairq::yaml {

// 1-based line of `node` (0 when yaml-cpp recorded no position).
int LineOf(const YAML::Node& node);

// "source:line: field: problem" as an InvalidArgument status.
Status ErrorAt(std::string_view source, int line, std::string_view field,
               std::string_view problem);

// Shortest text that reads back as `value` (1, 0.5, -1, 1e+20). Unlike
// fairq::FormatNumber it never rounds, so a message quotes what the file said.
std::string FormatNumber(double value);

class FieldReader {
 public:
  // `path` names the mapping in messages ("" for the top level, else e.g.
  // "arrivals[2]"); `allowed` lists every key the mapping may hold.
  FieldReader(std::string source, const YAML::Node& node, std::string path,
              std::initializer_list<std::string_view> allowed);
  // A mapping whose keys are names chosen by the user (e.g. pool names).
  FieldReader(std::string source, const YAML::Node& node, std::string path);

  bool ok() const { return status_.ok(); }
  const Status& status() const { return status_; }

  bool Has(std::string_view key) const { return Find(key) != nullptr; }
  // Keys in file order.
  std::vector<std::string> Keys() const;
  // The value node, or an undefined node when the key is absent.
  YAML::Node Get(std::string_view key) const;
  // "arrivals[2].cost": the field's name in messages.
  std::string FieldPath(std::string_view key) const;
  // Line of the field's value (of the mapping when the key is absent).
  int Line(std::string_view key) const;

  // How ForEachItem treats the list under a key.
  enum class ListRule {
    kOptional,          // absent, null or empty: no items
    kOptionalNonEmpty,  // absent: no items; present: at least one
    kRequiredNonEmpty,  // at least one item
  };
  using ItemReader =
      std::function<Status(const YAML::Node& item, const std::string& path)>;
  // Calls `read(item, "key[i]")` for each item of the list under `key`; the
  // first error ends the walk and is returned.
  Status ForEachItem(std::string_view key, ListRule rule,
                     const ItemReader& read);
  int line() const { return line_; }
  const std::string& source() const { return source_; }

  // Scalars. The plain getters report a missing key; the Opt* ones return
  // nullopt for it. All return a fallback after an error.
  std::string String(std::string_view key);
  std::optional<std::string> OptString(std::string_view key);
  double Number(std::string_view key);
  std::optional<double> OptNumber(std::string_view key);
  std::optional<int64_t> OptInteger(std::string_view key);
  // true or false (also True/TRUE, False/FALSE: YAML 1.2's core schema).
  // YAML 1.1's yes/no/on/off are refused, so that a word never turns into a
  // boolean by accident.
  std::optional<bool> OptBool(std::string_view key);

  // Records `problem` against `key` unless `condition` holds.
  void Require(bool condition, std::string_view key, std::string_view problem);
  // Records `problem` against `key` (first problem wins).
  void Fail(std::string_view key, std::string_view problem);
  // Adopts a validator's "name: problem" message for `key`, replacing the
  // validator's own field name with this file's field path.
  void Adopt(std::string_view key, const Status& status);

 private:
  struct Entry {
    std::string key;
    YAML::Node value;
    int line;
  };

  const Entry* Find(std::string_view key) const;
  // `allowed` nullptr accepts any key.
  void Open(const YAML::Node& node,
            const std::initializer_list<std::string_view>* allowed);
  void CheckKeys(const YAML::Node& node,
                 const std::initializer_list<std::string_view>* allowed);
  std::optional<std::string> ScalarText(std::string_view key);

  std::string source_;
  std::string path_;
  int line_;
  std::vector<Entry> entries_;
  Status status_;
};

// A validator's message is "name: problem"; these split it (FieldOf is ""
// when there is no name).
std::string_view FieldOf(const Status& status);
std::string_view ProblemOf(const Status& status);

// Parses `text` and hands the document to `load`. yaml-cpp reports problems
// by throwing; this turns every exception into a Status ("source:line:
// invalid YAML: ..."), so none escapes a loader.
template <class T>
StatusOr<T> LoadDocument(
    std::string_view text, const std::string& source,
    const std::function<StatusOr<T>(const YAML::Node&)>& load) {
  try {
    return load(YAML::Load(std::string(text)));
  } catch (const YAML::Exception& e) {
    int line = e.mark.is_null() ? 0 : e.mark.line + 1;
    return ErrorAt(source, line, "", "invalid YAML: " + e.msg);
  } catch (const std::exception& e) {
    return Internal(source + ": unexpected error: " + e.what());
  }
}

}  // namespace fairq::yaml

#endif  // FAIRQ_YAML_YAML_FIELDS_H_
