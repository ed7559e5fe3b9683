// The streaming safetensors header reader (see safetensors_header.h). The header is
//   { "<name>": {"dtype": "BF16", "shape": [2, 3], "data_offsets": [0, 12]}, ...,
//     "__metadata__": {"<key>": "<value>", ...} }
// and the handler below follows that shape with a depth counter instead of building a DOM.
#include "safetensors_header.h"

#include <fmt/format.h>

#include <nlohmann/json.hpp>

namespace sztool {
namespace {

// An object of tensor objects holding arrays of numbers: depth 3 at most.
constexpr int kMaxDepth = 3;
// A shape has a handful of dimensions, data_offsets two numbers.
constexpr size_t kMaxArrayItems = 64;

class HeaderHandler : public nlohmann::json_sax<nlohmann::json> {
 public:
  HeaderHandler(const std::string& want, uint64_t elemBytes, uint64_t dataBytes)
      : want_(want), elemBytes_(elemBytes), dataBytes_(dataBytes) {}

  std::vector<SafetensorsPiece> pieces;
  std::string error;  // why parsing stopped early ("" for a JSON syntax error)

  bool null() override { return scalar(); }
  bool boolean(bool) override { return scalar(); }
  bool number_integer(number_integer_t v) override {
    if (v >= 0) return number_unsigned(uint64_t(v));
    return inNumbers() ? fail(field("holds a non-integer or negative value")) : scalar();
  }
  bool number_unsigned(number_unsigned_t v) override {
    if (!inNumbers()) return scalar();
    if (++items_ > kMaxArrayItems) return fail(field(fmt::format("has more than {} entries", kMaxArrayItems)));
    if (key_ == "shape") {
      shapeOverflow_ = shapeOverflow_ || __builtin_mul_overflow(elements_, v, &elements_);
    } else if (offsets_ < 2) {
      offset_[offsets_++] = v;
    } else {
      offsets_++;
    }
    return true;
  }
  bool number_float(number_float_t, const string_t&) override {
    return inNumbers() ? fail(field("holds a non-integer or negative value")) : scalar();
  }
  bool string(string_t& s) override {
    if (depth_ == 2 && inTensor_ && key_ == "dtype") {
      dtype_ = s;
      haveDtype_ = true;
      return true;
    }
    return scalar();
  }
  bool binary(binary_t&) override { return scalar(); }

  bool start_object(std::size_t) override {
    if (depth_ == 0) return enter();
    if (depth_ == 1 && name_ != "__metadata__") startTensor();
    else if (inNumbers()) return fail(field("holds a non-integer or negative value"));
    return enter();
  }
  bool key(string_t& k) override {
    if (depth_ == 1) name_ = k;
    else if (depth_ == 2) key_ = k;
    return true;
  }
  bool end_object() override {
    --depth_;
    if (depth_ == 1 && inTensor_) return endTensor();
    return true;
  }
  bool start_array(std::size_t) override {
    if (depth_ == 0) return fail("");  // a top-level array: not an object
    if (depth_ == 1 && name_ != "__metadata__") return fail(fmt::format("tensor '{}' is not a JSON object", name_));
    if (inNumbers()) return fail(field("holds a non-integer or negative value"));
    if (depth_ == 2 && inTensor_ && (key_ == "shape" || key_ == "data_offsets")) {
      items_ = 0;
      (key_ == "shape" ? haveShape_ : haveOffsets_) = true;
      numbers_ = true;
    }
    return enter();
  }
  bool end_array() override {
    --depth_;
    numbers_ = false;
    return true;
  }
  bool parse_error(std::size_t, const std::string&, const nlohmann::detail::exception&) override { return false; }

 private:
  bool enter() {
    if (++depth_ > kMaxDepth)
      return fail(fmt::format("safetensors header nests deeper than {} levels", kMaxDepth));
    return true;
  }
  bool fail(const std::string& why) {
    error = why;
    return false;
  }
  // A number, string or literal outside the fields read here.
  bool scalar() {
    if (depth_ == 0) return fail("");
    if (depth_ == 1 && name_ != "__metadata__") return fail(fmt::format("tensor '{}' is not a JSON object", name_));
    if (inNumbers()) return fail(field("holds a non-integer or negative value"));
    if (depth_ == 2 && inTensor_ && (key_ == "shape" || key_ == "data_offsets"))
      return fail(field("is missing or not an array"));
    return true;
  }
  bool inNumbers() const { return numbers_ && depth_ == 3; }
  std::string field(const std::string& what) const {
    return fmt::format("tensor '{}': '{}' {}", name_, key_, what);
  }
  void startTensor() {
    inTensor_ = true;
    haveDtype_ = haveShape_ = haveOffsets_ = shapeOverflow_ = false;
    dtype_.clear();
    key_.clear();
    elements_ = 1;
    offsets_ = 0;
  }
  bool endTensor() {
    inTensor_ = false;
    if (!haveDtype_) return fail(fmt::format("tensor '{}' has no dtype", name_));
    if (!haveOffsets_) return fail(fmt::format("tensor '{}': 'data_offsets' is missing or not an array", name_));
    if (offsets_ != 2 || offset_[0] > offset_[1] || offset_[1] > dataBytes_)
      return fail(fmt::format("tensor '{}': data_offsets outside the {} data bytes", name_, dataBytes_));
    if (dtype_ != want_) return true;
    if (!haveShape_) return fail(fmt::format("tensor '{}': 'shape' is missing or not an array", name_));
    uint64_t bytes = 0;
    if (shapeOverflow_ || __builtin_mul_overflow(elements_, elemBytes_, &bytes) || bytes != offset_[1] - offset_[0])
      return fail(fmt::format("tensor '{}': shape disagrees with its {} data bytes", name_, offset_[1] - offset_[0]));
    pieces.push_back({offset_[0], offset_[1]});
    return true;
  }

  const std::string want_;
  const uint64_t elemBytes_, dataBytes_;
  int depth_ = 0;
  std::string name_, key_;  // the current top-level key and tensor field
  bool inTensor_ = false, numbers_ = false;
  size_t items_ = 0;
  // The tensor being read.
  std::string dtype_;
  bool haveDtype_ = false, haveShape_ = false, haveOffsets_ = false, shapeOverflow_ = false;
  uint64_t elements_ = 1;
  uint64_t offset_[2] = {0, 0};
  size_t offsets_ = 0;
};

}  // namespace

std::vector<SafetensorsPiece> parseSafetensorsHeader(const InputFile& f, const std::string& text,
                                                     const std::string& want, uint64_t elemBytes,
                                                     uint64_t dataBytes) {
  HeaderHandler h(want, elemBytes, dataBytes);
  if (!nlohmann::json::sax_parse(text, &h)) {
    if (h.error.empty()) f.fail("safetensors header is not a JSON object");
    f.fail(h.error);
  }
  return std::move(h.pieces);
}

}  // namespace sztool
