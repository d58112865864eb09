#pragma once
// The bytes of a .npy v1.0 file with a given header dictionary (the unit, CLI and fuzz-seed tests
// share this one framing: magic, version, little-endian header length, the header padded with
// spaces to a multiple of 64 bytes and ended by a newline, then the data).

#include <string>

namespace xpusim::test {

/// `dict` is the header text, e.g. "{'descr': '<f4', 'fortran_order': False, 'shape': (2, 3), }".
inline std::string npy_file(const std::string& dict, const std::string& data) {
  std::string h = dict;
  while ((10 + h.size() + 1) % 64) h += ' ';
  h += '\n';
  std::string out = "\x93NUMPY\x01";
  out += '\0';
  out += static_cast<char>(h.size() & 0xFF);
  out += static_cast<char>(h.size() >> 8);
  return out + h + data;
}

/// The header dictionary of a C-order array of `descr` ("<f4") and `shape` ("(2, 3)").
inline std::string npy_dict(const std::string& descr, const std::string& shape) {
  return "{'descr': '" + descr + "', 'fortran_order': False, 'shape': " + shape + ", }";
}

}  // namespace xpusim::test
