#pragma once

// Loopback ports for tests.

#include <chrono>
#include <cstdint>
#include <string>

namespace getcert::test {

class Process;

// A port the kernel just handed out on 127.0.0.1 (and that was free on ::1 too, when IPv6
// loopback exists). Another process may still grab it: servers retry with a fresh port.
std::uint16_t free_port();

// A port nothing listens on: bound, then closed, so a connect is refused at once.
std::uint16_t closed_port();

// True when a socket can bind ::1 (IPv6 loopback configured).
bool ipv6_loopback_available();

// Connects until host:port accepts a TCP connection or `limit` passes; gives up early when
// `server` (if given) has exited.
bool wait_for_port(const std::string& host, std::uint16_t port, std::chrono::milliseconds limit,
                   Process* server = nullptr);

}  // namespace getcert::test
