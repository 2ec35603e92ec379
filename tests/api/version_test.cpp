// fusedgemm::version() and the version header are the CMake project's version: one statement
// of it, project(fusedgemm VERSION x.y.z) in CMakeLists.txt, which the Python package reads by
// the same regex as here (pyproject.toml).
#include "fusedgemm/version.h"

#include <gtest/gtest.h>

#include <fstream>
#include <regex>
#include <sstream>
#include <string>

namespace {

TEST(Version, IsTheCMakeProjectVersion) {
  EXPECT_EQ(fusedgemm::version(), FUSEDGEMM_TEST_PROJECT_VERSION);
  EXPECT_EQ(fusedgemm::version(), FUSEDGEMM_VERSION_STRING);
}

TEST(Version, IsTheProjectLineOfCMakeLists) {
  std::ifstream in(FUSEDGEMM_TEST_CMAKELISTS);
  ASSERT_TRUE(in) << FUSEDGEMM_TEST_CMAKELISTS;
  std::stringstream text;
  text << in.rdbuf();
  const std::string cmakelists = text.str();
  std::smatch match;
  // pyproject.toml's [tool.scikit-build.metadata.version] regex.
  ASSERT_TRUE(
      std::regex_search(cmakelists, match, std::regex(R"(project\(fusedgemm VERSION ([0-9.]+))")));
  EXPECT_EQ(fusedgemm::version(), match[1].str());
}

TEST(Version, MacrosSpellTheString) {
  const std::string spelled = std::to_string(FUSEDGEMM_VERSION_MAJOR) + "." +
                              std::to_string(FUSEDGEMM_VERSION_MINOR) + "." +
                              std::to_string(FUSEDGEMM_VERSION_PATCH);
  EXPECT_EQ(spelled, FUSEDGEMM_VERSION_STRING);
}

}  // namespace
