// Runs an OpenVINO IR (.xml + .bin beside it) with the openvino wheel's C API (libopenvino_c.so,
// which loads libopenvino.so, the IR frontend and the CPU plugin from its own folder). No Python.
// The CPU plugin is asked for f32 inference precision (it would pick bf16 on a CPU that has it),
// one thread and one stream, as the Python openvino runner does.
// Usage: cpp-openvino MODEL.xml --inputs IN.safetensors --outputs OUT.safetensors [--repeat K]
// Inputs F32, F64, F16, BF16, I64, I32, U8, BOOL, fed by name (the export names the IR's inputs as the inputs
// file does); outputs written under the IR's output names (the reference's), in their dtype.
#include <openvino/c/openvino.h>

#include <cstdlib>
#include <cstring>
#include <memory>

#include "protocol.h"

namespace {

struct Dtype {
  ov_element_type_e type;
  const char* name;
};
constexpr Dtype kDtypes[] = {
    {F32, "F32"}, {F64, "F64"}, {F16, "F16"}, {BF16, "BF16"}, {I64, "I64"}, {I32, "I32"}, {U8, "U8"}, {BOOLEAN, "BOOL"},
};

// An OpenVINO call that did not return OK: its status and OpenVINO's own last message.
void check(ov_status_e status, const std::string& what) {
  if (status == OK) return;
  const char* msg = ov_get_last_err_msg();
  std::string detail = msg && *msg ? std::string(msg) : std::string(ov_get_error_info(status));
  throw std::runtime_error(what + ": " + detail);
}

template <typename T, void (*Free)(T*)>
struct Owned {
  T* p = nullptr;
  ~Owned() {
    if (p) Free(p);
  }
};

struct Input {
  std::string name;
  std::vector<uint8_t> buffer;  // a copy: the file's data may be unaligned
  ov_shape_t shape{};
  Owned<ov_tensor_t, ov_tensor_free> tensor;
  ~Input() { ov_shape_free(&shape); }
};

std::vector<std::unique_ptr<Input>> read_inputs(const std::string& path) {
  const st::File f = runner::read_inputs_file(path);
  std::vector<std::unique_ptr<Input>> in;
  for (const st::TensorView* t : runner::ordered_inputs(f, path)) {
    const Dtype* d = nullptr;
    for (const Dtype& k : kDtypes) {
      if (t->dtype == k.name) d = &k;
    }
    if (!d) throw std::runtime_error("inputs file " + path + ": " + t->name + " has dtype " + t->dtype + ", which cpp-openvino does not take");
    auto x = std::make_unique<Input>();
    x->name = t->name;
    x->buffer.assign(t->data, t->data + t->nbytes);
    if (!t->shape.empty()) {  // a scalar keeps {0, nullptr}: ov_shape_create refuses rank 0, the tensor takes it
      check(ov_shape_create(static_cast<int64_t>(t->shape.size()), t->shape.data(), &x->shape), "shape of " + t->name);
    }
    check(ov_tensor_create_from_host_ptr(d->type, x->shape, x->buffer.data(), &x->tensor.p), "tensor " + t->name);
    in.push_back(std::move(x));
  }
  return in;
}

// An input's or output's name as the IR holds it (the export's). Not the compiled model's: compiling
// may drop a Convert before an output and give the output the Convert's input's name as well, which
// ov_port_get_any_name can return. The compiled model keeps the IR's order.
std::string port_name(const ov_model_t* model, size_t i, bool input) {
  Owned<ov_output_const_port_t, ov_output_const_port_free> port;
  check(input ? ov_model_const_input_by_index(model, i, &port.p) : ov_model_const_output_by_index(model, i, &port.p),
        "port " + std::to_string(i));
  char* name = nullptr;
  check(ov_port_get_any_name(port.p, &name), "name of port " + std::to_string(i));
  std::string out(name);
  ov_free(name);
  return out;
}

void write_outputs(const std::string& path, ov_infer_request_t* req, const std::vector<std::string>& names) {
  std::vector<st::TensorOut> out;
  std::vector<Owned<ov_tensor_t, ov_tensor_free>> held(names.size());
  for (size_t i = 0; i < names.size(); ++i) {
    check(ov_infer_request_get_output_tensor_by_index(req, i, &held[i].p), "output " + names[i]);
    ov_element_type_e type;
    check(ov_tensor_get_element_type(held[i].p, &type), "type of " + names[i]);
    const Dtype* d = nullptr;
    for (const Dtype& k : kDtypes) {
      if (type == k.type) d = &k;
    }
    if (!d) throw std::runtime_error(names[i] + " has a dtype the outputs file does not take (" + std::to_string(static_cast<int>(type)) + ")");
    // OpenVINO's C API has no rank-0 shape (ov_shape_create refuses rank 0), so a scalar output's
    // shape is refused: one element and no shape is rank 0
    ov_shape_t shape{};
    const ov_status_e got = ov_tensor_get_shape(held[i].p, &shape);
    size_t elements = 0;
    check(ov_tensor_get_size(held[i].p, &elements), "size of " + names[i]);
    if (got != OK && elements != 1) check(got, "shape of " + names[i]);
    std::vector<int64_t> dims;
    if (got == OK && shape.dims) dims.assign(shape.dims, shape.dims + shape.rank);
    if (got == OK) ov_shape_free(&shape);
    size_t bytes = 0;
    void* data = nullptr;
    check(ov_tensor_get_byte_size(held[i].p, &bytes), "size of " + names[i]);
    check(ov_tensor_data(held[i].p, &data), "data of " + names[i]);
    out.push_back({names[i], d->name, std::move(dims), bytes ? data : nullptr, bytes});
  }
  try {
    st::write_file(path, std::move(out));
  } catch (const st::Error& e) {
    throw std::runtime_error(std::string("outputs file ") + e.what());
  }
}

void run(const runner::Args& a, runner::StderrHold& hold) {
  std::vector<std::unique_ptr<Input>> in = read_inputs(*a.inputs);

  auto t0 = std::chrono::steady_clock::now();
  Owned<ov_core_t, ov_core_free> core;
  check(ov_core_create(&core.p), "cannot start OpenVINO");
  Owned<ov_model_t, ov_model_free> model;
  check(ov_core_read_model(core.p, a.model.c_str(), nullptr, &model.p), "cannot load " + a.model);
  const std::string threads = std::to_string(a.threads);  // --threads: the CPU plugin's own knob
  const ov_property_t props[] = {
      {ov_property_key_hint_inference_precision, "f32"},
      {ov_property_key_inference_num_threads, threads.c_str()},
      {ov_property_key_num_streams, "1"},
  };
  Owned<ov_compiled_model_t, ov_compiled_model_free> cm;
  check(ov_core_compile_model_props(core.p, model.p, "CPU", 3, props, &cm.p), "cannot compile " + a.model + " for the CPU");
  Owned<ov_infer_request_t, ov_infer_request_free> req;
  check(ov_compiled_model_create_infer_request(cm.p, &req.p), "cannot create an infer request");
  const double load_ms = runner::ms_since(t0);

  size_t n_in = 0, n_out = 0;
  check(ov_compiled_model_inputs_size(cm.p, &n_in), "inputs");
  check(ov_compiled_model_outputs_size(cm.p, &n_out), "outputs");
  std::vector<std::string> wanted, outputs;
  for (size_t i = 0; i < n_in; ++i) wanted.push_back(port_name(model.p, i, true));
  for (size_t i = 0; i < n_out; ++i) outputs.push_back(port_name(model.p, i, false));
  std::vector<std::string> given;
  for (const auto& x : in) given.push_back(x->name);
  std::vector<std::string> a_sorted = wanted, b_sorted = given;
  std::sort(a_sorted.begin(), a_sorted.end());
  std::sort(b_sorted.begin(), b_sorted.end());
  if (a_sorted != b_sorted) {
    std::string w, g;
    for (const auto& s : wanted) w += (w.empty() ? "" : ", ") + s;
    for (const auto& s : given) g += (g.empty() ? "" : ", ") + s;
    throw std::runtime_error("the model's inputs are [" + w + "], the inputs file holds [" + g + "]");
  }
  for (const auto& x : in) check(ov_infer_request_set_tensor(req.p, x->name.c_str(), x->tensor.p), "input " + x->name);

  auto forward = [&]() { check(ov_infer_request_infer(req.p), "forward failed"); };
  const runner::Timing timing = runner::timed_forwards(a, forward);
  write_outputs(a.outputs, req.p, outputs);
  hold.release(true);
  // the compiled model's own count of inference threads
  char* got = nullptr;
  int reported = -1;
  if (ov_compiled_model_get_property(cm.p, ov_property_key_inference_num_threads, &got) == OK && got != nullptr) {
    reported = std::atoi(got);
    ov_free(got);
  }
  runner::print_stages(load_ms, timing, outputs.size(), a.threads, reported);
}

}  // namespace

int main(int argc, char** argv) {
  const std::string usage =
      "usage: cpp-openvino MODEL.xml --inputs IN.safetensors --outputs OUT.safetensors [--repeat K] [--warmup W] "
      "[--threads T]";
  return runner::held_main(argc, argv, usage, run);
}
