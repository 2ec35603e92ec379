// A Context's settings come from its options, then the FUSEDGEMM_* variables, then the
// defaults (docs/ENVIRONMENT.md); tests pass a fake environment instead of calling setenv.
#include "jit/settings.h"

#include <gtest/gtest.h>
#include <unistd.h>

#include <map>
#include <string>

#include "jit/jit_test_util.h"
#include "jit/kernel_cache.h"

namespace fusedgemm::jit {
namespace {

EnvLookup fake_env(std::map<std::string, std::string> vars) {
  return [vars = std::move(vars)](const char* name) -> std::optional<std::string> {
    const auto it = vars.find(name);
    if (it == vars.end()) return std::nullopt;
    return it->second;
  };
}

TEST(JitSettings, CacheDirFallsBackFromVariableToXdgToHome) {
  const ContextOptions options;
  EXPECT_EQ(resolve_settings(
                options,
                fake_env({{"FUSEDGEMM_CACHE_DIR", "/c"}, {"XDG_CACHE_HOME", "/x"}, {"HOME", "/h"}}))
                ->cache_dir,
            "/c");
  EXPECT_EQ(
      resolve_settings(options, fake_env({{"XDG_CACHE_HOME", "/x"}, {"HOME", "/h"}}))->cache_dir,
      "/x/fusedgemm");
  // The XDG spec says a relative XDG_CACHE_HOME is ignored; an empty variable is unset.
  EXPECT_EQ(resolve_settings(
                options,
                fake_env({{"XDG_CACHE_HOME", "rel"}, {"FUSEDGEMM_CACHE_DIR", ""}, {"HOME", "/h"}}))
                ->cache_dir,
            "/h/.cache/fusedgemm");
  EXPECT_TRUE(resolve_settings(options, fake_env({}))->cache_dir.empty());
}

// A relative folder is the working directory's when the Context is created, not at each
// later load or store (a chdir in between would split the cache).
TEST(JitSettings, RelativeFoldersAreResolvedOnce) {
  const ContextSettings settings =
      resolve_settings(ContextOptions{}, fake_env({{"FUSEDGEMM_CACHE_DIR", "rel/cache"},
                                                   {"FUSEDGEMM_DUMP_DIR", "d"}}))
          .value();
  EXPECT_EQ(settings.cache_dir, std::filesystem::current_path() / "rel/cache");
  EXPECT_EQ(settings.dump_dir, std::filesystem::current_path() / "d");
}

TEST(JitSettings, DefaultsWithoutEnvironment) {
  const ContextSettings settings = resolve_settings(ContextOptions{}, fake_env({})).value();
  EXPECT_EQ(settings.cache_max_bytes, kDefaultCacheMaxBytes);
  EXPECT_FALSE(settings.cache_disabled);
  EXPECT_TRUE(settings.dump_dir.empty());
  EXPECT_FALSE(settings.verbose);
  EXPECT_EQ(settings.cuda_include_dirs, configured_cuda_include_dirs());
}

TEST(JitSettings, VariablesAreParsed) {
  const ContextSettings settings =
      resolve_settings(ContextOptions{}, fake_env({{"FUSEDGEMM_CACHE_MAX_BYTES", "3G"},
                                                   {"FUSEDGEMM_DISABLE_CACHE", "1"},
                                                   {"FUSEDGEMM_DUMP_DIR", "/d"},
                                                   {"FUSEDGEMM_VERBOSE", "yes"},
                                                   {"CUDA_HOME", "/opt/cuda"}}))
          .value();
  EXPECT_EQ(settings.cache_max_bytes, std::uint64_t{3} << 30);
  EXPECT_TRUE(settings.cache_disabled);
  EXPECT_EQ(settings.dump_dir, "/d");
  EXPECT_TRUE(settings.verbose);
  ASSERT_FALSE(settings.cuda_include_dirs.empty());
  EXPECT_EQ(settings.cuda_include_dirs[0], "/opt/cuda/include");
  EXPECT_EQ(resolve_settings(ContextOptions{}, fake_env({{"FUSEDGEMM_CACHE_MAX_BYTES", "4096"}}))
                ->cache_max_bytes,
            4096u);
}

TEST(JitSettings, OptionsOverrideTheEnvironment) {
  ContextOptions options;
  options.cache_dir = "/opt-cache";
  options.cache_max_bytes = 1000;
  options.disable_cache = false;
  options.dump_dir = "";
  options.verbose = false;
  const ContextSettings settings =
      resolve_settings(options, fake_env({{"FUSEDGEMM_CACHE_DIR", "/env-cache"},
                                          {"FUSEDGEMM_CACHE_MAX_BYTES", "bad"},
                                          {"FUSEDGEMM_DISABLE_CACHE", "1"},
                                          {"FUSEDGEMM_DUMP_DIR", "/d"},
                                          {"FUSEDGEMM_VERBOSE", "1"}}))
          .value();
  EXPECT_EQ(settings.cache_dir, "/opt-cache");
  EXPECT_EQ(settings.cache_max_bytes, 1000u);
  EXPECT_FALSE(settings.cache_disabled);
  EXPECT_TRUE(settings.dump_dir.empty());
  EXPECT_FALSE(settings.verbose);
}

TEST(JitSettings, ReadEnvironmentFalseIgnoresEveryVariable) {
  ContextOptions options;
  options.read_environment = false;
  const ContextSettings settings =
      resolve_settings(options, fake_env({{"FUSEDGEMM_DISABLE_CACHE", "1"},
                                          {"FUSEDGEMM_VERBOSE", "garbage"},
                                          {"HOME", "/h"}}))
          .value();
  EXPECT_FALSE(settings.cache_disabled);
  EXPECT_TRUE(settings.cache_dir.empty());
}

// A failed compile's default folder is resolved when the Context is created, TMPDIR read
// through the EnvLookup: it was computed at failure time by temp_directory_path(), whose
// getenv("TMPDIR") raced a setenv on any other thread.
TEST(JitSettings, FailureDumpDirIsUnderTmpdirResolvedOnce) {
  const testing::TempDir temp;
  const std::string own = "fusedgemm-" + std::to_string(::geteuid());
  EXPECT_EQ(resolve_settings(ContextOptions{}, fake_env({{"TMPDIR", temp.path().string()}}))
                ->failure_dump_dir,
            temp.path() / own);
  // FUSEDGEMM_DUMP_DIR takes every dump but does not move the default.
  EXPECT_EQ(resolve_settings(ContextOptions{}, fake_env({{"TMPDIR", temp.path().string()},
                                                         {"FUSEDGEMM_DUMP_DIR", "/d"}}))
                ->failure_dump_dir,
            temp.path() / own);

  const std::filesystem::path fallback = std::filesystem::path("/tmp") / own;
  EXPECT_EQ(resolve_settings(ContextOptions{}, fake_env({}))->failure_dump_dir, fallback);
  EXPECT_EQ(resolve_settings(ContextOptions{}, fake_env({{"TMPDIR", ""}}))->failure_dump_dir,
            fallback);
  // A relative TMPDIR is ignored (as a relative XDG_CACHE_HOME is), and so is one that names
  // no folder (temp_directory_path() refused it too).
  EXPECT_EQ(resolve_settings(ContextOptions{}, fake_env({{"TMPDIR", "rel"}}))->failure_dump_dir,
            fallback);
  EXPECT_EQ(
      resolve_settings(ContextOptions{}, fake_env({{"TMPDIR", (temp.path() / "missing").string()}}))
          ->failure_dump_dir,
      fallback);

  ContextOptions hermetic;
  hermetic.read_environment = false;
  EXPECT_EQ(
      resolve_settings(hermetic, fake_env({{"TMPDIR", temp.path().string()}}))->failure_dump_dir,
      fallback);
}

TEST(JitSettings, MalformedVariableIsNamedWithItsValue) {
  const Result<ContextSettings> bad_bool =
      resolve_settings(ContextOptions{}, fake_env({{"FUSEDGEMM_VERBOSE", "maybe"}}));
  ASSERT_FALSE(bad_bool.is_ok());
  EXPECT_EQ(bad_bool.status().code(), ErrorCode::kInvalidArgument);
  EXPECT_NE(bad_bool.status().message().find("FUSEDGEMM_VERBOSE='maybe'; legal: 1 or 0"),
            std::string::npos)
      << bad_bool.status().message();

  for (const char* value : {"0", "12X", "-5", "1GG", "99999999999T"}) {
    const Result<ContextSettings> bad_bytes =
        resolve_settings(ContextOptions{}, fake_env({{"FUSEDGEMM_CACHE_MAX_BYTES", value}}));
    ASSERT_FALSE(bad_bytes.is_ok()) << value;
    EXPECT_NE(
        bad_bytes.status().message().find(std::string("FUSEDGEMM_CACHE_MAX_BYTES='") + value + "'"),
        std::string::npos)
        << bad_bytes.status().message();
  }
}

}  // namespace
}  // namespace fusedgemm::jit
