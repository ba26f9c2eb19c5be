// Loads a TorchScript module (.pt) with torch::jit::load and runs its forward on the inputs.
// Usage: cpp-torchscript MODEL.pt --inputs IN.safetensors --outputs OUT.safetensors [--repeat K]
// Inputs named input_0, input_1, ... go positionally, any other name by keyword (TorchScript
// checks each against forward's schema). A nested call (a name with a dot, `batch.user_ids`,
// `images.0`) is passed by keyword, each nested argument rebuilt one level deep as forward's
// schema types it: Dict[str, Tensor] by key, List[Tensor] or a tuple by position. forward's result may be a dict of tensors (a traced
// dict or ModelOutput: written under its keys) or a tensor or (nested) tuples and lists of
// tensors: flattened in order into output_0, output_1, ...
#include <torch/script.h>

#include <algorithm>
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

// The argument of forward a protocol name's head stands for: input_N is the (N+1)th (self is
// first), any other head the argument of that name.
const c10::Argument& argument_of(const c10::FunctionSchema& schema, const std::string& head) {
  const auto& args = schema.arguments();
  const long n = runner::input_index(head);
  if (n >= 0 && static_cast<size_t>(n) + 1 < args.size()) return args[n + 1];
  for (const c10::Argument& a : args) {
    if (n < 0 && a.name() == head) return a;
  }
  throw std::runtime_error("forward has no argument " + head + " (" + schema.name() + ")");
}

using Parts = std::vector<std::pair<std::string, at::Tensor>>;  // a nested argument's KEY -> tensor

// A nested argument rebuilt from its tensors `HEAD.KEY` (in call order) as forward's schema types
// it: a Dict[str, Tensor] by key, a List[Tensor] or a tuple of tensors by position; anything
// deeper or other is one line.
c10::IValue rebuild(const c10::Argument& arg, const Parts& parts) {
  c10::TypePtr type = arg.type();
  if (type->kind() == c10::TypeKind::OptionalType) type = type->expectRef<c10::OptionalType>().getElementType();
  for (const auto& [key, t] : parts) {
    if (key.find('.') != std::string::npos) {
      throw std::runtime_error("input " + arg.name() + "." + key +
                               ": cpp-torchscript rebuilds one level of nesting (a dict, list or tuple of tensors)");
    }
  }
  const auto by_position = [&]() {
    std::vector<c10::IValue> items;
    for (const auto& [key, t] : parts) {
      if (key != std::to_string(items.size())) {
        throw std::runtime_error("input " + arg.name() + "." + key + ": forward takes " + arg.name() + " as " +
                                 type->str() + ", whose items are numbered 0, 1, ...");
      }
      items.emplace_back(t);
    }
    return items;
  };
  switch (type->kind()) {
    case c10::TypeKind::DictType: {
      c10::Dict<std::string, at::Tensor> d;
      for (const auto& [key, t] : parts) d.insert(key, t);
      return d;
    }
    case c10::TypeKind::ListType: {
      c10::List<at::Tensor> l;
      for (const c10::IValue& v : by_position()) l.push_back(v.toTensor());
      return l;
    }
    case c10::TypeKind::TupleType:
      return c10::ivalue::Tuple::create(by_position());
    default:
      throw std::runtime_error("forward takes " + arg.name() + " as " + type->str() +
                               ", not a dict, list or tuple of tensors");
  }
}

// A nested call (some name has a dot): every argument by keyword, nested ones rebuilt.
torch::jit::Kwargs nested_call(const c10::FunctionSchema& schema, const std::vector<runner::Named>& inputs) {
  torch::jit::Kwargs kwargs;
  std::vector<std::pair<std::string, Parts>> groups;  // head -> its parts, in call order
  for (const runner::Named& in : inputs) {
    const size_t dot = in.name.find('.');
    const std::string head = in.name.substr(0, dot);
    if (dot == std::string::npos) {
      kwargs[argument_of(schema, head).name()] = in.tensor;
      continue;
    }
    if (groups.empty() || groups.back().first != head) groups.push_back({head, {}});
    groups.back().second.push_back({in.name.substr(dot + 1), in.tensor});
  }
  for (const auto& [head, parts] : groups) {
    const c10::Argument& arg = argument_of(schema, head);
    kwargs[arg.name()] = rebuild(arg, parts);
  }
  return kwargs;
}

}  // namespace

int main(int argc, char** argv) {
  const std::string usage =
      "usage: cpp-torchscript MODEL.pt --inputs IN.safetensors --outputs OUT.safetensors [--repeat K] [--warmup W] [--threads T]";
  return runner::run_main(argc, argv, usage, [](const std::string& path) -> runner::Forward {
    auto m = std::make_shared<torch::jit::script::Module>(torch::jit::load(path));
    m->eval();
    const c10::FunctionSchema schema = m->get_method("forward").function().getSchema();
    return [m, schema](const std::vector<runner::Named>& inputs) {
      std::vector<c10::IValue> args;
      torch::jit::Kwargs kwargs;
      const bool nested =
          std::any_of(inputs.begin(), inputs.end(), [](const runner::Named& in) { return in.name.find('.') != std::string::npos; });
      if (nested) {
        kwargs = nested_call(schema, inputs);
      } else {
        for (const runner::Named& in : inputs) {
          if (runner::input_index(in.name) >= 0) {
            args.emplace_back(in.tensor);
          } else {
            kwargs[in.name] = in.tensor;
          }
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
