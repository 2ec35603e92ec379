// A compile's dump: never written through a symbolic link at a file's name, and the default
// folder in the shared temporary folder is this user's alone (a review found /tmp/fusedgemm
// shared by every user, its files opened through any link planted there).
#include "jit/dump.h"

#include <sys/stat.h>
#include <unistd.h>

#include <gtest/gtest.h>

#include <fstream>
#include <string>

#include "jit/jit_test_util.h"

namespace fusedgemm::jit {
namespace {

using testing::read_file;
using testing::TempDir;
using testing::tiny_kernel;

void write(const std::filesystem::path& path, const std::string& text) {
  std::ofstream(path, std::ios::binary) << text;
}

TEST(Dump, ALinkAtADumpFileIsNotFollowed) {
  const TempDir dumps;
  const TempDir elsewhere;
  const std::filesystem::path victim = elsewhere.path() / "victim.txt";
  write(victim, "untouched");
  const KernelSource source = tiny_kernel();
  const Result<std::string> tag = dump_tag(source, CompileOptions{});
  ASSERT_TRUE(tag) << tag.status().message();
  std::filesystem::create_symlink(victim, dumps.path() / ("tiny-" + tag.value() + ".cu"));
  const Result<DumpedFiles> dumped =
      dump_compile(dumps.path(), DumpFolder::kChosen, source, CompileOptions{}, "log");
  ASSERT_FALSE(dumped);
  EXPECT_EQ(dumped.status().code(), ErrorCode::kIo);
  EXPECT_NE(dumped.status().message().find("cannot write"), std::string::npos)
      << dumped.status().message();
  EXPECT_EQ(read_file(victim), "untouched");
}

// Only the default folder is made private: one the user chose keeps its mode.
TEST(Dump, AChosenFolderIsWrittenAsItIs) {
  const TempDir dumps;
  ASSERT_EQ(::chmod(dumps.path().c_str(), 0755), 0);
  const Result<DumpedFiles> dumped =
      dump_compile(dumps.path(), DumpFolder::kChosen, tiny_kernel(), CompileOptions{}, "log");
  ASSERT_TRUE(dumped) << dumped.status().message();
  struct stat info {};
  ASSERT_EQ(::stat(dumps.path().c_str(), &info), 0);
  EXPECT_EQ(info.st_mode & 0777, 0755u);
}

TEST(Dump, TheDefaultFolderIsThisUsersAlone) {
  const TempDir temp;
  const std::filesystem::path dir = default_dump_dir(temp.path());
  EXPECT_EQ(dir, temp.path() / ("fusedgemm-" + std::to_string(::geteuid())));
  const Result<DumpedFiles> dumped =
      dump_compile(dir, DumpFolder::kDefault, tiny_kernel(), CompileOptions{}, "log");
  ASSERT_TRUE(dumped) << dumped.status().message();
  EXPECT_EQ(read_file(dumped->source), tiny_kernel().code);
  struct stat info {};
  ASSERT_EQ(::lstat(dir.c_str(), &info), 0);
  EXPECT_EQ(info.st_mode & 0777, 0700u);
  EXPECT_EQ(::stat(dumped->source.c_str(), &info), 0);
  EXPECT_EQ(info.st_mode & 077, 0u);  // the files too

  // A link in its place (planted by anyone who could write the temporary folder) is refused,
  // and nothing is written where it points.
  const TempDir planted;
  std::filesystem::remove_all(dir);
  std::filesystem::create_directory_symlink(planted.path(), dir);
  const Result<DumpedFiles> refused =
      dump_compile(dir, DumpFolder::kDefault, tiny_kernel(), CompileOptions{}, "log");
  ASSERT_FALSE(refused);
  EXPECT_EQ(refused.status().code(), ErrorCode::kIo);
  EXPECT_NE(refused.status().message().find("is not a folder of this user"), std::string::npos)
      << refused.status().message();
  EXPECT_TRUE(std::filesystem::is_empty(planted.path()));
}

}  // namespace
}  // namespace fusedgemm::jit
