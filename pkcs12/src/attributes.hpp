#pragma once

// SafeBag attributes: friendlyName, localKeyId and whatever Windows, Java or others added. All
// are kept (printable) for the info report; unknown ones never fail a decode.

#include "ber.hpp"
#include "getcert/pkcs12.hpp"

namespace getcert::pkcs12::detail {

// Parses bagAttributes (SET OF PKCS12Attribute). Errors: malformed_input.
Result<BagAttributes> parse_bag_attributes(const Element& set);

// Printable form of one attribute value (see Attribute::value).
std::string format_attribute_value(const Element& value);

}  // namespace getcert::pkcs12::detail
