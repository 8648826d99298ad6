#pragma once

// CLI11's types by name only, for headers whose functions take them: <CLI/CLI.hpp> costs about
// 13 CPU seconds per file that includes it under the sanitizers, so only the .cpp files that
// call CLI11 include it.

namespace CLI {
class App;
class Option;
}  // namespace CLI
