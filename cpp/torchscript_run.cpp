// Loads a TorchScript module (.pt) with torch::jit::load and runs its forward on the inputs.
// Usage: cpp-torchscript MODEL.pt --inputs IN.safetensors --outputs OUT.safetensors [--repeat K]
// forward's result may be a tensor or (nested) tuples and lists of tensors: they are flattened
// in order into output_0, output_1, ...
#include <torch/script.h>

#include <memory>

#include "common.h"

namespace {

void flatten(const c10::IValue& v, std::vector<at::Tensor>& out) {
  if (v.isTensor()) {
    out.push_back(v.toTensor());
  } else if (v.isTuple()) {
    for (const c10::IValue& e : v.toTupleRef().elements()) flatten(e, out);
  } else if (v.isList()) {
    for (const c10::IValue& e : v.toListRef()) flatten(e, out);
  } else {
    throw std::runtime_error("forward returned a " + v.tagKind() + " as output " + std::to_string(out.size()) +
                             "; only tensors and tuples or lists of tensors are supported");
  }
}

}  // namespace

int main(int argc, char** argv) {
  const std::string usage =
      "usage: cpp-torchscript MODEL.pt --inputs IN.safetensors --outputs OUT.safetensors [--repeat K]";
  return runner::run_main(argc, argv, usage, [](const std::string& path) -> runner::Forward {
    auto m = std::make_shared<torch::jit::script::Module>(torch::jit::load(path));
    m->eval();
    return [m](const std::vector<at::Tensor>& inputs) {
      std::vector<c10::IValue> args(inputs.begin(), inputs.end());
      std::vector<at::Tensor> out;
      flatten(m->forward(std::move(args)), out);
      return out;
    };
  });
}
