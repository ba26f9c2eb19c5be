// The libtorch runners' side of the protocol (cpp-torchscript, cpp-aoti): tensors <-> safetensors
// as at::Tensor, libtorch's warnings and log kept off stderr, the run. The protocol itself
// (arguments, the inputs' naming, the stdout line, errors) is protocol.h.
// Header-only on purpose: each program is one translation unit plus these headers.
#pragma once

#include <ATen/ATen.h>
#include <ATen/Parallel.h>
#include <c10/util/Exception.h>
#include <c10/util/Logging.h>

#include <cstring>
#include <exception>
#include <functional>

#include "protocol.h"

namespace runner {

// A tensor with its protocol name: inputs input_0, ... (positional) or a keyword; outputs by
// the model's name where the runtime knows it (a TorchScript dict's keys), else output_0, ...
struct Named {
  std::string name;
  at::Tensor tensor;
};

// A loaded model: runs forward on the inputs (in call order) and returns its outputs.
using Forward = std::function<std::vector<Named>(const std::vector<Named>&)>;

// A runtime's flat list of outputs under the protocol's positional names output_0, output_1, ...
// (an undefined tensor, a None output of the model, is left out, as the reference leaves it out).
inline std::vector<Named> positional(const std::vector<at::Tensor>& outputs) {
  std::vector<Named> named;
  for (const at::Tensor& t : outputs) {
    if (t.defined()) named.push_back({"output_" + std::to_string(named.size()), t});
  }
  return named;
}

inline std::vector<at::Tensor> tensors(const std::vector<Named>& named) {
  std::vector<at::Tensor> out;
  for (const Named& n : named) out.push_back(n.tensor);
  return out;
}

// ---- errors and quiet stderr ----

// stderr carries at most one line per problem: libtorch's own chatter is kept off it.
// LOG(WARNING) lines (e.g. the AOTI loader's multi-line "outdated pt2 archive" notice, which
// lists every ZIP member) are dropped via the log level; TORCH_WARN messages are collected and,
// after a successful run only, printed as one "warning: ..." line each.
class QuietWarnings : public c10::WarningHandler {
 public:
  void process(const c10::Warning& w) override { messages.push_back(w.msg()); }
  std::vector<std::string> messages;
};

inline void quiet_logging() { FLAGS_caffe2_log_level = 2; /* ERROR and above only */ }

inline void print_warnings(const QuietWarnings& q) {
  for (const std::string& m : q.messages) {
    std::fprintf(stderr, "warning: %s\n", meaningful_line(m).c_str());
  }
}

// ---- tensors <-> safetensors ----

struct DtypeName {
  at::ScalarType type;
  const char* name;
};

inline const std::vector<DtypeName>& dtype_names() {
  static const std::vector<DtypeName> kNames = {
      {at::kFloat, "F32"},   {at::kDouble, "F64"},  {at::kHalf, "F16"},     {at::kBFloat16, "BF16"},
      {at::kLong, "I64"},    {at::kInt, "I32"},     {at::kShort, "I16"},    {at::kChar, "I8"},
      {at::kByte, "U8"},     {at::kBool, "BOOL"},   {at::kUInt16, "U16"},   {at::kUInt32, "U32"},
      {at::kUInt64, "U64"},  {at::kFloat8_e5m2, "F8_E5M2"}, {at::kFloat8_e4m3fn, "F8_E4M3"},
      {at::kComplexFloat, "C64"},
  };
  return kNames;
}

inline std::optional<at::ScalarType> scalar_type(std::string_view name) {
  for (const DtypeName& d : dtype_names()) {
    if (name == d.name) return d.type;
  }
  return std::nullopt;
}

inline const char* safetensors_dtype(at::ScalarType t) {
  for (const DtypeName& d : dtype_names()) {
    if (t == d.type) return d.name;
  }
  return nullptr;
}
// The inputs as CPU tensors in call order, with their names (copies: the file's data may be unaligned).
inline std::vector<Named> read_inputs(const std::string& path) {
  const st::File f = read_inputs_file(path);
  std::vector<Named> inputs;
  for (const st::TensorView* t : ordered_inputs(f, path)) {
    const std::optional<at::ScalarType> type = scalar_type(t->dtype);
    if (!type) throw std::runtime_error("inputs file " + path + ": " + t->name + " has dtype " + t->dtype + ", which libtorch cannot hold");
    at::Tensor x = at::empty(t->shape, at::TensorOptions().dtype(*type));
    if (t->nbytes) std::memcpy(x.data_ptr(), t->data, t->nbytes);
    inputs.push_back({t->name, std::move(x)});
  }
  return inputs;
}

inline void write_outputs(const std::string& path, const std::vector<Named>& outputs) {
  std::vector<at::Tensor> keep;  // CPU, contiguous; they own the bytes the writer reads
  std::vector<st::TensorOut> out;
  for (size_t i = 0; i < outputs.size(); ++i) {
    const std::string& name = outputs[i].name;
    at::Tensor t = outputs[i].tensor;
    if (!t.defined()) throw std::runtime_error(name + " is an undefined tensor");
    if (t.layout() != at::kStrided || t.is_quantized()) {
      throw std::runtime_error(name + " is not a dense tensor; the outputs file holds dense tensors only");
    }
    const char* dtype = safetensors_dtype(t.scalar_type());
    if (!dtype) {
      throw std::runtime_error(name + " has dtype " + std::string(c10::toString(t.scalar_type())) +
                               ", which the outputs file cannot hold");
    }
    t = t.cpu().contiguous();
    keep.push_back(t);
    out.push_back({name, dtype, t.sizes().vec(), t.numel() ? t.data_ptr() : nullptr, t.nbytes()});
  }
  try {
    st::write_file(path, std::move(out));
  } catch (const st::Error& e) {
    throw std::runtime_error(std::string("outputs file ") + e.what());
  }
}

// ---- the protocol run ----

// Load (timed), then the timed forwards (runner::timed_forwards), the last forward's outputs
// written; then the one stdout line. Throws on any failure.
template <typename Load>
void run_protocol(const Args& a, Load&& load, StderrHold& hold, const QuietWarnings& warnings) {
  std::vector<Named> inputs = read_inputs(*a.inputs);

  const auto t0 = std::chrono::steady_clock::now();
  Forward forward = load(a.model);
  const double load_ms = ms_since(t0);

  std::vector<Named> outputs;
  const Timing timing = timed_forwards(a, [&] { outputs = forward(inputs); });

  write_outputs(a.outputs, outputs);
  hold.release(true);
  print_warnings(warnings);
  print_stages(load_ms, timing, outputs.size(), a.threads, at::get_num_threads());
}

// main() of both libtorch programs, on held_main: libtorch's chatter kept off stderr, --threads
// intra-op threads (at::set_num_threads), inference mode. `load(path)` loads the model, returns a
// Forward.
template <typename Load>
int run_main(int argc, char** argv, const std::string& usage, Load&& load) {
  quiet_logging();
  QuietWarnings warnings;
  c10::WarningUtils::WarningHandlerGuard warning_guard(&warnings);
  return held_main(argc, argv, usage, [&](const Args& a, StderrHold& hold) {
    try {
      at::set_num_threads(a.threads);
      c10::InferenceMode guard;
      run_protocol(a, load, hold, warnings);
    } catch (const c10::Error& e) {
      throw std::runtime_error(e.what_without_backtrace());  // its message, not libtorch's backtrace
    }
  });
}

}  // namespace runner
