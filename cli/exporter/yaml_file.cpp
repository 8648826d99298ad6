#include "exporter/yaml_file.hpp"

#include <map>

#include "internal/read_file.hpp"
#include "internal/try.hpp"

namespace getcert::cli::exporter {
namespace {

// A key given twice in one mapping: yaml-cpp keeps both and a lookup returns the first, so the
// second (often the one the operator meant: appended later) would be ignored without a word.
// Refused instead, naming both lines. No config of ours nests deeper than a few levels: the walk
// stops at kMaxDepth, so a hostile document cannot run it out of stack.
constexpr int kMaxDepth = 64;

Result<void> refuse_duplicate_keys(const std::string& path, const YAML::Node& node,
                                   const std::string& where, int depth = 0) {
  if (depth > kMaxDepth) {
    return fail(Errc::invalid_argument, path + ":" + std::to_string(node.Mark().line + 1) + ": " +
                                            where + ": nested deeper than " +
                                            std::to_string(kMaxDepth) + " levels");
  }
  if (node.IsSequence()) {
    std::size_t i = 0;
    for (const auto& item : node) {
      GETCERT_TRY(
          refuse_duplicate_keys(path, item, where + "[" + std::to_string(i++) + "]", depth + 1));
    }
  }
  if (!node.IsMap()) return {};
  std::map<std::string, int> seen;  // key -> its first line
  for (const auto& entry : node) {
    if (!entry.first.IsScalar()) continue;
    const std::string key = (where.empty() ? "" : where + ".") + entry.first.Scalar();
    const int line = entry.first.Mark().line + 1;
    const auto [first, added] = seen.emplace(entry.first.Scalar(), line);
    if (!added) {
      return fail(Errc::invalid_argument, path + ":" + std::to_string(line) + ": " + key +
                                              ": given twice (first on line " +
                                              std::to_string(first->second) + ")");
    }
    GETCERT_TRY(refuse_duplicate_keys(path, entry.second, key, depth + 1));
  }
  return {};
}

}  // namespace

Result<YAML::Node> load_yaml_file(const std::string& path, std::string_view what) {
  // Regular files only (read again on every reload: a FIFO would hang the service), bounded.
  auto read = internal::read_bounded_file(path, kMaxYamlFileBytes, "the " + std::string(what),
                                          internal::FileKinds::regular);
  if (!read) {
    const Errc code =
        read.error().code == Errc::limit_exceeded ? Errc::invalid_argument : read.error().code;
    return fail(code, path + ": " + read.error().message);
  }
  const std::string& text = *read;
  try {
    YAML::Node root = YAML::Load(text);
    GETCERT_TRY(refuse_duplicate_keys(path, root, ""));
    return root;
  } catch (const YAML::Exception& e) {
    return fail(Errc::invalid_argument,
                path + ":" + std::to_string(e.mark.line + 1) + ": not valid YAML: " + e.msg);
  }
}

}  // namespace getcert::cli::exporter
