#include "baseline.hpp"

#include <sys/stat.h>

#include <algorithm>
#include <cerrno>
#include <cstdio>
#include <cstring>
#include <functional>
#include <memory>

#include <nlohmann/json.hpp>

#include "getcert/text.hpp"

namespace getcert::cli {

// What a baseline entry keeps: its leaf's identity and hashes of what the change classes
// compare, a few hundred bytes whatever the size of its JSON line (which holds whole chains).
struct Baseline::Entry {
  std::string input;
  std::uint64_t line = 0;
  bool has_certificate = false;  // false: the target failed in that run (an error object)
  std::string sha256;            // leaf DER fingerprint
  std::string spki_sha256;       // leaf key pin
  std::string tbs_sha256;        // leaf TBS hash; empty in a baseline older than that field
  std::size_t issuer = 0;        // hash of the leaf's issuer DN
  std::size_t names = 0;         // hash of the leaf's subject and SANs (see names_hash)
  std::size_t chain = 0;         // hash of the fingerprints the server sent after its leaf
  bool matched = false;          // a target of this run had this input
  bool in_run = false;           // this input is in this run's list (maybe not fetched yet)
  bool claimed = false;          // a renamed target took this entry (matched by certificate)
};

namespace {

using Json = nlohmann::json;

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
  entry.has_certificate = true;
  entry.sha256 = leaf.at("sha256").get<std::string>();
  entry.spki_sha256 = leaf.at("spki_sha256").get<std::string>();
  if (tbs != nullptr) entry.tbs_sha256 = tbs->get<std::string>();
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

// The keys of Baseline::by_certificate_. A renamed target is the same key and the same TBS
// (certspotter's identity of a certificate): re-signed, or with other SCTs, it is still that
// target. A baseline written before tbs_sha256 existed has only the fingerprint, which is
// stricter (the very same certificate); the prefixes keep the two kinds of key apart.
std::string tbs_key(const std::string& spki, const std::string& tbs_sha256) {
  return "tbs " + spki + ' ' + tbs_sha256;
}
std::string fingerprint_key(const std::string& spki, const std::string& sha256) {
  return "der " + spki + ' ' + sha256;
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

std::size_t Baseline::size() const noexcept { return entries_.size(); }

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
    const Json j = Json::parse(line, nullptr, false);
    if (j.is_discarded()) {
      baseline.problems_.push_back({number, "not JSON"});
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
    const auto [at, fresh] = baseline.by_input_.emplace(entry.input, baseline.entries_.size());
    if (!fresh) {
      baseline.problems_.push_back(
          {number, "input " + quote_name(entry.input) + " again (first on line " +
                       std::to_string(baseline.entries_[at->second].line) + ")"});
      continue;
    }
    if (baseline.entries_.size() == kMaxEntries) {
      return fail(Errc::limit_exceeded, name + " has more than " + std::to_string(kMaxEntries) +
                                            " entries (split the run with --shard)");
    }
    if (entry.has_certificate) {
      const std::string key = entry.tbs_sha256.empty()
                                  ? fingerprint_key(entry.spki_sha256, entry.sha256)
                                  : tbs_key(entry.spki_sha256, entry.tbs_sha256);
      baseline.by_certificate_[key].push_back(baseline.entries_.size());
    }
    baseline.entries_.push_back(std::move(entry));
  }
  if (baseline.entries_.empty()) {
    return fail(Errc::malformed_input,
                number == 0 ? name + " is empty (give the output of an earlier getcert -o json run)"
                            : name + " has no usable result line in " + std::to_string(number) +
                                  " lines" + first_problem(baseline.problems_) +
                                  "; give the output of an earlier getcert -o json run");
  }
  return baseline;
}

void Baseline::note_in_run(const std::string& input) {
  const std::lock_guard<std::mutex> lock(*mutex_);
  const auto it = by_input_.find(input);
  if (it != by_input_.end()) entries_[it->second].in_run = true;
}

Change Baseline::classify(const ManyResult& result) {
  const bool has_certificate = result.result && !result.result->presented_chain.empty();
  const std::lock_guard<std::mutex> lock(*mutex_);
  Entry* previous = nullptr;
  Change change;
  if (const auto it = by_input_.find(result.input); it != by_input_.end()) {
    previous = &entries_[it->second];
    previous->matched = true;
    previous->in_run = true;
  } else if (has_certificate) {
    // Renamed: the same leaf key and TBS (or, for an entry of an older baseline, the same
    // key and fingerprint) as an entry whose input is not in this run and that no other renamed
    // target took.
    const Certificate& leaf = result.result->presented_chain.front();
    for (const std::string& key : {tbs_key(leaf.spki_sha256, leaf.tbs_sha256),
                                   fingerprint_key(leaf.spki_sha256, leaf.sha256)}) {
      const auto found = by_certificate_.find(key);
      if (found == by_certificate_.end()) continue;
      for (const std::size_t i : found->second) {
        Entry& candidate = entries_[i];
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
  change.previous_sha256 = previous->sha256;
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
  if (leaf.spki_sha256 != previous->spki_sha256) {
    change.kind = ChangeKind::rekeyed;
  } else if (std::hash<std::string>{}(leaf.issuer) != previous->issuer) {
    change.kind = ChangeKind::issuer_changed;
  } else if (names_hash(leaf.subject, {leaf.sans.dns, leaf.sans.ip, leaf.sans.uri,
                                       leaf.sans.email}) != previous->names) {
    change.kind = ChangeKind::names_changed;
  } else if (chain_hash(rest) != previous->chain) {
    change.kind = ChangeKind::chain_changed;
  } else if (leaf.sha256 != previous->sha256) {
    // Also the same TBS with another signature or other SCTs: the key, names, issuer and
    // validity are the same, but not the certificate, and anything that pinned or stored its
    // fingerprint sees a new one, so it is no `unchanged` (previous_sha256 shows the old one).
    change.kind = ChangeKind::renewed;
  } else {
    change.kind = ChangeKind::unchanged;
  }
  return change;
}

std::vector<GoneEntry> Baseline::gone() const {
  const std::lock_guard<std::mutex> lock(*mutex_);
  std::vector<GoneEntry> out;
  for (const auto& entry : entries_) {
    if (entry.matched || entry.in_run || entry.claimed) continue;
    out.push_back({entry.input, entry.sha256});
  }
  return out;
}

}  // namespace getcert::cli
