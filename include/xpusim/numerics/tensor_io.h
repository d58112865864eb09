#pragma once
// Reading and writing tensors for the numerics tools: NumPy .npy (v1-v3, little-endian, C order)
// and .safetensors (F32, F16, BF16, F64). Every malformed input throws core::InputError naming
// the file, the field, the value and what was expected.

#include <cstdint>
#include <memory>
#include <string>
#include <vector>

namespace xpusim::numerics {

/// A dense tensor converted to float32, C order.
struct Tensor {
  std::string name;              ///< tensor name (safetensors) or empty
  std::string dtype;             ///< source dtype: "float32", "float64", "F32", "F16", "BF16", ...
  std::vector<int64_t> shape;
  std::vector<float> data;
};

/// Number of elements of a shape (1 for rank 0).
int64_t shape_numel(const std::vector<int64_t>& shape);
/// "[3, 4]".
std::string shape_string(const std::vector<int64_t>& shape);

/// Parses a .npy held in memory (`path` names it in diagnostics). float32 and float64 only.
Tensor parse_npy(const std::string& bytes, const std::string& path);
Tensor read_npy(const std::string& path);
/// Serialises a float32 (descr '<f4') or uint8 ('|u1') array as .npy v1.0.
std::string npy_bytes_f32(const std::vector<int64_t>& shape, const float* data);
std::string npy_bytes_u8(const std::vector<int64_t>& shape, const uint8_t* data);
void write_file(const std::string& path, const std::string& bytes);

/// A .safetensors file held in memory whose JSON header is parsed once (a file of 20,000
/// tensors reads each tensor without parsing the header again). `bytes` must outlive it.
class SafetensorsFile {
 public:
  SafetensorsFile(const std::string& bytes, std::string path);
  /// Tensor names in file (data offset) order, metadata excluded.
  std::vector<std::string> names() const;
  /// One tensor; unknown names list the valid ones.
  Tensor tensor(const std::string& name) const;

 private:
  struct Header;  // the parsed JSON header
  const std::string& bytes_;
  std::string path_;
  std::shared_ptr<const Header> header_;
  uint64_t data_off_ = 0;
};

/// Names of the tensors of a .safetensors file, in file order (metadata excluded).
std::vector<std::string> safetensors_names(const std::string& bytes, const std::string& path);
/// One tensor of a .safetensors file held in memory; unknown names list the valid ones.
Tensor parse_safetensors(const std::string& bytes, const std::string& path,
                         const std::string& name);

/// Reads the whole file; throws InputError when it cannot be opened.
std::string read_file(const std::string& path);
/// True when the bytes start with the .npy magic.
bool is_npy(const std::string& bytes);

/// bf16 / fp16 bit patterns to float32 (exact).
float bf16_to_float(uint16_t bits);
float fp16_to_float(uint16_t bits);

}  // namespace xpusim::numerics
