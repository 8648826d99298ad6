#include "baseline.hpp"

#include <sys/stat.h>

#include <algorithm>
#include <array>
#include <cerrno>
#include <cstdio>
#include <cstring>
#include <functional>
#include <memory>
#include <optional>

#include <openssl/evp.h>

#include <nlohmann/json.hpp>

#include "getcert/text.hpp"

namespace getcert::cli {

using Digest = std::array<std::uint8_t, 32>;

// What a baseline entry keeps: its leaf's identity (as bytes, not text) and hashes of what the
// change classes compare, about 170 bytes and its input whatever the size of its JSON line
// (which holds whole chains); with the two indices, about 230 bytes a target.
struct Baseline::Entry {
  std::string input;
  std::uint64_t line = 0;
  Digest sha256{};               // leaf DER fingerprint
  Digest spki{};                 // leaf key pin
  Digest tbs{};                  // leaf TBS hash (when has_tbs)
  std::size_t issuer = 0;        // hash of the leaf's issuer DN
  std::size_t names = 0;         // hash of the leaf's subject and SANs (see names_hash)
  std::size_t chain = 0;         // hash of the fingerprints the server sent after its leaf
  bool has_certificate = false;  // false: the target failed in that run (an error object)
  bool has_tbs = false;          // false in a baseline older than tbs_sha256
  bool duplicate = false;        // its input was on an earlier line: not used
  bool matched = false;          // a target of this run had this input
  bool in_run = false;           // this input is in this run's list (maybe not fetched yet)
  bool claimed = false;          // a renamed target took this entry (matched by certificate)
};

namespace {

using Json = nlohmann::json;

// "F319..." (64 hex digits, as getcert writes a SHA-256) as bytes.
std::optional<Digest> hex_digest(const std::string& text) {
  if (text.size() != 64) return std::nullopt;
  Digest out{};
  for (std::size_t i = 0; i < 32; ++i) {
    const auto nibble = [](char c) -> int {
      if (c >= '0' && c <= '9') return c - '0';
      if (c >= 'A' && c <= 'F') return c - 'A' + 10;
      if (c >= 'a' && c <= 'f') return c - 'a' + 10;
      return -1;
    };
    const int hi = nibble(text[2 * i]);
    const int lo = nibble(text[2 * i + 1]);
    if (hi < 0 || lo < 0) return std::nullopt;
    out[i] = static_cast<std::uint8_t>(hi * 16 + lo);
  }
  return out;
}

std::string hex_text(const Digest& d) {
  static constexpr char kHex[] = "0123456789ABCDEF";
  std::string out;
  out.reserve(64);
  for (const std::uint8_t b : d) {
    out += kHex[b >> 4];
    out += kHex[b & 15];
  }
  return out;
}

// A base64 SHA-256 pin (44 characters, one '=') as bytes.
std::optional<Digest> base64_digest(const std::string& text) {
  if (text.size() != 44 || text.back() != '=') return std::nullopt;
  std::array<unsigned char, 33> out{};
  if (EVP_DecodeBlock(out.data(), reinterpret_cast<const unsigned char*>(text.data()), 44) != 33) {
    return std::nullopt;
  }
  Digest d{};
  std::copy_n(out.begin(), 32, d.begin());
  return d;
}

std::uint64_t first_word(const Digest& d) {
  std::uint64_t v = 0;
  for (std::size_t i = 0; i < 8; ++i) v = (v << 8) | d[i];
  return v;
}

// The key of Baseline::by_certificate_ for a leaf: its pin with its TBS hash, or (`by_tbs`
// false, for entries of a baseline older than tbs_sha256) with its fingerprint; the two kinds
// of key differ in their last bit, so they never meet.
std::uint64_t certificate_key(const Digest& spki, const Digest& other, bool by_tbs) {
  const std::uint64_t mixed = first_word(spki) ^ (first_word(other) * 0x9E3779B97F4A7C15ULL);
  return (mixed & ~std::uint64_t{1}) | (by_tbs ? 1U : 0U);
}

std::uint64_t input_key(const std::string& input) { return std::hash<std::string>{}(input); }

// Whether a line nests deeper than `limit` (outside strings): such a line is refused before it
// is parsed, since a parser keeps a frame per level (16 MiB of '[' cost 315 MiB).
bool nests_deeper(const std::string& line, std::size_t limit) {
  std::size_t depth = 0;
  bool in_string = false;
  bool escaped = false;
  for (const char c : line) {
    if (in_string) {
      if (escaped) {
        escaped = false;
      } else if (c == '\\') {
        escaped = true;
      } else if (c == '"') {
        in_string = false;
      }
      continue;
    }
    if (c == '"') {
      in_string = true;
    } else if (c == '[' || c == '{') {
      if (++depth > limit) return true;
    } else if ((c == ']' || c == '}') && depth > 0) {
      --depth;
    }
  }
  return false;
}

// Parses one line keeping only what read_entry() looks at: "input", "change", "error" (empty),
// and of "presented_chain" each certificate's "sha256", with the leaf's "spki_sha256",
// "issuer", "subject", "tbs_sha256" and "sans" lists. Everything else is dropped as it is
// parsed, and the lists kept are bounded, so a line costs little more than its own bytes.
// `too_much` names a bound that was passed (the line is then not used).
Json parse_kept(const std::string& line, std::string& too_much) {
  const std::size_t levels = Baseline::kMaxNesting + 2;
  std::vector<std::string> path(levels);  // path[d]: the key whose value is at depth d
  std::vector<bool> in_object(levels);    // in_object[d]: the container at depth d is an object
  std::size_t certificates = 0;
  std::size_t names = 0;
  const auto over = [&too_much](const std::string& what) {
    if (too_much.empty()) too_much = what;
    return false;
  };
  // Whether a value (or container) at depth d is one read_entry() reads.
  const auto wanted = [&](std::size_t d) {
    if (d == 0) return true;
    if (d == 1) return static_cast<bool>(in_object[1]);  // a key's value, keys filtered
    if (path[1] != "presented_chain") return false;      // inside "input", "change", "error"
    if (d == 2) {
      if (in_object[2]) return false;
      if (++certificates > Baseline::kMaxChainLength) {
        return over("more than " + std::to_string(Baseline::kMaxChainLength) +
                    " certificates in \"presented_chain\"");
      }
      return true;
    }
    if (d == 3) return static_cast<bool>(in_object[3]);
    if (path[3] != "sans") return false;
    if (d == 4) return static_cast<bool>(in_object[4]);
    // A name, or something else in its place (kept empty, so that read_entry() reports it).
    if (d == 5 && !in_object[5]) {
      if (++names > Baseline::kMaxNamesPerKind) {
        return over("more than " + std::to_string(Baseline::kMaxNamesPerKind) +
                    " names in one of the leaf's \"sans\" lists");
      }
      return true;
    }
    return false;
  };
  const Json::parser_callback_t keep = [&](int depth, Json::parse_event_t event, Json& parsed) {
    const auto d = static_cast<std::size_t>(depth);
    if (d + 1 >= levels) return false;
    switch (event) {
      case Json::parse_event_t::key: {
        const auto& key = parsed.get_ref<const std::string&>();
        path[d] = key;
        if (d == 1) {
          return key == "input" || key == "change" || key == "error" || key == "presented_chain";
        }
        if (d == 3 && path[1] == "presented_chain") {
          if (certificates > 1) return key == "sha256";
          return key == "sha256" || key == "spki_sha256" || key == "issuer" || key == "subject" ||
                 key == "tbs_sha256" || key == "sans";
        }
        if (d == 4 && path[1] == "presented_chain" && path[3] == "sans") {
          names = 0;
          return key == "dns" || key == "ip" || key == "uri" || key == "email";
        }
        return false;
      }
      case Json::parse_event_t::object_start:
      case Json::parse_event_t::array_start:
        if (!wanted(d)) return false;
        in_object[d + 1] = event == Json::parse_event_t::object_start;
        return true;
      case Json::parse_event_t::value:
        return wanted(d);
      default:
        return true;
    }
  };
  return Json::parse(line, keep, false);
}

// Order-insensitive within each SAN kind: a server that lists its names in another order
// serves the same names.
std::size_t names_hash(const std::string& subject, std::vector<std::vector<std::string>> sans) {
  std::string text = subject;
  for (auto& kind : sans) {
    std::sort(kind.begin(), kind.end());
    text += '\x1e';
    for (const auto& name : kind) text += name + '\x1f';
  }
  return std::hash<std::string>{}(text);
}

std::size_t chain_hash(const std::vector<std::string>& fingerprints) {
  std::string text;
  for (const auto& f : fingerprints) text += f + ',';
  return std::hash<std::string>{}(text);
}

const Json* string_field(const Json& object, const char* key) {
  const auto it = object.find(key);
  return it != object.end() && it->is_string() ? &*it : nullptr;
}

// Fills `entry` from one parsed line; returns why it cannot be used, or "" when it can.
// `skip` is set for lines that are not entries at all (a "gone" line of an earlier --baseline
// run: that target was not in that run).
std::string read_entry(const Json& j, Baseline::Entry& entry, bool& skip) {
  if (!j.is_object()) return "not a JSON object";
  const Json* input = string_field(j, "input");
  if (input == nullptr) return R"(no "input" string (was it written by getcert -o json?))";
  entry.input = input->get<std::string>();
  if (const Json* change = string_field(j, "change"); change != nullptr && *change == "gone") {
    skip = true;
    return {};
  }
  if (j.contains("error")) {
    if (!j.at("error").is_object()) return R"("error" is not an object)";
    return {};
  }
  const auto chain = j.find("presented_chain");
  if (chain == j.end() || !chain->is_array()) return R"(neither "presented_chain" nor "error")";
  if (chain->empty()) return R"("presented_chain" is empty)";
  std::vector<std::string> rest;
  for (std::size_t i = 0; i < chain->size(); ++i) {
    const Json& cert = chain->at(i);
    const Json* sha = cert.is_object() ? string_field(cert, "sha256") : nullptr;
    if (sha == nullptr) {
      return "presented_chain[" + std::to_string(i) + "] has no \"sha256\" string";
    }
    if (i > 0) rest.push_back(sha->get<std::string>());
  }
  const Json& leaf = chain->front();
  for (const char* key : {"spki_sha256", "issuer", "subject"}) {
    if (string_field(leaf, key) == nullptr) {
      return std::string("the leaf has no \"") + key + "\" string";
    }
  }
  // Optional: getcert wrote it only from the release that matches renamed targets by it.
  const Json* tbs = string_field(leaf, "tbs_sha256");
  if (tbs == nullptr && leaf.contains("tbs_sha256"))
    return R"(the leaf's "tbs_sha256" is not a string)";
  const auto sans = leaf.find("sans");
  if (sans == leaf.end() || !sans->is_object()) return R"(the leaf has no "sans" object)";
  std::vector<std::vector<std::string>> names;
  for (const char* kind : {"dns", "ip", "uri", "email"}) {
    const auto list = sans->find(kind);
    if (list == sans->end() || !list->is_array()) {
      return std::string(R"(the leaf's "sans" has no ")") + kind + "\" list";
    }
    names.emplace_back();
    for (const auto& name : *list) {
      if (!name.is_string()) return std::string("a \"sans.") + kind + "\" entry is not a string";
      names.back().push_back(name.get<std::string>());
    }
  }
  const auto sha256 = hex_digest(leaf.at("sha256").get<std::string>());
  if (!sha256) return R"(the leaf's "sha256" is not 64 hex digits)";
  const auto spki = base64_digest(leaf.at("spki_sha256").get<std::string>());
  if (!spki) return R"(the leaf's "spki_sha256" is not a base64 SHA-256)";
  if (tbs != nullptr) {
    const auto tbs_digest = hex_digest(tbs->get<std::string>());
    if (!tbs_digest) return R"(the leaf's "tbs_sha256" is not 64 hex digits)";
    entry.tbs = *tbs_digest;
    entry.has_tbs = true;
  }
  entry.has_certificate = true;
  entry.sha256 = *sha256;
  entry.spki = *spki;
  entry.issuer = std::hash<std::string>{}(leaf.at("issuer").get<std::string>());
  entry.names = names_hash(leaf.at("subject").get<std::string>(), std::move(names));
  entry.chain = chain_hash(rest);
  return {};
}

// One line at a time, at most kMaxLineBytes of it held (a longer line is skipped to its end).
class LineReader {
 public:
  explicit LineReader(std::FILE* file) : file_(file) {}

