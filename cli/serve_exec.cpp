// getcert's side of `getcert serve`: find getcert-serve and exec it (serve.hpp).

#include <unistd.h>

#include <cerrno>
#include <filesystem>
#include <string>
#include <system_error>
#include <vector>

#include "exit_codes.hpp"
#include "report.hpp"
#include "serve.hpp"

// Where `make install` puts getcert-serve, relative to where it puts getcert (cli/CMakeLists.txt).
#ifndef GETCERT_SERVE_FROM_BINDIR
#define GETCERT_SERVE_FROM_BINDIR "../libexec/getcert"
#endif

namespace getcert::cli {

int exec_getcert_serve(const std::vector<std::string>& args, Terminal& term) {
  namespace fs = std::filesystem;
  constexpr const char* kName = "getcert-serve";
  std::error_code ec;
  // The executable's own path, not argv[0]: PATH lookups and symlinks resolve to where it is.
  const fs::path self = fs::read_symlink("/proc/self/exe", ec);
  if (ec) {
    report_line(term, "error",
                "'serve' runs " + std::string(kName) +
                    ", which is looked up next to getcert, but /proc/self/exe (getcert's path) " +
                    "cannot be read: " + ec.message());
    return kExitUnavailable;
  }
  const fs::path dir = self.parent_path();
  // Next to getcert: the build tree and an unpacked tarball. Then the installed layout.
  const std::vector<fs::path> candidates{
      dir / kName, (dir / GETCERT_SERVE_FROM_BINDIR / kName).lexically_normal()};

  std::vector<char*> argv;
  argv.reserve(args.size() + 1);
  for (const auto& a : args) argv.push_back(const_cast<char*>(a.c_str()));  // NOLINT: execv's API
  argv.push_back(nullptr);
  // Nothing has been written yet, but a buffered byte must not be lost (or doubled) by exec.
  term.out.flush();
  term.err.flush();

  std::string tried;
  for (const auto& path : candidates) {
    ::execv(path.c_str(), argv.data());
    const int err = errno;
    if (err != ENOENT && err != ENOTDIR) {
      report_line(term, "error",
                  "cannot run " + path.string() +
                      " for 'serve': " + std::error_code(err, std::generic_category()).message() +
                      "; check that it is an executable for this machine");
      return kExitUnavailable;
    }
    tried += (tried.empty() ? "" : " nor ") + path.string();
  }
  report_line(term, "error",
              "'serve' runs " + std::string(kName) + ", which is at neither " + tried +
                  "; install the getcert package, or copy " + kName + " from the build's cli/ " +
                  "directory next to getcert");
  return kExitUnavailable;
}

}  // namespace getcert::cli
