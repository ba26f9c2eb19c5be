// Test harness for cpp/safetensors.h (no libtorch), built by tests/test_cpp_protocol.py with
// AddressSanitizer and UBSan. For each file named on the command line, prints one line:
//   ok {"NAME": ["DTYPE", [D0, D1], NBYTES], ...}   (JSON, tensors in header order), after
//                                                   checking that serialize -> parse gives
//                                                   the same tensors back
//   error MESSAGE
// Exit status 0 unless a round trip differs (or a sanitizer aborts).
#include <cstdio>
#include <string>

#include "safetensors.h"

int main(int argc, char** argv) {
  int status = 0;
  for (int i = 1; i < argc; ++i) {
    try {
      const st::File f = st::read_file(argv[i]);
      std::vector<st::TensorOut> outs;
      std::string line = "ok {";
      for (const st::TensorView& t : f.tensors) {
        outs.push_back({t.name, t.dtype, t.shape, t.data, t.nbytes});
        std::string shape;
        for (const int64_t d : t.shape) shape += (shape.empty() ? "" : ",") + std::to_string(d);
        line += (line.size() > 4 ? ", " : "") + st::quote_name(t.name) + ": [\"" + t.dtype + "\", [" + shape + "], " +
                std::to_string(t.nbytes) + "]";
      }
      line += "}";
      const st::File back = st::parse(st::serialize(outs, f.metadata));
      bool same = back.tensors.size() == f.tensors.size() && back.metadata == f.metadata;
      for (const st::TensorView& t : f.tensors) {
        const st::TensorView* b = back.find(t.name);
        same = same && b && b->dtype == t.dtype && b->shape == t.shape && b->nbytes == t.nbytes &&
               (t.nbytes == 0 || std::memcmp(b->data, t.data, t.nbytes) == 0);
      }
      if (!same) {
        line = "roundtrip-differs";
        status = 1;
      }
      std::printf("%s\n", line.c_str());
    } catch (const st::Error& e) {
      std::string m = e.what();
      if (m.find('\n') != std::string::npos) m = "error message has a newline";
      std::printf("error %s\n", m.c_str());
    }
  }
  return status;
}
