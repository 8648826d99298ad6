#include "support/files.hpp"

#include <unistd.h>

#include <algorithm>
#include <cstdlib>
#include <fstream>
#include <sstream>
#include <stdexcept>
#include <system_error>

namespace getcert::test {

std::string pki(const std::string& name) {
  const std::filesystem::path dir = GETCERT_TESTCERTS_DIR;
  if (!std::filesystem::exists(dir / ".complete")) {
    throw std::runtime_error("test PKI missing or incomplete in " + dir.string() +
                             " (build the getcert_testcerts target)");
  }
  return (dir / name).string();
}

std::string read_file(const std::filesystem::path& path) {
  std::ifstream in(path, std::ios::binary);
  if (!in) throw std::runtime_error("cannot read " + path.string());
  std::ostringstream s;
  s << in.rdbuf();
  return s.str();
}

std::vector<std::uint8_t> read_bytes(const std::filesystem::path& path) {
  const std::string content = read_file(path);
  return {content.begin(), content.end()};
}

void write_file(const std::filesystem::path& path, const std::string& content) {
  std::ofstream out(path, std::ios::binary | std::ios::trunc);
  out << content;
  if (!out) throw std::runtime_error("cannot write " + path.string());
}

void write_file(const std::filesystem::path& path, const std::vector<std::uint8_t>& content) {
  write_file(path, std::string(content.begin(), content.end()));
}

TempDir::TempDir() {
  const char* base = std::getenv("TMPDIR");
  std::string pattern =
      std::string(base != nullptr && *base != '\0' ? base : "/tmp") + "/getcert-test-XXXXXX";
  if (::mkdtemp(pattern.data()) == nullptr) throw std::runtime_error("mkdtemp failed");
  path_ = pattern;
}

TempDir::~TempDir() {
  std::error_code ec;
  std::filesystem::remove_all(path_, ec);
}

std::vector<std::string> certificate_block_list(const std::string& text) {
  static const std::string kBegin = "-----BEGIN CERTIFICATE-----";
  static const std::string kEnd = "-----END CERTIFICATE-----";
  std::vector<std::string> out;
  std::size_t pos = 0;
  while ((pos = text.find(kBegin, pos)) != std::string::npos) {
    const auto end = text.find(kEnd, pos);
    if (end == std::string::npos) break;
    out.push_back(text.substr(pos, end + kEnd.size() - pos) + "\n");
    pos = end + kEnd.size();
  }
  return out;
}

std::string certificate_blocks(const std::string& text) {
  std::string out;
  for (const auto& b : certificate_block_list(text)) out += b;
  return out;
}

std::string first_certificate_block(const std::string& text) {
  const auto blocks = certificate_block_list(text);
  return blocks.empty() ? std::string() : blocks.front();
}

std::vector<std::string> directory_listing(const std::filesystem::path& dir) {
  std::vector<std::string> names;
  for (const auto& e : std::filesystem::directory_iterator(dir)) {
    names.push_back(e.path().filename().string());
  }
  std::sort(names.begin(), names.end());
  return names;
}

}  // namespace getcert::test
