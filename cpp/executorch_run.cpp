// Runs an ExecuTorch program (.pte) with the executorch wheel's own C++ runtime: libexecutorch.so
// (program loader, Module), libexecutorch_backend_xnnpack.so (the XNNPACK delegate, registered
// when the library loads) and libexecutorch_kernels_optimized.so (the kernels for operators
// left outside the delegate). No libtorch, no Python.
// Usage: cpp-executorch MODEL.pte --inputs IN.safetensors --outputs OUT.safetensors [--repeat K]
//        [--warmup W] [--threads T] (T: the threadpool XNNPACK runs on)
// Inputs F32, F64, F16, BF16, I64, I32, U8, BOOL, fed as one flat list in the inputs file's call order (the
// order torch.export flattened args and kwargs in); outputs written in the dtype the program
// returns, flat, as output_0, output_1, ...
#include <executorch/extension/module/module.h>
#include <executorch/extension/tensor/tensor.h>
#include <executorch/runtime/core/exec_aten/util/scalar_type_util.h>
#include <executorch/runtime/platform/runtime.h>

#include <cstring>

#include "protocol.h"

// The wheel ships libexecutorch_threadpool.so but not extension/threadpool/threadpool.h: the two
// calls this program makes, declared as that header declares them (non-virtual members).
namespace executorch::extension::threadpool {
class ThreadPool {
 public:
  size_t get_thread_count() const;
  bool _unsafe_reset_threadpool(uint32_t num_threads);
};
ThreadPool* get_threadpool();
}  // namespace executorch::extension::threadpool

namespace {

using executorch::aten::ScalarType;
using executorch::extension::Module;
using executorch::extension::TensorPtr;
using executorch::runtime::Error;
using executorch::runtime::EValue;

struct Dtype {
  ScalarType type;
  const char* name;
};
constexpr Dtype kDtypes[] = {
    {ScalarType::Float, "F32"}, {ScalarType::Double, "F64"}, {ScalarType::Half, "F16"},
    {ScalarType::BFloat16, "BF16"}, {ScalarType::Long, "I64"}, {ScalarType::Int, "I32"},
    {ScalarType::Byte, "U8"},   {ScalarType::Bool, "BOOL"},
};

std::string describe(Error e) {
  char code[16];
  std::snprintf(code, sizeof code, "0x%x", static_cast<unsigned>(e));
  return std::string(executorch::runtime::to_string(e)) + " (" + code + ")";
}

// The inputs, copied into buffers this program owns (the file's data may be unaligned).
struct Inputs {
  std::vector<std::vector<uint8_t>> buffers;
  std::vector<TensorPtr> tensors;
};

Inputs read_inputs(const std::string& path) {
  const st::File f = runner::read_inputs_file(path);
  const std::vector<const st::TensorView*> views = runner::ordered_inputs(f, path);
  Inputs in;
  in.buffers.reserve(views.size());
  for (const st::TensorView* t : views) {
    const Dtype* d = nullptr;
    for (const Dtype& k : kDtypes) {
      if (t->dtype == k.name) d = &k;
    }
    if (!d) throw std::runtime_error("inputs file " + path + ": " + t->name + " has dtype " + t->dtype + ", which cpp-executorch does not take");
    std::vector<executorch::aten::SizesType> sizes(t->shape.begin(), t->shape.end());
    in.buffers.emplace_back(t->data, t->data + t->nbytes);
    in.tensors.push_back(executorch::extension::make_tensor_ptr(std::move(sizes), in.buffers.back().data(), d->type));
  }
  return in;
}

void write_outputs(const std::string& path, const std::vector<EValue>& outputs) {
  std::vector<st::TensorOut> out;
  for (size_t i = 0; i < outputs.size(); ++i) {
    if (outputs[i].isNone()) continue;  // a None output of the model: the reference leaves it out
    const std::string name = "output_" + std::to_string(out.size());
    if (!outputs[i].isTensor()) throw std::runtime_error(name + " is not a tensor (tag " + std::to_string(static_cast<int>(outputs[i].tag)) + ")");
    const executorch::aten::Tensor t = outputs[i].toTensor();
    const Dtype* d = nullptr;
    for (const Dtype& k : kDtypes) {
      if (t.scalar_type() == k.type) d = &k;
    }
    if (!d) throw std::runtime_error(name + " has a dtype the outputs file does not take (" + executorch::runtime::toString(t.scalar_type()) + ")");
    std::vector<int64_t> shape(t.sizes().begin(), t.sizes().end());
    out.push_back({name, d->name, std::move(shape), t.nbytes() ? t.const_data_ptr() : nullptr, t.nbytes()});
  }
  try {
    st::write_file(path, std::move(out));
  } catch (const st::Error& e) {
    throw std::runtime_error(std::string("outputs file ") + e.what());
  }
}

void run(const runner::Args& a, runner::StderrHold& hold) {
  executorch::runtime::runtime_init();
  Inputs in = read_inputs(*a.inputs);

  // the pool the XNNPACK delegate runs on: --threads (it starts at the machine's core count)
  executorch::extension::threadpool::ThreadPool* pool = executorch::extension::threadpool::get_threadpool();
  int reported = -1;
  if (pool != nullptr) {
    pool->_unsafe_reset_threadpool(static_cast<uint32_t>(a.threads));
    reported = static_cast<int>(pool->get_thread_count());
  }

  const auto t0 = std::chrono::steady_clock::now();
  Module module(a.model, Module::LoadMode::File);
  if (const Error e = module.load_forward(); e != Error::Ok) {
    throw std::runtime_error("cannot load " + a.model + ": " + describe(e));
  }
  const double load_ms = runner::ms_since(t0);

  std::vector<EValue> outputs;
  const runner::Timing timing = runner::timed_forwards(a, [&]() {
    std::vector<EValue> args;
    for (const TensorPtr& t : in.tensors) args.emplace_back(*t);
    auto result = module.forward(args);
    if (!result.ok()) throw std::runtime_error("forward failed: " + describe(result.error()));
    outputs = std::move(*result);
  });
  write_outputs(a.outputs, outputs);
  hold.release(true);
  runner::print_stages(load_ms, timing, outputs.size(), a.threads, reported);
}

}  // namespace

int main(int argc, char** argv) {
  const std::string usage =
      "usage: cpp-executorch MODEL.pte --inputs IN.safetensors --outputs OUT.safetensors [--repeat K] [--warmup W] [--threads T]";
  return runner::held_main(argc, argv, usage, run);
}
