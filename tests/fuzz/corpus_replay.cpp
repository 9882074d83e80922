// fuzz_corpus_replay: runs every committed seed (corpus/<target>/*) through its fuzz target
// without libFuzzer, so every build (gcc, the sanitizer build) exercises the seeds.
//   fuzz_corpus_replay                         GoogleTest, one test per target (ctest -L unit)
//   fuzz_corpus_replay --replay TARGET FILE..  runs the files through TARGET (crash reproducer)
#include <algorithm>
#include <cstring>
#include <filesystem>
#include <fstream>
#include <iostream>
#include <iterator>
#include <string>
#include <vector>

#include <gtest/gtest.h>

#include "fuzz_targets.h"

namespace expiry::fuzz {
namespace {

namespace fs = std::filesystem;

std::string read_file(const fs::path& path) {
  std::ifstream in(path, std::ios::binary);
  return std::string(std::istreambuf_iterator<char>(in), std::istreambuf_iterator<char>());
}

const FuzzTarget* find_target(const std::string& name) {
  for (const auto& t : fuzz_targets()) {
    if (name == t.name || name == std::string("fuzz_") + t.name) return &t;
  }
  return nullptr;
}

class CorpusReplay : public testing::TestWithParam<FuzzTarget> {};

TEST_P(CorpusReplay, EverySeedPasses) {
  const fs::path dir = fs::path(EXPIRY_FUZZ_CORPUS_DIR) / GetParam().name;
  ASSERT_TRUE(fs::is_directory(dir)) << dir;
  std::vector<fs::path> seeds;
  for (const auto& e : fs::directory_iterator(dir)) {
    if (e.is_regular_file()) seeds.push_back(e.path());
  }
  std::sort(seeds.begin(), seeds.end());
  EXPECT_GE(seeds.size(), 3u) << "a target needs a few meaningful seeds in " << dir;
  for (const auto& seed : seeds) {
    SCOPED_TRACE(seed.string());
    GetParam().run(read_file(seed));  // a broken invariant aborts and names itself on stderr
  }
}

INSTANTIATE_TEST_SUITE_P(Fuzz, CorpusReplay, testing::ValuesIn(fuzz_targets()),
                         [](const testing::TestParamInfo<FuzzTarget>& info) { return std::string(info.param.name); });

// The reproducers of known findings in src/ (findings/<target>-<finding>): each target must
// handle them without crashing, by tolerating them until src/ is fixed (fuzz_check.h).
TEST(KnownFindings, AreToleratedUnlessStrict) {
  const fs::path dir = fs::path(EXPIRY_FUZZ_CORPUS_DIR).parent_path() / "findings";
  if (!fs::is_directory(dir)) GTEST_SKIP() << "no known findings";
  for (const auto& e : fs::directory_iterator(dir)) {
    const std::string name = e.path().filename().string();
    const FuzzTarget* target = find_target(name.substr(0, name.find('-')));
    ASSERT_NE(target, nullptr) << "findings/" << name << " must be named <target>-<finding>";
    SCOPED_TRACE(e.path().string());
    target->run(read_file(e.path()));
  }
}

int replay_files(int argc, char** argv) {
  const FuzzTarget* target = find_target(argv[2]);
  if (target == nullptr) {
    std::cerr << "unknown target " << argv[2] << "; targets:";
    for (const auto& t : fuzz_targets()) std::cerr << " " << t.name;
    std::cerr << "\n";
    return 2;
  }
  for (int i = 3; i < argc; ++i) {
    std::cerr << "replaying " << argv[i] << "\n";
    target->run(read_file(argv[i]));
  }
  std::cerr << "ok: " << (argc - 3) << " inputs\n";
  return 0;
}

}  // namespace
}  // namespace expiry::fuzz

int main(int argc, char** argv) {
  if (argc >= 3 && std::strcmp(argv[1], "--replay") == 0) return expiry::fuzz::replay_files(argc, argv);
  testing::InitGoogleTest(&argc, argv);
  return RUN_ALL_TESTS();
}
