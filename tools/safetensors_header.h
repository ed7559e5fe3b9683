// The JSON header of a .safetensors file, read with a streaming (SAX) parser that keeps only
// what the tool needs: the data ranges of the tensors of one dtype. Nesting deeper than the
// format's (an object of tensor objects holding short arrays) and arrays longer than a shape
// are refused as they are met, so a hostile header costs no more memory than its own text.
#pragma once

#include <cstdint>
#include <string>
#include <vector>

#include "cli_common.h"

namespace sztool {

struct SafetensorsPiece {
  uint64_t begin, end;  // relative to the data section
};

// The tensors of dtype `want` ("BF16", ...) in header order, each with a shape whose elements
// of `elemBytes` fill exactly its data_offsets, all offsets within `dataBytes`. Any other
// header is f.fail(): not a JSON object, a tensor without dtype, offsets outside the data, a
// shape that disagrees, nesting or arrays beyond the format's.
std::vector<SafetensorsPiece> parseSafetensorsHeader(const InputFile& f, const std::string& text,
                                                     const std::string& want, uint64_t elemBytes,
                                                     uint64_t dataBytes);

}  // namespace sztool
