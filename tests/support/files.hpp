#pragma once

// Files the tests read and write: the generated PKI, temp directories, PEM text.

#include <cstdint>
#include <filesystem>
#include <string>
#include <vector>

namespace getcert::test {

// Path of a file in the generated test PKI (GETCERT_TESTCERTS_DIR). Throws when the PKI is
// missing or incomplete (no .complete stamp), so a broken build fails loudly.
std::string pki(const std::string& name);

std::string read_file(const std::filesystem::path& path);
std::vector<std::uint8_t> read_bytes(const std::filesystem::path& path);
void write_file(const std::filesystem::path& path, const std::string& content);
void write_file(const std::filesystem::path& path, const std::vector<std::uint8_t>& content);

// A fresh directory under $TMPDIR (or /tmp), removed with everything in it on destruction.
class TempDir {
 public:
  TempDir();
  TempDir(const TempDir&) = delete;
  TempDir& operator=(const TempDir&) = delete;
  ~TempDir();
  const std::filesystem::path& path() const noexcept { return path_; }
  std::string operator/(const std::string& name) const { return (path_ / name).string(); }

 private:
  std::filesystem::path path_;
};

// The CERTIFICATE blocks of a text (e.g. `openssl s_client -showcerts` output), each from its
// BEGIN line to its END line plus "\n", concatenated in order.
std::string certificate_blocks(const std::string& text);
std::vector<std::string> certificate_block_list(const std::string& text);
// The first of them, or "" when there is none.
std::string first_certificate_block(const std::string& text);

// Names of the entries of a directory, sorted.
std::vector<std::string> directory_listing(const std::filesystem::path& dir);

}  // namespace getcert::test
