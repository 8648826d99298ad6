// A walker over the Java Object Serialization Stream Protocol (grammar in the Java Object
// Serialization Specification, chapter 6), sized for the SealedObject of a JCEKS secret-key entry.

#include "java_serialization.hpp"

#include <optional>
#include <string>
#include <vector>

#include "getcert/keystore.hpp"
#include "internal/try.hpp"

namespace getcert::pkcs12::detail {
namespace {

enum : std::uint8_t {
  kTcNull = 0x70,
  kTcReference = 0x71,
  kTcClassDesc = 0x72,
  kTcObject = 0x73,
  kTcString = 0x74,
  kTcArray = 0x75,
  kTcBlockData = 0x77,
  kTcEndBlockData = 0x78,
  kTcBlockDataLong = 0x7A,
  kTcLongString = 0x7C,
};

enum : std::uint8_t {
  kScWriteMethod = 0x01,
  kScSerializable = 0x02,
  kScExternalizable = 0x04,
  kScBlockData = 0x08,
};

constexpr std::uint32_t kBaseHandle = 0x7E0000;

struct ClassDesc {
  std::string name;
  std::uint8_t flags = 0;
  std::string field_types;  // one type code per field, in stream order
  std::optional<std::size_t> super;
};

// Bytes a primitive type code occupies; 0 for object types ('L', '[').
std::size_t primitive_width(char code) {
  switch (code) {
    case 'B':
    case 'Z':
      return 1;
    case 'C':
    case 'S':
      return 2;
    case 'I':
    case 'F':
      return 4;
    case 'J':
    case 'D':
      return 8;
    default:
      return 0;
  }
}

class Walker {
 public:
  explicit Walker(Bytes data) : data_(data) {}

  Result<std::size_t> run() {
    GETCERT_TRY_ASSIGN(auto magic, take(4));
    if (magic[0] != 0xAC || magic[1] != 0xED || magic[2] != 0x00 || magic[3] != 0x05) {
      return malformed("not a Java serialization stream");
    }
    GETCERT_TRY(object(0));
    return pos_;
  }

 private:
  static tl::unexpected<Error> malformed(const std::string& why) {
    return fail(Errc::malformed_input, "malformed JCEKS secret-key entry: " + why);
  }

  Result<Bytes> take(std::size_t n) {
    if (n > data_.size() - pos_) return malformed("truncated");
    const Bytes out = data_.subspan(pos_, n);
    pos_ += n;
    return out;
  }

  Result<std::uint64_t> number(std::size_t width) {
    GETCERT_TRY_ASSIGN(auto b, take(width));
    std::uint64_t v = 0;
    for (const std::uint8_t byte : b) v = (v << 8U) | byte;
    return v;
  }

  Result<std::string> utf() {
    GETCERT_TRY_ASSIGN(auto len, number(2));
    GETCERT_TRY_ASSIGN(auto b, take(static_cast<std::size_t>(len)));
    return std::string(b.begin(), b.end());
  }

  Result<std::uint8_t> peek() const {
    if (pos_ >= data_.size()) return malformed("truncated");
    return data_[pos_];
  }

  std::size_t new_handle(std::optional<std::size_t> desc) {
    handles_.push_back(desc);
    return handles_.size() - 1;
  }

  // classDesc: a new class descriptor, a reference to one, or null.
  Result<std::optional<std::size_t>> class_desc(int depth) {
    if (depth > kMaxJavaSerializationDepth) return malformed("nested too deeply");
    GETCERT_TRY_ASSIGN(auto tag, number(1));
    if (tag == kTcNull) return std::optional<std::size_t>();
    if (tag == kTcReference) {
      GETCERT_TRY_ASSIGN(auto handle, number(4));
      if (handle < kBaseHandle || handle - kBaseHandle >= handles_.size() ||
          !handles_[static_cast<std::size_t>(handle - kBaseHandle)]) {
        return malformed("reference to an unknown class descriptor");
      }
      return handles_[static_cast<std::size_t>(handle - kBaseHandle)];
    }
    if (tag != kTcClassDesc) return fail(Errc::unsupported, "unsupported Java class descriptor");
    ClassDesc desc;
    GETCERT_TRY_ASSIGN(auto name, utf());
    desc.name = std::move(name);
    GETCERT_TRY(take(8));
    const std::size_t index = descs_.size();
    descs_.emplace_back();
    new_handle(index);
    GETCERT_TRY_ASSIGN(auto flags, number(1));
    desc.flags = static_cast<std::uint8_t>(flags);
    GETCERT_TRY_ASSIGN(auto count, number(2));
    for (std::uint64_t i = 0; i < count; ++i) {
      GETCERT_TRY_ASSIGN(auto code, number(1));
      const char type = static_cast<char>(code);
      GETCERT_TRY(utf());
      if (type == 'L' || type == '[') {
        GETCERT_TRY(object(depth + 1));
      } else if (primitive_width(type) == 0) {
        return malformed("unknown field type");
      }
      desc.field_types.push_back(type);
    }
    GETCERT_TRY(annotations(depth + 1));
    GETCERT_TRY_ASSIGN(auto super, class_desc(depth + 1));
    desc.super = super;
    descs_[index] = std::move(desc);
    return std::optional<std::size_t>(index);
  }

