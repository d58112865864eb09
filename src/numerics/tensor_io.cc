#include "xpusim/numerics/tensor_io.h"

#include <algorithm>
#include <bit>
#include <cerrno>
#include <cmath>
#include <cstring>
#include <fstream>
#include <iterator>
#include <nlohmann/json.hpp>
#include <sstream>

#include "xpusim/core/limits.h"
#include "xpusim/core/checked.h"
#include "xpusim/core/diagnostics.h"
#include "xpusim/core/file_read.h"
#include "xpusim/core/file_write.h"
#include "xpusim/core/format.h"
#include "xpusim/core/suggest.h"

namespace xpusim::numerics {

namespace {

[[noreturn]] void file_error(const std::string& path, const std::string& field,
                             const std::string& message, const std::string& value = {},
                             const std::string& expected = {}, const std::string& hint = {}) {
  throw core::InputError(core::Diagnostic{path, 0, field, message, value, expected, hint});
}

uint64_t read_le(const std::string& b, size_t off, int n) {
  uint64_t v = 0;
  for (int i = n - 1; i >= 0; --i) v = (v << 8) | static_cast<unsigned char>(b[off + i]);
  return v;
}

/// The value text after 'key': in a Python dict literal (up to the matching delimiter).
std::string dict_value(const std::string& header, const std::string& key, const std::string& path) {
  const std::string k1 = "'" + key + "'";
  size_t p = header.find(k1);
  if (p == std::string::npos) {
    file_error(path, "npy header", "missing key '" + key + "'", core::trim(header),
               "a dict with 'descr', 'fortran_order' and 'shape'");
  }
  p = header.find(':', p + k1.size());
  if (p == std::string::npos) file_error(path, "npy header." + key, "malformed entry");
  ++p;
  while (p < header.size() && header[p] == ' ') ++p;
  if (p >= header.size()) file_error(path, "npy header." + key, "malformed entry");
  size_t e;
  if (header[p] == '(') {
    e = header.find(')', p);
    if (e == std::string::npos) file_error(path, "npy header.shape", "unterminated tuple");
    return header.substr(p, e - p + 1);
  }
  if (header[p] == '\'' || header[p] == '"') {
    e = header.find(header[p], p + 1);
    if (e == std::string::npos) file_error(path, "npy header." + key, "unterminated string");
    return header.substr(p + 1, e - p - 1);
  }
  e = header.find_first_of(",}", p);
  return core::trim(header.substr(p, e == std::string::npos ? std::string::npos : e - p));
}

std::string shape_tuple(const std::vector<int64_t>& shape) {
  std::string s = "(";
  for (size_t i = 0; i < shape.size(); ++i) {
    s += std::to_string(shape[i]);
    if (shape.size() == 1 || i + 1 < shape.size()) s += shape.size() == 1 ? "," : ", ";
  }
  return s + ")";
}

std::string npy_bytes(const std::vector<int64_t>& shape, const char* descr, const void* data,
                      size_t nbytes) {
  std::string header = std::string("{'descr': '") + descr +
                       "', 'fortran_order': False, 'shape': " + shape_tuple(shape) + ", }";
  // magic(6) + version(2) + len(2) + header + '\n' padded to a multiple of 64.
  size_t total = 10 + header.size() + 1;
  header.append((64 - total % 64) % 64, ' ');
  header += '\n';
  std::string out = "\x93NUMPY";
  out += '\x01';
  out += '\x00';
  out += static_cast<char>(header.size() & 0xFF);
  out += static_cast<char>((header.size() >> 8) & 0xFF);
  out += header;
  out.append(static_cast<const char*>(data), nbytes);
  return out;
}

constexpr int kMaxHeaderNesting = 64;  ///< as config documents (docs/errors.md)

/// Rank and element count within config/limits.h; the element count is computed checked.
void check_shape(const std::vector<int64_t>& shape, const std::string& path, const std::string& field) {
  namespace L = core::limits;
  if (static_cast<long long>(shape.size()) > L::kTensorRank)
    core::fail_limit(path, field + ": tensor rank", static_cast<long long>(shape.size()), L::kTensorRank);
  int64_t n = 1;
  for (int64_t d : shape) {
    if (d > L::kTensorElements || __builtin_mul_overflow(n, d, &n) || n > L::kTensorElements)
      file_error(path, field, "tensor elements exceed the limit", shape_string(shape),
                 "at most " + std::to_string(L::kTensorElements) + " elements (docs/errors.md, \"Limits\")");
  }
}

}  // namespace

int64_t shape_numel(const std::vector<int64_t>& shape) {
  return core::checked_product(shape.data(), shape.size(), "tensor elements");
}

std::string shape_string(const std::vector<int64_t>& shape) {
  std::string s = "[";
  for (size_t i = 0; i < shape.size(); ++i) s += (i ? ", " : "") + std::to_string(shape[i]);
  return s + "]";
}

float bf16_to_float(uint16_t bits) { return std::bit_cast<float>(static_cast<uint32_t>(bits) << 16); }

float fp16_to_float(uint16_t h) {
  const uint32_t sign = (h >> 15) & 1u, exp = (h >> 10) & 0x1Fu, man = h & 0x3FFu;
  float v;
  if (exp == 0) v = std::ldexp(static_cast<float>(man), -24);
  else if (exp == 31) v = man ? NAN : INFINITY;
  else v = std::ldexp(static_cast<float>(man | 0x400u), static_cast<int>(exp) - 25);
  return sign ? -v : v;
}

std::string read_file(const std::string& path) {
  return core::read_regular_file(path, ".npy or .safetensors file", core::limits::kTensorFileBytes);
}

void write_file(const std::string& path, const std::string& bytes) {
  core::write_output_file("OUT", path, bytes);
}

bool is_npy(const std::string& bytes) { return bytes.size() >= 6 && bytes.compare(0, 6, "\x93NUMPY") == 0; }

Tensor parse_npy(const std::string& b, const std::string& path) {
  if (!is_npy(b)) {
    file_error(path, "npy magic", "not a NumPy .npy file", "", "the bytes \\x93NUMPY at the start");
  }
  if (b.size() < 10) file_error(path, "npy header", "file truncated in the header", "", ">= 10 bytes");
  const int major = static_cast<unsigned char>(b[6]);
  if (major < 1 || major > 3) {
    file_error(path, "npy version", "unsupported .npy version", std::to_string(major), "1, 2 or 3");
  }
  const size_t len_bytes = major == 1 ? 2 : 4;
  if (b.size() < 8 + len_bytes) file_error(path, "npy header", "file truncated in the header");
  const size_t hlen = read_le(b, 8, static_cast<int>(len_bytes));
  const size_t data_off = 8 + len_bytes + hlen;
  if (b.size() < data_off) {
    file_error(path, "npy header", "file truncated in the header",
               std::to_string(b.size()) + " bytes", std::to_string(data_off) + " bytes of header");
  }
  const std::string header = b.substr(8 + len_bytes, hlen);
  const std::string descr = dict_value(header, "descr", path);
  const std::string fortran = dict_value(header, "fortran_order", path);
  const std::string shape_s = dict_value(header, "shape", path);
  int itemsize = 0;
  Tensor t;
  if (descr == "<f4" || descr == "=f4") itemsize = 4, t.dtype = "float32";
  else if (descr == "<f8" || descr == "=f8") itemsize = 8, t.dtype = "float64";
  else {
    file_error(path, "npy header.descr", "unsupported dtype", descr,
               "float32 ('<f4') or float64 ('<f8'), little-endian");
  }
  if (fortran != "False") {
    file_error(path, "npy header.fortran_order", "only C-order arrays are supported", fortran, "False");
  }
  if (shape_s.size() < 2 || shape_s.front() != '(') {
    file_error(path, "npy header.shape", "malformed shape", shape_s, "a tuple such as (3, 4)");
  }
  std::stringstream ss(shape_s.substr(1, shape_s.size() - 2));
  std::string item;
  while (std::getline(ss, item, ',')) {
    item = core::trim(item);
    if (item.empty()) continue;
    char* end = nullptr;
    errno = 0;
    const long long d = std::strtoll(item.c_str(), &end, 10);
    // The whole item must be digits: a NUL inside it ends c_str() early ("0037\0 6").
    if (end == item.c_str() || end != item.c_str() + item.size() || d < 0 || errno == ERANGE) {
      file_error(path, "npy header.shape", "malformed shape", shape_s, "non-negative integers");
    }
    t.shape.push_back(d);
  }
  check_shape(t.shape, path, "npy header.shape");
  const int64_t n = shape_numel(t.shape);
  const size_t need = static_cast<size_t>(n) * itemsize;
  if (b.size() - data_off < need) {
    file_error(path, "npy data", "file truncated",
               std::to_string(b.size() - data_off) + " data bytes",
               std::to_string(need) + " bytes for shape " + shape_string(t.shape) + " of " + t.dtype);
  }
  t.data.resize(static_cast<size_t>(n));
  const char* p = b.data() + data_off;
  if (itemsize == 4) {
    if (need > 0) std::memcpy(t.data.data(), p, need);  // data() may be null for 0 elements
  } else {
    for (int64_t i = 0; i < n; ++i) {
      double v;
      std::memcpy(&v, p + 8 * i, 8);
      t.data[i] = static_cast<float>(v);
    }
  }
  return t;
}

Tensor read_npy(const std::string& path) { return parse_npy(read_file(path), path); }

std::string npy_bytes_f32(const std::vector<int64_t>& shape, const float* data) {
  return npy_bytes(shape, "<f4", data, static_cast<size_t>(shape_numel(shape)) * 4);
}

std::string npy_bytes_u8(const std::vector<int64_t>& shape, const uint8_t* data) {
  return npy_bytes(shape, "|u1", data, static_cast<size_t>(shape_numel(shape)));
}

namespace {

nlohmann::json parse_st_header(const std::string& b, uint64_t n, const std::string& path) {
  // Depth is checked before parsing: a header of nested arrays never reaches recursive code.
  const int depth = core::json_nesting_depth(std::string_view(b.data() + 8, n));
  if (depth > kMaxHeaderNesting) core::fail_limit(path, "safetensors header nesting depth", depth, kMaxHeaderNesting);
  try {
    return nlohmann::json::parse(b.begin() + 8, b.begin() + 8 + static_cast<std::ptrdiff_t>(n));
  } catch (const nlohmann::json::exception& e) {
    file_error(path, "safetensors header", "malformed JSON header", e.what(), "a JSON object");
  }
}

int st_itemsize(const std::string& dtype, const std::string& path, const std::string& field) {
  if (dtype == "F32") return 4;
  if (dtype == "F16" || dtype == "BF16") return 2;
  if (dtype == "F64") return 8;
  file_error(path, field + ".dtype", "unsupported dtype", dtype, "F32, F16 or BF16");
}

std::vector<int64_t> st_shape(const nlohmann::json& shape, const std::string& path, const std::string& field) {
  std::vector<int64_t> out;
  for (const auto& d : shape) {
    if (!d.is_number_unsigned() || d.get<uint64_t>() > static_cast<uint64_t>(core::limits::kTensorElements)) {
      file_error(path, field, "malformed shape", shape.dump(),
                 "non-negative integers of at most " + std::to_string(core::limits::kTensorElements));
    }
    out.push_back(d.get<int64_t>());
  }
  check_shape(out, path, field);
  return out;
}

std::vector<float> st_decode(const char* p, int64_t n, const std::string& dtype) {
  std::vector<float> out(static_cast<size_t>(n));
  for (int64_t i = 0; i < n; ++i) {
    if (dtype == "F32") {
      std::memcpy(&out[i], p + 4 * i, 4);
    } else if (dtype == "F64") {
      double v;
      std::memcpy(&v, p + 8 * i, 8);
      out[i] = static_cast<float>(v);
    } else {
      uint16_t bits;
      std::memcpy(&bits, p + 2 * i, 2);  // little-endian host, as the format
      out[i] = dtype == "BF16" ? bf16_to_float(bits) : fp16_to_float(bits);
    }
  }
  return out;
}

}  // namespace

struct SafetensorsFile::Header {
  nlohmann::json json;
};

SafetensorsFile::SafetensorsFile(const std::string& bytes, std::string path) : bytes_(bytes), path_(std::move(path)) {
  const std::string& b = bytes_;
  if (b.size() < 8) {
    file_error(path_, "safetensors header", "file truncated", std::to_string(b.size()) + " bytes",
               "an 8-byte header length");
  }
  const uint64_t n = read_le(b, 0, 8);
  if (n > b.size() - 8) {
    file_error(path_, "safetensors header", "header length exceeds the file", std::to_string(n),
               "at most " + std::to_string(b.size() - 8));
  }
  if (n > static_cast<uint64_t>(core::limits::kSafetensorsHeaderBytes))
    core::fail_limit(path_, "safetensors header length in bytes", static_cast<long long>(n),
                     core::limits::kSafetensorsHeaderBytes);
  auto h = std::make_shared<Header>(Header{parse_st_header(b, n, path_)});
  if (!h->json.is_object()) file_error(path_, "safetensors header", "header is not a JSON object");
  if (static_cast<long long>(h->json.size()) > core::limits::kTensorCount + 1)
    core::fail_limit(path_, "tensors in a safetensors file", static_cast<long long>(h->json.size()),
                     core::limits::kTensorCount);
  header_ = std::move(h);
  data_off_ = 8 + n;
}

std::vector<std::string> SafetensorsFile::names() const {
  std::vector<std::pair<uint64_t, std::string>> items;
  for (auto it = header_->json.begin(); it != header_->json.end(); ++it) {
    if (it.key() == "__metadata__") continue;
    uint64_t off = 0;
    const auto& v = it.value();
    if (v.is_object() && v.contains("data_offsets") && v["data_offsets"].is_array() &&
        !v["data_offsets"].empty() && v["data_offsets"][0].is_number_unsigned())
      off = v["data_offsets"][0].get<uint64_t>();
    items.emplace_back(off, it.key());
  }
  std::stable_sort(items.begin(), items.end());
  std::vector<std::string> out;
  out.reserve(items.size());
  for (auto& [o, n] : items) out.push_back(std::move(n));
  return out;
}

Tensor SafetensorsFile::tensor(const std::string& name) const {
  const auto it = header_->json.find(name);
  if (it == header_->json.end() || name == "__metadata__") {
    const std::vector<std::string> all = names();
    file_error(path_, "--tensor", "no tensor of that name", name,
               all.empty() ? std::string("a tensor name (the file has none)") : "one of " + core::join(all),
               core::did_you_mean(name, all));
  }
  const auto& e = *it;
  const std::string field = "tensor '" + name + "'";
  if (!e.is_object() || !e.contains("dtype") || !e["dtype"].is_string() || !e.contains("shape") ||
      !e["shape"].is_array() || !e.contains("data_offsets") || !e["data_offsets"].is_array() ||
      e["data_offsets"].size() != 2) {
    file_error(path_, field, "malformed header entry", e.dump(),
               "{\"dtype\": ..., \"shape\": [...], \"data_offsets\": [begin, end]}");
  }
  Tensor t;
  t.name = name;
  t.dtype = e["dtype"].get<std::string>();
  const int itemsize = st_itemsize(t.dtype, path_, field);
  t.shape = st_shape(e["shape"], path_, field + ".shape");
  const auto& offs = e["data_offsets"];
  if (!offs[0].is_number_unsigned() || !offs[1].is_number_unsigned()) {
    file_error(path_, field + ".data_offsets", "malformed offsets", offs.dump(), "two non-negative integers");
  }
  const uint64_t b0 = offs[0].get<uint64_t>(), b1 = offs[1].get<uint64_t>();
  const int64_t n = shape_numel(t.shape);
  const uint64_t need = static_cast<uint64_t>(n) * itemsize;
  if (b1 < b0 || b1 - b0 != need) {
    file_error(path_, field + ".data_offsets", "size does not match dtype and shape", offs.dump(),
               std::to_string(need) + " bytes for shape " + shape_string(t.shape) + " of " + t.dtype);
  }
  if (b1 > bytes_.size() - data_off_) {
    file_error(path_, field, "file truncated", std::to_string(bytes_.size() - data_off_) + " data bytes",
               "at least " + std::to_string(b1));
  }
  t.data = st_decode(bytes_.data() + data_off_ + b0, n, t.dtype);
  return t;
}

std::vector<std::string> safetensors_names(const std::string& bytes, const std::string& path) {
  return SafetensorsFile(bytes, path).names();
}

Tensor parse_safetensors(const std::string& b, const std::string& path, const std::string& name) {
  return SafetensorsFile(b, path).tensor(name);
}

}  // namespace xpusim::numerics
