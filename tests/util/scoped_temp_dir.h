// ScopedTempDir: a fresh directory under gtest's temporary directory for one
// test (or one fixture), removed with everything in it when it goes. Every
// test that needs files makes its directory through this one class.
//
// Thread-safety: none needed; a test owns its directory.
#ifndef FAIRQ_TESTS_UTIL_SCOPED_TEMP_DIR_H_
#define FAIRQ_TESTS_UTIL_SCOPED_TEMP_DIR_H_

#include <gtest/gtest.h>
#include <stdlib.h>

#include <filesystem>
#include <string>
#include <string_view>

namespace fairq::testing {

class ScopedTempDir {
 public:
  // `prefix` names the directory, so a test's leftovers can be told apart.
  explicit ScopedTempDir(std::string_view prefix = "fairq") {
    std::string pattern =
        ::testing::TempDir() + std::string(prefix) + "_XXXXXX";
    if (mkdtemp(pattern.data()) == nullptr) {
      ADD_FAILURE() << "mkdtemp failed for " << pattern;
      return;  // path_ stays empty: nothing of someone else's is removed
    }
    path_ = pattern;
  }
  ~ScopedTempDir() {
    if (path_.empty()) return;
    std::error_code ignored;
    std::filesystem::remove_all(path_, ignored);
  }
  ScopedTempDir(const ScopedTempDir&) = delete;
  ScopedTempDir& operator=(const ScopedTempDir&) = delete;

  const std::string& path() const { return path_; }
  // `name` inside the directory (not created).
  std::string Path(std::string_view name) const {
    return path_ + "/" + std::string(name);
  }

 private:
  std::string path_;
};

}  // namespace fairq::testing

#endif  // FAIRQ_TESTS_UTIL_SCOPED_TEMP_DIR_H_
