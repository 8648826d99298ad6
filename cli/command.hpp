#pragma once

// A subcommand: registers its options on the CLI11 app and runs once they are parsed.

#include <cctype>
#include <map>
#include <memory>
#include <string>
#include <string_view>
#include <vector>

#include <CLI/CLI.hpp>

#include "global_options.hpp"
#include "serve.hpp"
#include "terminal.hpp"

namespace getcert::cli {

// Restricts an enum option to named choices, with a readable error
// ("--output: nope not in {der,json,pem,text}").
template <class T>
CLI::Option* with_choices(CLI::Option* option, const std::map<std::string, T>& names) {
  std::string list;
  for (const auto& entry : names) list += (list.empty() ? "" : ", ") + entry.first;
  CLI::Validator choice(
      [names, list](std::string& input) -> std::string {
        std::string key = input;
        for (auto& c : key) c = static_cast<char>(std::tolower(static_cast<unsigned char>(c)));
        const auto found = names.find(key);
        if (found == names.end()) return "'" + input + "' is not one of " + list;
        input = std::to_string(static_cast<int>(found->second));
        return {};
      },
      "{" + list + "}");
  return option->transform(choice);
}

class Command {
 public:
  virtual ~Command() = default;
  // The subcommand's name on the command line ("fetch", "p12", "show").
  virtual std::string_view name() const = 0;
  // Adds the subcommand (and its options) to `app` under name(); returns it.
  virtual CLI::App* add_to(CLI::App& app) = 0;
  // Runs after a successful parse; returns the process exit code.
  virtual int run(Terminal& term, const GlobalOptions& global) = 0;
};

std::unique_ptr<Command> make_fetch_command();
std::unique_ptr<Command> make_p12_command();
std::unique_ptr<Command> make_show_command();
std::unique_ptr<Command> make_serve_command(ServeRunner runner);

}  // namespace getcert::cli
