#include <algorithm>
#include <array>
#include <cstring>
#include <string_view>
#include <unordered_map>
#include <vector>

#include "verify/bundle_lookup.hpp"

#include "internal/read_file.hpp"
#include "internal/try.hpp"

namespace getcert::detail {
namespace {

// One certificate block of the bundle: its base64 text, and the start of its DER, decoded only
// as far as the subject name (the whole block is decoded when a chain asks for that subject).
struct BundleEntry {
  std::string_view body;  // the block's base64 and line breaks, a view into BundleIndex::pem
  std::string head;       // DER from the first byte through the end of the subject
  std::size_t subject_offset = 0;
  std::size_t subject_size = 0;
  bool trusted_form = false;  // "TRUSTED CERTIFICATE": DER followed by OpenSSL's trust settings
};

// Immutable once built, so lookups from several verifying threads need no lock; the store
// serialises the additions (X509_STORE_add_cert locks it).
struct BundleIndex {
  std::string pem;  // the whole file, which the entries' bodies view
  std::vector<BundleEntry> entries;
  // Keyed by the subject's DER bytes (views into the entries' heads). A chain names its issuer
  // by those same bytes: Go's crypto/x509 matches names byte for byte too.
  std::unordered_multimap<std::string_view, std::size_t> by_subject;
};

// A DER TLV header at `pos`: its tag, and where its content starts and ends. Definite lengths
// of up to four octets only: a certificate never needs more, and BER is not DER.
struct Tlv {
  unsigned char tag = 0;
  std::size_t content = 0;
  std::size_t end = 0;
};

// Reads the header at `pos`; the content must end within `limit`, unless `open_ended` (an outer
// SEQUENCE of which only a prefix was decoded: then `end` may lie past `limit`).
bool read_tlv(std::string_view der, std::size_t pos, std::size_t limit, Tlv& out,
              bool open_ended = false) {
  if (pos + 2 > limit) return false;
  out.tag = static_cast<unsigned char>(der[pos]);
  std::size_t len = static_cast<unsigned char>(der[pos + 1]);
  std::size_t at = pos + 2;
  if (len & 0x80U) {
    const std::size_t octets = len & 0x7FU;
    if (octets == 0 || octets > 4 || at + octets > limit) return false;
    len = 0;
    for (std::size_t i = 0; i < octets; ++i) {
      len = (len << 8U) | static_cast<unsigned char>(der[at + i]);
    }
    at += octets;
  }
  if (at > limit || (!open_ended && len > limit - at)) return false;
  out.content = at;
  out.end = at + len;
  return true;
}

// Certificate ::= SEQUENCE { tbsCertificate SEQUENCE { [0] version OPTIONAL, serialNumber,
// signature, issuer, validity, subject, ... }, ... }: skips to the subject without decoding.
// `der` may be a prefix of the certificate: the two outer SEQUENCEs may run past its end, the
// fields up to the subject may not.
bool locate_subject(std::string_view der, std::size_t& subject_offset, std::size_t& subject_size) {
  Tlv cert;
  Tlv field;
  if (!read_tlv(der, 0, der.size(), cert, true) || cert.tag != 0x30) return false;
  if (!read_tlv(der, cert.content, der.size(), field, true) || field.tag != 0x30) return false;
  const std::size_t tbs_end = std::min(field.end, der.size());
  std::size_t pos = field.content;
  if (!read_tlv(der, pos, tbs_end, field)) return false;
  if (field.tag == 0xA0) {  // version
    pos = field.end;
    if (!read_tlv(der, pos, tbs_end, field)) return false;
  }
  // serialNumber, signature, issuer, validity, then subject.
  constexpr std::array<unsigned char, 5> kTags{0x02, 0x30, 0x30, 0x30, 0x30};
  for (std::size_t i = 0; i < kTags.size(); ++i) {
    if (i > 0 && !read_tlv(der, pos, tbs_end, field)) return false;
    if (field.tag != kTags.at(i)) return false;
    if (i + 1 < kTags.size()) pos = field.end;
  }
  subject_offset = pos;
  subject_size = field.end - pos;
  return true;
}

// The significant characters of a PEM body, at most `limit` of them. Quick: lines are copied
// whole (a trailing CR dropped), as 64-character lines are what bundles hold; a character loop
// over a whole system bundle was a measurable part of a run. Careful: every blank is dropped,
// for bodies the quick form did not decode.
std::string compact_base64(std::string_view body, std::size_t limit, bool careful) {
  std::string out;
  out.reserve(std::min(body.size(), limit));
  std::size_t pos = 0;
  while (pos < body.size() && out.size() < limit) {
    std::size_t eol = body.find('\n', pos);
    if (eol == std::string_view::npos) eol = body.size();
    std::string_view line = body.substr(pos, eol - pos);
    pos = eol + 1;
    if (!careful) {
      if (!line.empty() && line.back() == '\r') line.remove_suffix(1);
      out.append(line);
      continue;
    }
    for (const char c : line) {
      if (c != ' ' && c != '\t' && c != '\r') out.push_back(c);
    }
  }
  if (out.size() > limit) out.resize(limit);
  return out;
}

bool decode_compact(const std::string& compact, std::string& out) {
  if (compact.empty() || compact.size() % 4 != 0) return false;
  out.resize(compact.size() / 4 * 3);
  const int n = EVP_DecodeBlock(reinterpret_cast<unsigned char*>(out.data()),
                                reinterpret_cast<const unsigned char*>(compact.data()),
                                static_cast<int>(compact.size()));
  if (n < 0) return false;
  auto size = static_cast<std::size_t>(n);
  // EVP_DecodeBlock counts padding as zero bytes.
  for (auto it = compact.rbegin(); it != compact.rend() && *it == '='; ++it) --size;
  out.resize(size);
  return true;
}

// Decodes the base64 `body` of a PEM block (line breaks and blanks ignored): the whole of it,
// or, with `want`, only the leading characters that give at least `want` bytes. False on any
// other character, or a body that does not end on a whole quantum.
bool decode_base64(std::string_view body, std::string& out, std::size_t want = std::string::npos) {
  const std::size_t limit =
      want == std::string::npos ? std::string::npos : (want + 2) / 3 * 4;  // whole quanta
  return decode_compact(compact_base64(body, limit, false), out) ||
         decode_compact(compact_base64(body, limit, true), out);
}

// The start of a block's DER, through its subject: first the first kHeadGuess bytes, else the
// whole block. In Debian's bundle the subject ends at byte 257 in the median certificate and by
// byte 489 in all of them.
constexpr std::size_t kHeadGuess = 512;

bool index_entry(BundleEntry& entry) {
  if (decode_base64(entry.body, entry.head, kHeadGuess) &&
      locate_subject(entry.head, entry.subject_offset, entry.subject_size)) {
    entry.head.resize(entry.subject_offset + entry.subject_size);
    return true;
  }
  if (!decode_base64(entry.body, entry.head) ||
      !locate_subject(entry.head, entry.subject_offset, entry.subject_size)) {
    return false;
  }
  entry.head.resize(entry.subject_offset + entry.subject_size);
  return true;
}

BundleIndexCount index_bundle(std::string_view pem, BundleIndex& index) {
  BundleIndexCount count;
  constexpr std::string_view kBegin = "-----BEGIN ";
  constexpr std::string_view kDashes = "-----";
  std::size_t pos = 0;
  while ((pos = pem.find(kBegin, pos)) != std::string_view::npos) {
    const std::size_t label_at = pos + kBegin.size();
    const std::size_t label_end = pem.find(kDashes, label_at);
    if (label_end == std::string_view::npos) break;
    const std::string_view label = pem.substr(label_at, label_end - label_at);
    const std::string end_line = "-----END " + std::string(label) + "-----";
    const std::size_t body_at = label_end + kDashes.size();
    const std::size_t body_end = pem.find(end_line, body_at);
    if (body_end == std::string_view::npos) {
      ++count.skipped;  // truncated: nothing after it can be a whole block either
      break;
    }
    pos = body_end + end_line.size();
    const bool trusted = label == "TRUSTED CERTIFICATE";
    if (label != "CERTIFICATE" && label != "X509 CERTIFICATE" && !trusted) continue;
    BundleEntry entry;
    entry.trusted_form = trusted;
    entry.body = pem.substr(body_at, body_end - body_at);
    if (entry.body.find(':') != std::string_view::npos || !index_entry(entry)) {
      ++count.skipped;
      continue;
    }
    index.entries.push_back(std::move(entry));
    ++count.indexed;
  }
  for (std::size_t i = 0; i < index.entries.size(); ++i) {
    const BundleEntry& e = index.entries[i];
    index.by_subject.emplace(std::string_view(e.head).substr(e.subject_offset, e.subject_size), i);
  }
  return count;
}

// The whole certificate, decoded now; null when its base64 or DER is broken past the subject.
internal::X509Ptr decode_entry(const BundleEntry& entry) {
  std::string der;
  if (!decode_base64(entry.body, der)) return nullptr;
  const auto* p = reinterpret_cast<const unsigned char*>(der.data());
  const long len = static_cast<long>(der.size());
  return internal::X509Ptr(entry.trusted_form ? d2i_X509_AUX(nullptr, &p, len)
                                              : d2i_X509(nullptr, &p, len));
}

// X509_LOOKUP get_by_subject: decodes every bundle certificate with this subject into the
// store (so that OpenSSL's issuer search sees all of them, as with a hashed directory) and
// returns one. The returned object borrows the store's reference, as OpenSSL's own lookups do.
int bundle_get_by_subject(X509_LOOKUP* lookup, X509_LOOKUP_TYPE type, const X509_NAME* name,
                          X509_OBJECT* ret) {
  const auto* index = static_cast<const BundleIndex*>(X509_LOOKUP_get_method_data(lookup));
  X509_STORE* store = X509_LOOKUP_get_store(lookup);
  if (type != X509_LU_X509 || index == nullptr || store == nullptr || name == nullptr) return 0;
  const unsigned char* name_der = nullptr;
  std::size_t name_len = 0;
  if (X509_NAME_get0_der(name, &name_der, &name_len) != 1) return 0;
  const std::string_view key(reinterpret_cast<const char*>(name_der), name_len);
  bool added = false;
  const auto [first, last] = index->by_subject.equal_range(key);
  for (auto it = first; it != last; ++it) {
    const internal::X509Ptr cert = decode_entry(index->entries[it->second]);
    if (cert && X509_STORE_add_cert(store, cert.get()) == 1) added = true;
  }
  internal::clear_errors();  // a certificate that did not decode is passed over, not an error
  if (!added) return 0;
  // Answer with the store's copy: another thread may have added the same certificate first,
  // and then ours was not kept. Stores never drop objects, so the pointer stays valid.
  X509* kept = nullptr;
  if (X509_STORE_lock(store) != 1) return 0;
  if (const X509_OBJECT* obj =
          X509_OBJECT_retrieve_by_subject(X509_STORE_get0_objects(store), X509_LU_X509, name)) {
    kept = X509_OBJECT_get0_X509(obj);
  }
  X509_STORE_unlock(store);
  if (kept == nullptr || X509_OBJECT_set1_X509(ret, kept) != 1) return 0;
  // set1 took a reference for `ret`, but the caller treats `ret` as borrowed and never frees
  // it (as with OpenSSL's own lookups): hand that reference back.
  const internal::X509Ptr borrowed_by_ret(kept);
  return 1;
}

// The lookup's release hook: the index it was given in add_bundle_lookup goes with it.
void release_bundle_index(X509_LOOKUP* lookup) {
  const std::unique_ptr<BundleIndex> owned(
      static_cast<BundleIndex*>(X509_LOOKUP_get_method_data(lookup)));
}

X509_LOOKUP_METHOD* bundle_method() {
  // Created once and kept for the process: stores anywhere may still point at it.
  static X509_LOOKUP_METHOD* const method = [] {
    X509_LOOKUP_METHOD* m = X509_LOOKUP_meth_new("getcert lazily indexed PEM bundle");
    if (m != nullptr) {
      X509_LOOKUP_meth_set_get_by_subject(m, bundle_get_by_subject);
      X509_LOOKUP_meth_set_free(m, release_bundle_index);
    }
    return m;
  }();
  return method;
}

}  // namespace

Result<BundleIndexCount> add_bundle_lookup(X509_STORE* store, const std::string& path) {
  auto index = std::make_unique<BundleIndex>();
  // One read into the string the index keeps (the entries view it). Bounded, and the system
  // bundle is a regular file: SSL_CERT_FILE naming a FIFO or a device is not waited on.
  GETCERT_TRY_ASSIGN(index->pem, internal::read_bounded_file(path, std::size_t{64} * 1024 * 1024,
                                                             "CA file '" + path + "'",
                                                             internal::FileKinds::regular));
  const BundleIndexCount count = index_bundle(index->pem, *index);
  X509_LOOKUP_METHOD* method = bundle_method();
  X509_LOOKUP* lookup = method != nullptr ? X509_STORE_add_lookup(store, method) : nullptr;
  if (lookup == nullptr || X509_LOOKUP_get_method_data(lookup) != nullptr ||
      X509_LOOKUP_set_method_data(lookup, index.get()) != 1) {
    return fail(Errc::internal, "cannot add a bundle lookup to the trust store",
                internal::drain_errors());
  }
  static_cast<void>(index.release());  // the lookup owns it now; release_bundle_index deletes it
  return count;
}

}  // namespace getcert::detail
