// Loads a TorchScript module (.pt) with torch::jit::load and runs A1's reference input once.
// Usage: cpp-torchscript MODEL.pt   ->  {"logits": [[...], ...]} on stdout
#include <torch/script.h>

#include <fstream>

#include "common.h"

int main(int argc, char** argv) {
  if (argc != 2) return a1::fail("usage: cpp-torchscript MODEL.pt");
  const std::string path = argv[1];
  if (!std::ifstream(path).good()) return a1::fail("cannot open model file: " + path);
  return a1::run_guarded([&] {
    torch::jit::script::Module m = torch::jit::load(path);
    m.eval();
    return m.forward({a1::reference_input()}).toTensor();
  });
}
