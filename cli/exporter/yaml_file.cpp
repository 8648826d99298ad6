#include "exporter/yaml_file.hpp"

#include "internal/read_file.hpp"

namespace getcert::cli::exporter {

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
    return YAML::Load(text);
  } catch (const YAML::Exception& e) {
    return fail(Errc::invalid_argument,
                path + ":" + std::to_string(e.mark.line + 1) + ": not valid YAML: " + e.msg);
  }
}

}  // namespace getcert::cli::exporter
