// Loads a TorchScript module (.pt) with torch::jit::load and runs its forward on the inputs.
// Usage: cpp-torchscript MODEL.pt --inputs IN.safetensors --outputs OUT.safetensors [--repeat K]
// Inputs named input_0, input_1, ... go positionally, any other name by keyword (TorchScript
// checks each against forward's schema). forward's result may be a dict of tensors (a traced
// dict or ModelOutput: written under its keys) or a tensor or (nested) tuples and lists of
// tensors: flattened in order into output_0, output_1, ...
#include <torch/script.h>

#include <memory>

#include "common.h"

namespace {

void flatten(const c10::IValue& v, std::vector<at::Tensor>& out) {
  if (v.isTensor()) {
    out.push_back(v.toTensor());
  } else if (v.isNone()) {
    return;  // an optional output not computed (the reference leaves it out too)
  } else if (v.isTuple()) {
    for (const c10::IValue& e : v.toTupleRef().elements()) flatten(e, out);
  } else if (v.isList()) {
    for (const c10::IValue& e : v.toListRef()) flatten(e, out);
  } else {
    throw std::runtime_error("forward returned a " + v.tagKind() + " as output " + std::to_string(out.size()) +
                             "; only tensors and tuples or lists of tensors are supported");
  }
}

// A dict of tensors keyed by strings (what trace makes of a dict or a ModelOutput), by its keys.
std::vector<runner::Named> by_key(const c10::IValue& v) {
  std::vector<runner::Named> out;
  for (const auto& entry : v.toGenericDict()) {
    if (!entry.key().isString() || !entry.value().isTensor()) {
      throw std::runtime_error("forward returned a dict that is not str -> Tensor");
    }
    out.push_back({entry.key().toStringRef(), entry.value().toTensor()});
  }
  return out;
}

}  // namespace

int main(int argc, char** argv) {
  const std::string usage =
      "usage: cpp-torchscript MODEL.pt --inputs IN.safetensors --outputs OUT.safetensors [--repeat K] [--warmup W] [--threads T]";
  return runner::run_main(argc, argv, usage, [](const std::string& path) -> runner::Forward {
    auto m = std::make_shared<torch::jit::script::Module>(torch::jit::load(path));
    m->eval();
    return [m](const std::vector<runner::Named>& inputs) {
      std::vector<c10::IValue> args;
      torch::jit::Kwargs kwargs;
      for (const runner::Named& in : inputs) {
        if (runner::input_index(in.name) >= 0) {
          args.emplace_back(in.tensor);
        } else {
          kwargs[in.name] = in.tensor;
        }
      }
      const c10::IValue result = m->forward(std::move(args), kwargs);
      if (result.isGenericDict()) return by_key(result);
      std::vector<at::Tensor> out;
      flatten(result, out);
      return runner::positional(out);
    };
  });
}
