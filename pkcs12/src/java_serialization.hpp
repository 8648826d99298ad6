#pragma once

// Just enough of Java's object serialization (the ObjectOutputStream grammar) to find where one
// serialized object ends. JCEKS stores a secret-key entry as a serialized SealedObject with no
// length prefix, so the entries after it can only be found by walking its grammar; getcert never
// interprets or exports its content.

#include <cstddef>

#include "ber.hpp"
#include "getcert/error.hpp"

namespace getcert::pkcs12::detail {

// The length of the stream at the start of `data`: the magic AC ED 00 05 and one object. Errors:
// malformed_input (truncated, grammar violated, nesting beyond kMaxJavaSerializationDepth),
// unsupported (proxy classes, enums and the other forms a SealedObject never contains).
Result<std::size_t> java_serialized_length(Bytes data);

}  // namespace getcert::pkcs12::detail
