#include "p12_input.hpp"

#include "getcert/text.hpp"

namespace getcert::cli {

void add_p12_input_options(CLI::App* cmd, P12Args& args) {
  add_password_options(cmd, args.password, "the PKCS#12 password");
  cmd->add_option("--max-iterations", args.max_iterations,
                  "Work budget per file: refuse a file whose key derivations add up to more "
                  "iterations than this (iterations x hash blocks, every password guess "
                  "counted; default 10000000), before deriving anything");
}

bool looks_like_p12(const std::vector<std::uint8_t>& bytes) {
  // SEQUENCE (definite or indefinite length) whose first element is INTEGER 3.
  if (bytes.size() < 5 || bytes[0] != 0x30) return false;
  std::size_t i = 1;
  // Definite long form: skip the length octets; short form and indefinite (0x80): one octet.
  if (bytes[i] != 0x80 && (bytes[i] & 0x80) != 0) i += static_cast<std::size_t>(bytes[i] & 0x7FU);
  i += 1;
  return i + 2 < bytes.size() && bytes[i] == 0x02 && bytes[i + 1] == 0x01 && bytes[i + 2] == 0x03;
}

Result<pkcs12::Bundle> open_p12(const std::vector<std::uint8_t>& bytes, const std::string& name,
                                P12Args& args, Terminal& term) {
  if (!args.password_read) {
    auto read = read_password(args.password, term);
    if (!read) return tl::unexpected(read.error());
    args.password_read = std::move(*read);
  }
  const auto& password = args.password_read;
  pkcs12::DecodeOptions options;
  options.max_iterations = args.max_iterations;
  if (*password) options.password = std::string((*password)->data(), (*password)->size());
  auto bundle = pkcs12::decode(bytes, options);
  if (!bundle && bundle.error().code == Errc::wrong_password && !*password && term.stdin_is_tty) {
    auto typed = prompt_password("Password for " + escape_untrusted(name) + ": ", term);
    if (!typed) return tl::unexpected(typed.error());
    options.password = std::string(typed->data(), typed->size());
    bundle = pkcs12::decode(bytes, options);
  }
  if (!bundle) {
    Error e = bundle.error();
    e.message = name + ": " + e.message;
    // The library names its own knob; on the command line it is a flag.
    if (const auto knob = e.message.find("raise DecodeOptions::max_iterations");
        knob != std::string::npos) {
      e.message.replace(knob, std::string("raise DecodeOptions::max_iterations").size(),
                        "use --max-iterations N");
    }
    if (e.code == Errc::wrong_password && !*password) {
      e.message +=
          "; the file needs a password: give --password-file, --password-env or "
          "--password-stdin";
    }
    return tl::unexpected(e);
  }
  return bundle;
}

}  // namespace getcert::cli
