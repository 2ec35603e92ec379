// The example graphs under examples/ (FUSEDGEMM_EXAMPLES_DIR), found by listing the folder
// so that a test walking them covers a new example without an edit.
#pragma once

#include <algorithm>
#include <cctype>
#include <filesystem>
#include <string>
#include <vector>

namespace fusedgemm_test {

// Every examples/*.json, sorted by file name (none where the folder cannot be read: the
// tests that need them then fail by name, not at static initialization).
inline std::vector<std::filesystem::path> example_files() {
  std::vector<std::filesystem::path> files;
  std::error_code ec;
  for (const auto& entry : std::filesystem::directory_iterator(FUSEDGEMM_EXAMPLES_DIR, ec)) {
    if (entry.path().extension() == ".json") files.push_back(entry.path());
  }
  std::sort(files.begin(), files.end());
  return files;
}

// "gated_mlp.json" -> "gated_mlp": a test name gtest accepts (letters, digits, '_').
inline std::string example_name(const std::filesystem::path& file) {
  std::string name = file.stem().string();
  for (char& c : name) {
    if (!std::isalnum(static_cast<unsigned char>(c))) c = '_';
  }
  return name;
}

}  // namespace fusedgemm_test
