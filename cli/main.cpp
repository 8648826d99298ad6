// The getcert executable. `serve` runs in getcert-serve (serve.hpp): this one execs it.

#include <string>
#include <vector>

#include "app.hpp"

int main(int argc, char** argv) {
  const std::vector<std::string> args(argv, argv + argc);
#ifdef GETCERT_NO_SERVE
  // The static build has no getcert-serve (cli/CMakeLists.txt): serve says so, exit 12.
  const getcert::cli::ServeRunner serve;
#else
  const getcert::cli::ServeRunner serve = [&args](const getcert::cli::ServeOptions&,
                                                  getcert::cli::Terminal& term) {
    return getcert::cli::exec_getcert_serve(args, term);
  };
#endif
  return getcert::cli::run_main(args, serve);
}
