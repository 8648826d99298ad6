// Replays inputs through a fuzz target's LLVMFuzzerTestOneInput in an ordinary build (g++, no
// libFuzzer), so that every committed seed and every past crash runs in the dev and asan suites.
// Usage: fuzz_replay_TARGET PATH...   (files, or folders whose files are all replayed)
// A folder that does not exist counts as empty: git keeps no empty regressions/TARGET folder.
// Zero inputs in total is a failure, so a wrong path cannot make the test pass vacuously.

#include <algorithm>
#include <cstddef>
#include <cstdint>
#include <filesystem>
#include <fstream>
#include <iostream>
#include <iterator>
#include <system_error>
#include <vector>

extern "C" int LLVMFuzzerTestOneInput(const std::uint8_t* data, std::size_t size);

namespace {

namespace fs = std::filesystem;

std::vector<std::uint8_t> read_file(const fs::path& path) {
  std::ifstream in(path, std::ios::binary);
  return {std::istreambuf_iterator<char>(in), std::istreambuf_iterator<char>()};
}

}  // namespace

int main(int argc, char** argv) {
  std::vector<fs::path> inputs;
  for (int i = 1; i < argc; ++i) {
    const fs::path arg(argv[i]);
    std::error_code ec;
    if (fs::is_directory(arg, ec)) {
      std::vector<fs::path> files;
      for (const auto& entry : fs::directory_iterator(arg)) {
        if (entry.is_regular_file()) files.push_back(entry.path());
      }
      std::sort(files.begin(), files.end());
      inputs.insert(inputs.end(), files.begin(), files.end());
    } else if (fs::is_regular_file(arg, ec)) {
      inputs.push_back(arg);
    } else if (fs::exists(arg, ec)) {
      std::cerr << "replay: " << arg << " is neither a file nor a folder\n";
      return 1;
    }
  }
  if (inputs.empty()) {
    std::cerr << "replay: no inputs found in the paths given\n";
    return 1;
  }
  for (const auto& path : inputs) {
    // Printed first, so that the input that crashes is the last line before the crash.
    std::cerr << "replay: " << path.string() << "\n";
    const auto bytes = read_file(path);
    LLVMFuzzerTestOneInput(bytes.data(), bytes.size());
  }
  std::cout << "replay: " << inputs.size() << " inputs, no crash\n";
  return 0;
}
