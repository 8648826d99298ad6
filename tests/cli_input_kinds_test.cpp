// Inputs that are not regular files: a device that never ends (/dev/zero), a FIFO without a
// writer, a password with a NUL byte. One-shot commands read streams up to their bound; what a
// long-running loop reads again and again (p12 topem --watch; getcert serve, in exporter_test)
// must be a regular file. Each case runs the real binary and asserts the exit code, the message,
// and that it ends long before the run's limit (before the bounded reads, each of these hung or
// read without end).

#include <sys/stat.h>
#include <sys/types.h>

#include <catch2/catch.hpp>

#include <chrono>
#include <filesystem>
#include <string>
#include <vector>

#include "support/cli_checks.hpp"
#include "support/commands.hpp"
#include "support/files.hpp"
#include "support/process.hpp"

using Catch::Matchers::Contains;
using namespace getcert::test;  // exit codes, run_getcert(), pki(), TempDir
using namespace std::chrono_literals;

namespace {

// A FIFO no process writes to: opening it for reading blocks until a writer comes.
std::string make_fifo(const TempDir& dir, const std::string& name) {
  const std::string path = dir / name;
  REQUIRE(::mkfifo(path.c_str(), 0600) == 0);
  return path;
}

// The test PKI's rsa leaf and key as a PKCS#12 file in `dir`, under `password`.
std::string rsa_p12(const TempDir& dir, const std::string& password) {
  const std::string path = dir / "a.p12";
  openssl({"pkcs12", "-export", "-inkey", pki("rsa.key"), "-in", pki("rsa.pem"), "-passout",
           "pass:" + password, "-out", path});
  return path;
}

// `getcert ARGS...` ends within `limit` with exit `code` and a message holding `message`.
void check_refused(const std::vector<std::string>& args, int code, const std::string& message,
                   std::chrono::seconds limit = std::chrono::seconds(60)) {
  const auto r = run_getcert(args, limit);
  INFO(r.err);
  CHECK_FALSE(r.timed_out);
  CHECK(r.exit_code == code);
  CHECK_THAT(r.err, Contains(message));
  CHECK(r.out.empty());
}

}  // namespace

TEST_CASE("a device that never ends is read up to its bound, then refused", "[cli]") {
  SECTION("--ca-file /dev/zero") {
    check_refused(
        {"show", pki("rsa-chain.pem"), "--verify", "--host", "localhost", "--ca-file", "/dev/zero"},
        kExitMalformed, "CA file '/dev/zero'");
  }
  SECTION("--crl-file /dev/zero") {
    check_refused({"show", pki("rsa-chain.pem"), "--verify", "--host", "localhost", "--ca-file",
                   pki("root.pem"), "--crl-file", "/dev/zero"},
                  kExitMalformed, "CRL file '/dev/zero' is larger than 256 MiB");
  }
  SECTION("a certificate file of /dev/zero") {
    check_refused({"show", "/dev/zero"}, kExitMalformed, "larger than 64 MiB");
  }
  SECTION("--baseline /dev/zero: no line ever ends, the byte bound still holds") {
    const TempDir dir;
    write_file(dir / "list", std::string("localhost:1\n"));
    check_refused({"-f", dir / "list", "--baseline", "/dev/zero", "-o", "json"}, kExitMalformed,
                  "baseline '/dev/zero' is over the limit of", 180s);
  }
  SECTION("--password-file /dev/zero") {
    const TempDir dir;
    const std::string p12 = rsa_p12(dir, "secret");
    check_refused({"p12", "topem", p12, "--stdout", "--password-file", "/dev/zero"}, kExitUsage,
                  "is not a password (over 64 KiB)");
  }
}

TEST_CASE("a password file whose first line holds a NUL byte is refused, not cut short",
          "[cli][pkcs12]") {
  const TempDir dir;
  const std::string pw = dir / "pw.txt";
  write_file(pw, std::string("sec\0ret\n", 8));
  const std::string p12 = rsa_p12(dir, "sec");
  // "sec" is the password of the store: a reader that stopped at the NUL would open it.
  check_refused({"p12", "topem", p12, "--stdout", "--password-file", pw}, kExitUsage,
                "holds a NUL byte");

  // A NUL after the first line is no part of the password.
  write_file(pw, std::string("sec\n\0", 5));
  const auto ok = run_getcert({"p12", "topem", p12, "--stdout", "--password-file", pw});
  INFO(ok.err);
  CHECK(ok.exit_code == kExitOk);
}

TEST_CASE("a one-shot command reads a FIFO once its writer comes", "[cli]") {
  const TempDir dir;
  const std::string fifo = make_fifo(dir, "chain.pem");
  const auto r = run_shell("cat " + pki("rsa.pem") + " > " + fifo + " & " +
                           std::string(GETCERT_BINARY) + " -q show " + fifo + " -o pem; wait");
  INFO(r.err);
  CHECK(r.exit_code == kExitOk);
  CHECK_THAT(r.out, Contains("BEGIN CERTIFICATE"));
}

TEST_CASE("p12 topem --watch takes regular files only: a FIFO is refused, not waited on",
          "[cli][pkcs12]") {
  const TempDir dir;
  SECTION("the key store") {
    const std::string fifo = make_fifo(dir, "tls.p12");
    check_refused({"p12", "topem", fifo, "--watch", "--out-dir", dir / "o", "--no-password"},
                  kExitIo, "is a FIFO, not a regular file", 20s);
  }
  SECTION("its password file") {
    const std::string p12 = rsa_p12(dir, "secret");
    const std::string fifo = make_fifo(dir, "pw");
    check_refused({"p12", "topem", p12, "--watch", "--out-dir", dir / "o", "--password-file", fifo},
                  kExitIo, "is a FIFO, not a regular file", 20s);
  }
  CHECK_FALSE(std::filesystem::exists(dir / "o/key.pem"));
}