  // over: more than Baseline::kMaxBytes read in all (a device such as /dev/zero never ends a
  // line, so the count cannot wait for one).
  enum class Got { line, too_long, end, failed, over };

  Got next(std::string& line) {
    line.clear();
    bool too_long = false;
    for (;;) {
      const int c = getc_unlocked(file_);
      if (c == EOF) {
        if (std::ferror(file_) != 0) return Got::failed;
        if (line.empty() && !too_long && !partial_) return Got::end;
        partial_ = false;
        return too_long ? Got::too_long : Got::line;
      }
      partial_ = true;
      if (++total_ > Baseline::kMaxBytes) return Got::over;
      if (c == '\n') {
        partial_ = false;
        return too_long ? Got::too_long : Got::line;
      }
      if (line.size() < Baseline::kMaxLineBytes) {
        line += static_cast<char>(c);
      } else {
        too_long = true;
      }
    }
  }

 private:
  std::FILE* file_;
  bool partial_ = false;  // bytes of a line seen, its end not yet
  std::uint64_t total_ = 0;
};

std::string first_problem(const std::vector<BaselineProblem>& problems) {
  if (problems.empty()) return {};
  return " (line " + std::to_string(problems.front().line) + ": " + problems.front().reason + ")";
}

}  // namespace

std::string_view to_string(ChangeKind kind) noexcept {
  switch (kind) {
    case ChangeKind::new_target:
      return "new";
    case ChangeKind::gone:
      return "gone";
    case ChangeKind::failed:
      return "failed";
    case ChangeKind::rekeyed:
      return "rekeyed";
    case ChangeKind::issuer_changed:
      return "issuer_changed";
    case ChangeKind::names_changed:
      return "names_changed";
    case ChangeKind::chain_changed:
      return "chain_changed";
    case ChangeKind::renewed:
      return "renewed";
    case ChangeKind::unchanged:
      return "unchanged";
  }
  return "unchanged";
}

Baseline::Baseline() : mutex_(std::make_unique<std::mutex>()) {}
Baseline::Baseline(Baseline&&) noexcept = default;
Baseline& Baseline::operator=(Baseline&&) noexcept = default;
Baseline::~Baseline() = default;

std::size_t Baseline::size() const noexcept { return usable_; }

Result<Baseline> Baseline::load(const std::string& path) {
  const std::string name = "baseline " + quote_name(path);
  struct stat st {};
  if (::stat(path.c_str(), &st) != 0) {
    return fail(Errc::io_error, "cannot read " + name + ": " + std::strerror(errno));
  }
  if (S_ISDIR(st.st_mode)) return fail(Errc::io_error, name + " is a directory");
  if (S_ISREG(st.st_mode) && static_cast<std::uint64_t>(st.st_size) > kMaxBytes) {
    return fail(Errc::limit_exceeded, name + " is " + std::to_string(st.st_size) +
                                          " bytes, over the limit of " + std::to_string(kMaxBytes) +
                                          " (split the run with --shard)");
  }
  const std::unique_ptr<std::FILE, int (*)(std::FILE*)> file(std::fopen(path.c_str(), "rbe"),
                                                             &std::fclose);
  if (!file) return fail(Errc::io_error, "cannot read " + name + ": " + std::strerror(errno));

  Baseline baseline;
  LineReader reader(file.get());
  std::string line;
  std::uint64_t number = 0;
  std::uint64_t bytes = 0;
  for (;;) {
    const auto got = reader.next(line);
    if (got == LineReader::Got::end) break;
    if (got == LineReader::Got::failed) {
      return fail(Errc::io_error, "cannot read " + name + ": " + std::strerror(errno));
    }
    if (got == LineReader::Got::over) {
      return fail(Errc::limit_exceeded,
                  name + " is over the limit of " + std::to_string(kMaxBytes) + " bytes");
    }
    ++number;
    bytes += line.size() + 1;
    if (bytes > kMaxBytes) {  // a pipe or device: no size to stat
      return fail(Errc::limit_exceeded,
                  name + " is over the limit of " + std::to_string(kMaxBytes) + " bytes");
    }
    if (got == LineReader::Got::too_long) {
      baseline.problems_.push_back(
          {number, "longer than " + std::to_string(kMaxLineBytes) + " bytes"});
      continue;
    }
    if (line.find_first_not_of(" \t\r") == std::string::npos) continue;  // blank
    if (nests_deeper(line, kMaxNesting)) {
      baseline.problems_.push_back(
          {number, "nested deeper than " + std::to_string(kMaxNesting) + " levels"});
      continue;
    }
    std::string too_much;
    const Json j = parse_kept(line, too_much);
    if (j.is_discarded()) {
      baseline.problems_.push_back({number, "not JSON"});
      continue;
    }
    if (!too_much.empty()) {
      baseline.problems_.push_back({number, std::move(too_much)});
      continue;
    }
    Entry entry;
    entry.line = number;
    bool skip = false;
    std::string why = read_entry(j, entry, skip);
    if (!why.empty()) {
      baseline.problems_.push_back({number, std::move(why)});
      continue;
    }
    if (skip) continue;
    if (baseline.entries_.size() == kMaxEntries) {
      return fail(Errc::limit_exceeded, name + " has more than " + std::to_string(kMaxEntries) +
                                            " entries (split the run with --shard)");
    }
    baseline.entries_.push_back(std::move(entry));
  }
  baseline.build_indices();
  if (baseline.usable_ == 0) {
    return fail(Errc::malformed_input,
                number == 0 ? name + " is empty (give the output of an earlier getcert -o json run)"
                            : name + " has no usable result line in " + std::to_string(number) +
                                  " lines" + first_problem(baseline.problems_) +
                                  "; give the output of an earlier getcert -o json run");
  }
  return baseline;
}

// Sorts the input index and marks every entry whose input an earlier line had (a problem, as
// when it was found while reading), then indexes the rest by certificate.
void Baseline::build_indices() {
  by_input_.reserve(entries_.size());
  for (std::size_t i = 0; i < entries_.size(); ++i) {
    by_input_.push_back({input_key(entries_[i].input), static_cast<std::uint32_t>(i)});
  }
  std::sort(by_input_.begin(), by_input_.end());
  // Within one key, entries are in baseline order: each is compared with the earlier ones.
  for (std::size_t group = 0; group < by_input_.size();) {
    std::size_t end = group + 1;
    while (end < by_input_.size() && by_input_[end].key == by_input_[group].key) ++end;
    for (std::size_t i = group + 1; i < end; ++i) {
      Entry& later = entries_[by_input_[i].entry];
      for (std::size_t j = group; j < i; ++j) {
        const Entry& earlier = entries_[by_input_[j].entry];
        if (earlier.duplicate || earlier.input != later.input) continue;
        later.duplicate = true;
        problems_.push_back({later.line, "input " + quote_name(later.input) +
                                             " again (first on line " +
                                             std::to_string(earlier.line) + ")"});
        break;
      }
    }
    group = end;
  }
  std::erase_if(by_input_, [this](const Keyed& k) { return entries_[k.entry].duplicate; });
  std::sort(problems_.begin(), problems_.end(),
            [](const BaselineProblem& a, const BaselineProblem& b) { return a.line < b.line; });
  usable_ = by_input_.size();
  for (std::size_t i = 0; i < entries_.size(); ++i) {
    const Entry& e = entries_[i];
    if (e.duplicate || !e.has_certificate) continue;
    by_certificate_.push_back({certificate_key(e.spki, e.has_tbs ? e.tbs : e.sha256, e.has_tbs),
                               static_cast<std::uint32_t>(i)});
  }
  std::sort(by_certificate_.begin(), by_certificate_.end());
  by_input_.shrink_to_fit();
  by_certificate_.shrink_to_fit();
}

const Baseline::Entry* Baseline::find_input(const std::string& input) const {
  const std::uint64_t key = input_key(input);
  auto it = std::lower_bound(by_input_.begin(), by_input_.end(), Keyed{key, 0});
  for (; it != by_input_.end() && it->key == key; ++it) {
    if (entries_[it->entry].input == input) return &entries_[it->entry];
  }
  return nullptr;
}

void Baseline::note_in_run(const std::string& input) {
  const std::lock_guard<std::mutex> lock(*mutex_);
  if (const Entry* e = find_input(input)) const_cast<Entry*>(e)->in_run = true;
}

Change Baseline::classify(const ManyResult& result) {
  const bool has_certificate = result.result && !result.result->presented_chain.empty();
  const std::lock_guard<std::mutex> lock(*mutex_);
  Entry* previous = nullptr;
  Change change;
  // The leaf of this run as the entries keep it; nullopt when its text is not what getcert
  // writes (then it matches no entry by certificate, and differs from every one).
  std::optional<Digest> leaf_sha256;
  std::optional<Digest> leaf_spki;
  std::optional<Digest> leaf_tbs;
  if (has_certificate) {
    const Certificate& leaf = result.result->presented_chain.front();
    leaf_sha256 = hex_digest(leaf.sha256);
    leaf_spki = base64_digest(leaf.spki_sha256);
    leaf_tbs = hex_digest(leaf.tbs_sha256);
  }
  if (const Entry* found = find_input(result.input)) {
    previous = const_cast<Entry*>(found);
    previous->matched = true;
    previous->in_run = true;
  } else if (leaf_spki) {
    // Renamed: the same leaf key and TBS (or, for an entry of an older baseline, the same
    // key and fingerprint) as an entry whose input is not in this run and that no other renamed
    // target took.
    for (const bool by_tbs : {true, false}) {
      const std::optional<Digest>& other = by_tbs ? leaf_tbs : leaf_sha256;
      if (!other) continue;
      const std::uint64_t key = certificate_key(*leaf_spki, *other, by_tbs);
      for (auto it =
               std::lower_bound(by_certificate_.begin(), by_certificate_.end(), Keyed{key, 0});
           it != by_certificate_.end() && it->key == key; ++it) {
        Entry& candidate = entries_[it->entry];
        if (candidate.has_tbs != by_tbs || candidate.spki != *leaf_spki ||
            (by_tbs ? candidate.tbs : candidate.sha256) != *other) {
          continue;
        }
        if (candidate.in_run || candidate.matched || candidate.claimed) continue;
        candidate.claimed = true;
        previous = &candidate;
        change.previous_input = candidate.input;
        break;
      }
      if (previous != nullptr) break;
    }
  }
  if (previous == nullptr) {
    change.kind = ChangeKind::new_target;
    return change;
  }
  if (previous->has_certificate) change.previous_sha256 = hex_text(previous->sha256);
  if (!has_certificate) {
    change.kind = previous->has_certificate ? ChangeKind::failed : ChangeKind::unchanged;
    return change;
  }
  if (!previous->has_certificate) {  // it failed then: nothing to compare with
    change.kind = ChangeKind::new_target;
    return change;
  }
  const auto& chain = result.result->presented_chain;
  const Certificate& leaf = chain.front();
  std::vector<std::string> rest;
  for (std::size_t i = 1; i < chain.size(); ++i) rest.push_back(chain[i].sha256);
  // The precedence: the most material change is the one reported.
  if (!leaf_spki || *leaf_spki != previous->spki) {
    change.kind = ChangeKind::rekeyed;
  } else if (std::hash<std::string>{}(leaf.issuer) != previous->issuer) {
    change.kind = ChangeKind::issuer_changed;
  } else if (names_hash(leaf.subject, {leaf.sans.dns, leaf.sans.ip, leaf.sans.uri,
                                       leaf.sans.email}) != previous->names) {
    change.kind = ChangeKind::names_changed;
  } else if (chain_hash(rest) != previous->chain) {
    change.kind = ChangeKind::chain_changed;
  } else if (!leaf_sha256 || *leaf_sha256 != previous->sha256) {
    // Also the same TBS with another signature or other SCTs: the key, names, issuer and
    // validity are the same, but not the certificate, and anything that pinned or stored its
    // fingerprint sees a new one, so it is no `unchanged` (previous_sha256 shows the old one).
    change.kind = ChangeKind::renewed;
  } else {
    change.kind = ChangeKind::unchanged;
  }
  return change;
}

void Baseline::for_each_gone(const std::function<void(const GoneEntry&)>& visit) const {
  const std::lock_guard<std::mutex> lock(*mutex_);
  GoneEntry gone;  // one at a time: a million gone entries are not copied at once
  for (const auto& entry : entries_) {
    if (entry.duplicate || entry.matched || entry.in_run || entry.claimed) continue;
    gone.input = entry.input;
    gone.previous_sha256 = entry.has_certificate ? hex_text(entry.sha256) : std::string();
    visit(gone);
  }
}

}  // namespace getcert::cli
