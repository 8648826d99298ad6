// The getcert-serve executable: `getcert serve`, which getcert execs (serve.hpp). It takes
// serve's command line, with or without the leading `serve`.

#include <string>
#include <vector>

#include "app.hpp"
#include "exporter/server.hpp"

int main(int argc, char** argv) {
  return getcert::cli::run_main(
      getcert::cli::as_serve_command(std::vector<std::string>(argv, argv + argc)),
      getcert::cli::exporter::run);
}
