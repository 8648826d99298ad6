#include "internal/host_port.hpp"

namespace getcert::internal {

std::string bracketed_host(std::string_view host) {
  std::string out(host);
  if (host.find(':') != std::string_view::npos) out = "[" + out + "]";
  return out;
}

std::string host_port(std::string_view host, std::uint16_t port) {
  return bracketed_host(host) + ":" + std::to_string(port);
}

}  // namespace getcert::internal
