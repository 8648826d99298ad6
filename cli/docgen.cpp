#include "docgen.hpp"

#include <sstream>

#include <CLI/CLI.hpp>

namespace getcert::cli {
namespace {

// roff escaping: backslashes and leading dots/quotes.
std::string roff(const std::string& text) {
  std::string out;
  bool line_start = true;
  for (const char c : text) {
    if (line_start && (c == '.' || c == '\'')) out += "\\&";
    if (c == '\\') {
      out += "\\e";
    } else if (c == '-') {
      out += "\\-";
    } else {
      out += c;
    }
    line_start = c == '\n';
  }
  return out;
}

std::string option_names(const CLI::Option* opt) {
  std::string names;
  for (const auto& s : opt->get_snames()) names += (names.empty() ? "-" : ", -") + s;
  for (const auto& l : opt->get_lnames()) names += (names.empty() ? "--" : ", --") + l;
  return names;
}

bool documented(const CLI::Option* opt) {
  return !opt->get_group().empty() && opt->get_lnames() != std::vector<std::string>{"help"};
}

void man_section(std::ostringstream& o, const CLI::App& app, const std::string& path) {
  o << ".SS \"" << roff(path) << "\"\n" << roff(app.get_description()) << "\n";
  for (const CLI::Option* opt : app.get_options()) {
    if (!documented(opt)) continue;
    o << ".TP\n.B " << roff(opt->get_positional() ? opt->get_name(true) : option_names(opt)) << "\n"
      << roff(opt->get_description()) << "\n";
  }
  if (!app.get_footer().empty()) o << ".PP\n.nf\n" << roff(app.get_footer()) << "\n.fi\n";
  for (const CLI::App* sub : app.get_subcommands([](const CLI::App*) { return true; })) {
    man_section(o, *sub, path + " " + sub->get_name());
  }
}

void collect_words(const CLI::App& app, const std::string& path, std::ostringstream& cases,
                   std::string& all_subcommands) {
  std::string words;
  for (const CLI::App* sub : app.get_subcommands([](const CLI::App*) { return true; })) {
    words += sub->get_name() + " ";
    if (all_subcommands.find("|" + sub->get_name() + "|") == std::string::npos) {
      all_subcommands += sub->get_name() + "|";
    }
  }
  for (const CLI::Option* opt : app.get_options()) {
    if (opt->get_positional()) continue;
    for (const auto& l : opt->get_lnames()) words += "--" + l + " ";
    for (const auto& s : opt->get_snames()) words += "-" + s + " ";
  }
  cases << "    \"" << path << "\") words=\"" << words << "\" ;;\n";
  for (const CLI::App* sub : app.get_subcommands([](const CLI::App*) { return true; })) {
    collect_words(*sub, path.empty() ? sub->get_name() : path + " " + sub->get_name(), cases,
                  all_subcommands);
  }
}

// Markdown inline text: characters that would start emphasis, code, HTML or a link are escaped,
// so a description renders as the same words --help prints.
std::string markdown_text(const std::string& text) {
  std::string out;
  for (const char c : text) {
    if (c == '<') {
      out += "&lt;";
    } else if (c == '>') {
      out += "&gt;";
    } else if (c == '*' || c == '_' || c == '`' || c == '[' || c == ']' || c == '\\') {
      out += '\\';
      out += c;
    } else if (c == '\n') {
      out += ' ';
    } else {
      out += c;
    }
  }
  return out;
}

// "--ca-file FILE" as --help spells it: names, then the value's type for options taking one.
std::string option_usage(const CLI::Option* opt) {
  if (opt->get_positional()) return opt->get_name(true);
  std::string usage = option_names(opt);
  if (opt->get_items_expected_min() > 0 && !opt->get_type_name().empty()) {
    usage += " " + opt->get_type_name();
  }
  return usage;
}

void markdown_section(std::ostringstream& o, const CLI::App& app, const std::string& path) {
  o << "\n## " << path << "\n\n" << markdown_text(app.get_description()) << "\n";
  bool first = true;
  for (const CLI::Option* opt : app.get_options()) {
    if (!documented(opt)) continue;
    if (first) o << "\n";
    first = false;
    o << "- `" << option_usage(opt) << "`";
    if (!opt->get_description().empty()) o << ": " << markdown_text(opt->get_description());
    if (!opt->get_default_str().empty()) {
      o << " (default: `" << opt->get_default_str() << "`)";
    }
    o << "\n";
  }
  if (!app.get_footer().empty()) o << "\n```text\n" << app.get_footer() << "\n```\n";
  for (const CLI::App* sub : app.get_subcommands([](const CLI::App*) { return true; })) {
    markdown_section(o, *sub, path + " " + sub->get_name());
  }
}

}  // namespace

std::string markdown_reference(const CLI::App& app) {
  std::ostringstream o;
  o << "# Command-line reference\n\n"
    << "<!-- Generated from getcert's own option definitions (cli/docgen.cpp) by tools/gen-docs;\n"
       "     do not edit: ctest's \"docs: cli.md is generated\" fails when this copy is stale. "
       "-->\n\n"
    << "Every subcommand and option of `getcert`, as `getcert SUBCOMMAND --help` prints them. "
       "What the options do in detail: [fetch.md](fetch.md), [keystores.md](keystores.md), "
       "[show.md](show.md), [fleet.md](fleet.md), [verification.md](verification.md); exit "
       "codes: [exit-codes.md](exit-codes.md). Back to the [README](../README.md).\n";
  markdown_section(o, app, "getcert");
  return o.str();
}

std::string man_page(const CLI::App& app, const std::string& version) {
  std::ostringstream o;
  o << R"(.TH GETCERT 1 "" ")" << roff(version) << R"(" "User Commands")"
    << "\n";
  o << ".SH NAME\ngetcert \\- " << roff(app.get_description()) << "\n";
  o << ".SH SYNOPSIS\n.B getcert\n[\\fIOPTIONS\\fR] \\fIHOST\\fR[:\\fIPORT\\fR]...\n.br\n"
    << ".B getcert\n\\fISUBCOMMAND\\fR [\\fIOPTIONS\\fR]...\n";
  o << ".SH DESCRIPTION\n"
    << "getcert fetches the certificate chain a TLS server presents, verifies it (trust store, "
       "host name or IP, validity, purpose, revocation) and hands back PEM, DER, JSON or a "
       "readable report. It also converts PKCS#12 files from any producer into clean PEM files, "
       "creates them, and inspects local certificate files.\n";
  o << ".SH OPTIONS\n";
  man_section(o, app, "getcert");
  if (!app.get_footer().empty())
    o << ".SH \"EXIT STATUS\"\n.nf\n" << roff(app.get_footer()) << "\n.fi\n";
  return o.str();
}

std::string bash_completion(const CLI::App& app) {
  std::ostringstream cases;
  std::string names = "|";
  collect_words(app, "", cases, names);
  names = names.substr(1, names.size() - 2);
  std::ostringstream o;
  o << "# bash completion for getcert (generated from its command-line definitions)\n"
    << "_getcert() {\n"
    << "  local cur=${COMP_WORDS[COMP_CWORD]} path=\"\" w words\n"
    << "  for w in \"${COMP_WORDS[@]:1:COMP_CWORD-1}\"; do\n"
    << "    case \"$w\" in\n"
    << "      " << names << ") path=\"${path:+$path }$w\" ;;\n"
    << "    esac\n"
    << "  done\n"
    << "  case \"$path\" in\n"
    << cases.str() << "    *) words=\"\" ;;\n"
    << "  esac\n"
    << "  case \"$cur\" in\n"
    << "    -*) COMPREPLY=($(compgen -W \"$words\" -- \"$cur\")) ;;\n"
    << "    *) COMPREPLY=($(compgen -W \"$words\" -- \"$cur\") $(compgen -f -- \"$cur\")) ;;\n"
    << "  esac\n"
    << "}\n"
    << "complete -o filenames -F _getcert getcert\n";
  return o.str();
}

}  // namespace getcert::cli
