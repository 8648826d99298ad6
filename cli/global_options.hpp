#pragma once

// Options shared by every subcommand, apart from the subcommands themselves (command.hpp), so
// that code which only reads them does not compile CLI11.

namespace getcert::cli {

struct GlobalOptions {
  int verbosity = 0;  // -v: show low-level detail (OpenSSL errors) under each error
  bool quiet = false;
};

}  // namespace getcert::cli