  // Contents up to and including TC_ENDBLOCKDATA.
  Result<void> annotations(int depth) {
    for (;;) {
      GETCERT_TRY_ASSIGN(auto tag, peek());
      if (tag == kTcEndBlockData) {
        ++pos_;
        return {};
      }
      GETCERT_TRY(object(depth));
    }
  }

  Result<void> class_data(std::size_t index, int depth) {
    // Superclasses' fields come first.
    std::vector<std::size_t> hierarchy;
    for (std::optional<std::size_t> d = index; d; d = descs_[*d].super) {
      if (hierarchy.size() > static_cast<std::size_t>(kMaxJavaSerializationDepth)) {
        return malformed("class hierarchy too deep");
      }
      hierarchy.insert(hierarchy.begin(), *d);
    }
    for (const std::size_t d : hierarchy) {
      // A copy: walking the fields may add descriptors and move descs_.
      const ClassDesc desc = descs_[d];
      if ((desc.flags & kScExternalizable) != 0) {
        if ((desc.flags & kScBlockData) == 0) {
          return fail(Errc::unsupported, "unsupported Java externalizable object");
        }
        GETCERT_TRY(annotations(depth));
        continue;
      }
      for (const char type : desc.field_types) {
        const std::size_t width = primitive_width(type);
        if (width > 0) {
          GETCERT_TRY(take(width));
        } else
          GETCERT_TRY(object(depth));
      }
      if ((desc.flags & kScWriteMethod) != 0) {
        GETCERT_TRY(annotations(depth));
      }
    }
    return {};
  }

  Result<void> object(int depth) {
    if (depth > kMaxJavaSerializationDepth) return malformed("nested too deeply");
    GETCERT_TRY_ASSIGN(auto tag, peek());
    switch (tag) {
      case kTcReference: {
        // Any earlier object (a field's type name is often a reference to an earlier string).
        ++pos_;
        GETCERT_TRY_ASSIGN(auto handle, number(4));
        if (handle < kBaseHandle || handle - kBaseHandle >= handles_.size()) {
          return malformed("reference to an unknown object");
        }
        return {};
      }
      case kTcNull:
      case kTcClassDesc: {
        GETCERT_TRY(class_desc(depth));
        return {};
      }
      case kTcObject: {
        ++pos_;
        auto d = class_desc(depth + 1);
        if (!d) return tl::unexpected(d.error());
        if (!*d) return malformed("object without a class");
        new_handle(std::nullopt);
        return class_data(**d, depth + 1);
      }
      case kTcString:
      case kTcLongString: {
        ++pos_;
        new_handle(std::nullopt);
        GETCERT_TRY_ASSIGN(auto len, number(tag == kTcString ? 2 : 8));
        if (len > data_.size() - pos_) return malformed("truncated");
        pos_ += static_cast<std::size_t>(len);
        return {};
      }
      case kTcArray: {
        ++pos_;
        auto d = class_desc(depth + 1);
        if (!d) return tl::unexpected(d.error());
        if (!*d || descs_[**d].name.size() < 2 || descs_[**d].name[0] != '[') {
          return malformed("array without an array class");
        }
        new_handle(std::nullopt);
        GETCERT_TRY_ASSIGN(auto size, number(4));
        const std::size_t width = primitive_width(descs_[**d].name[1]);
        // Checked against what is left before anything is walked: each element takes at least
        // one byte.
        if (size > data_.size() - pos_ || (width > 0 && size * width > data_.size() - pos_)) {
          return malformed("array longer than the data");
        }
        if (width > 0) {
          pos_ += static_cast<std::size_t>(size * width);
          return {};
        }
        for (std::uint64_t i = 0; i < size; ++i) {
          GETCERT_TRY(object(depth + 1));
        }
        return {};
      }
      case kTcBlockData:
      case kTcBlockDataLong: {
        ++pos_;
        GETCERT_TRY_ASSIGN(auto len, number(tag == kTcBlockData ? 1 : 4));
        if (len > data_.size() - pos_) return malformed("truncated");
        pos_ += static_cast<std::size_t>(len);
        return {};
      }
      default:
        return fail(Errc::unsupported, "unsupported Java serialization element");
    }
  }

  Bytes data_;
  std::size_t pos_ = 0;
  std::vector<ClassDesc> descs_;
  std::vector<std::optional<std::size_t>> handles_;  // handle -> class descriptor, if it is one
};

}  // namespace

Result<std::size_t> java_serialized_length(Bytes data) { return Walker(data).run(); }

}  // namespace getcert::pkcs12::detail
