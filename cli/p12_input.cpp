#include "p12_input.hpp"

#include <CLI/CLI.hpp>

#include "getcert/text.hpp"
#include "internal/try.hpp"

namespace getcert::cli {

void add_p12_input_options(CLI::App* cmd, P12Args& args) {
  add_password_options(cmd, args.password, "the key store's password");
  add_key_password_options(cmd, args.key_password);
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

std::string keystore_format_name(const pkcs12::Keystore& store) {
  std::string name(pkcs12::to_string(store.format));
  if (store.base64_wrapped && store.format != pkcs12::KeystoreFormat::pkcs12_base64) {
    name += "-base64";
  }
  return name;
}

bool looks_like_keystore(const std::vector<std::uint8_t>& bytes) {
  auto is_store = [](const std::vector<std::uint8_t>& b) {
    if (b.size() >= 4 && ((b[0] == 0xFE && b[1] == 0xED && b[2] == 0xFE && b[3] == 0xED) ||
                          (b[0] == 0xCE && b[1] == 0xCE && b[2] == 0xCE && b[3] == 0xCE))) {
      return true;
    }
    const std::string_view text(reinterpret_cast<const char*>(b.data()), b.size());
    return looks_like_p12(b) || text.find("-----BEGIN PKCS12-----") != std::string_view::npos;
  };
  if (is_store(bytes)) return true;
  const auto decoded = pkcs12::decode_base64_text(bytes);
  return decoded && is_store(*decoded);
}

Result<void> read_p12_passwords(P12Args& args, Terminal& term) {
  if (!args.password_read) {
    auto read = read_password(args.password, term);
    if (!read) return tl::unexpected(read.error());
    args.password_read = std::move(*read);
  }
  if (!args.key_password_read) {
    auto read = read_password(args.key_password, term);
    if (!read) return tl::unexpected(read.error());
    args.key_password_read = std::move(*read);
  }
  return {};
}

bool may_prompt(const P12Args& args, const Terminal& term) {
  return term.stdin_is_tty && !(args.password_read && *args.password_read);
}

Result<pkcs12::Keystore> open_keystore(const std::vector<std::uint8_t>& bytes,
                                       const std::string& name, P12Args& args, Terminal& term,
                                       bool list_without_password) {
  GETCERT_TRY(read_p12_passwords(args, term));
  const auto& password = args.password_read;
  const auto& key_password = args.key_password_read;
  pkcs12::KeystoreOptions options;
  options.max_iterations = args.max_iterations;
  options.list_without_password = list_without_password;
  if (*password) options.password = **password;
  if (*key_password) options.key_password = **key_password;
  auto store = pkcs12::read_keystore(bytes, options);
  if (!store && store.error().code == Errc::wrong_password && !*password && term.stdin_is_tty) {
    auto typed = prompt_password("Password for " + escape_untrusted(name) + ": ", term);
    if (!typed) return tl::unexpected(typed.error());
    options.password = std::move(*typed);
    store = pkcs12::read_keystore(bytes, options);
  }
  if (!store) {
    Error e = store.error();
    e.message = name + ": " + e.message;
    // The library names its own knob; on the command line it is a flag.
    if (const auto knob = e.message.find("raise DecodeOptions::max_iterations");
        knob != std::string::npos) {
      e.message.replace(knob, std::string("raise DecodeOptions::max_iterations").size(),
                        "use --max-iterations N");
    }
    // No flag raises the signature-check budget: no real key store comes near it.
    if (const auto knob = e.message.find(" (raise DecodeOptions::max_signature_checks");
        knob != std::string::npos) {
      e.message.resize(knob);
    }
    if (e.code == Errc::wrong_key_password && !*key_password) {
      e.message +=
          "; give the key password with --key-password-file, --key-password-env or "
          "--key-password-stdin";
    } else if (e.code == Errc::wrong_password && !*password) {
      e.message +=
          "; the file needs a password: give --password-file, --password-env or "
          "--password-stdin";
    }
    return tl::unexpected(e);
  }
  return store;
}

Result<pkcs12::Bundle> open_p12(const std::vector<std::uint8_t>& bytes, const std::string& name,
                                P12Args& args, Terminal& term) {
  GETCERT_TRY_ASSIGN(auto store,
                     open_keystore(bytes, name, args, term, /*list_without_password=*/false));
  return std::move(store.bundle);
}

}  // namespace getcert::cli
