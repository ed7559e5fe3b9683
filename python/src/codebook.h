// A codebook crosses the binding as 18 bytes: type, used, then the 16 exponents
// (splitzip/codebook.py packs and unpacks them). Small, immutable and hashable in Python.
#pragma once

#include <nanobind/nanobind.h>
#include <splitzip.h>

#include <optional>

namespace szpy {

constexpr size_t kPackedCodebookBytes = 2 + SZ_CODEBOOK_SIZE;

nanobind::bytes packCodebook(const szCodebook_t& codebook);
// Throws szInvalidArgument for a wrong size; the library validates the contents.
szCodebook_t unpackCodebook(const nanobind::bytes& packed);
// nullptr for None: the library's default.
const szCodebook_t* unpackOptional(const std::optional<nanobind::bytes>& packed, szCodebook_t* storage);

}  // namespace szpy
