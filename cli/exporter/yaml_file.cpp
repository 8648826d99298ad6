#include "exporter/yaml_file.hpp"

#include <fstream>

namespace getcert::cli::exporter {

Result<YAML::Node> load_yaml_file(const std::string& path, std::string_view what) {
  std::ifstream in(path, std::ios::binary);
  if (!in) return fail(Errc::io_error, path + ": cannot open the " + std::string(what));
  std::string text;
  text.resize(kMaxYamlFileBytes + 1);
  in.read(text.data(), static_cast<std::streamsize>(text.size()));
  if (in.bad()) return fail(Errc::io_error, path + ": cannot read the " + std::string(what));
  text.resize(static_cast<std::size_t>(in.gcount()));
  if (text.size() > kMaxYamlFileBytes) {
    return fail(Errc::invalid_argument,
                path + ": the " + std::string(what) + " is larger than 1 MiB");
  }
  try {
    return YAML::Load(text);
  } catch (const YAML::Exception& e) {
    return fail(Errc::invalid_argument,
                path + ":" + std::to_string(e.mark.line + 1) + ": not valid YAML: " + e.msg);
  }
}

}  // namespace getcert::cli::exporter
