// Loads a TorchScript module (.pt) with torch::jit::load and runs A1's reference input once.
// Usage: cpp-torchscript MODEL.pt   ->  {"logits": [[...], ...]} on stdout
#include <ATen/Parallel.h>
#include <torch/script.h>

#include <exception>
#include <fstream>

#include "common.h"

int main(int argc, char** argv) {
  if (argc != 2) return a1::fail("usage: cpp-torchscript MODEL.pt");
  const std::string path = argv[1];
  if (!std::ifstream(path).good()) return a1::fail("cannot open model file: " + path);
  a1::quiet_logging();
  a1::QuietWarnings warnings;
  c10::WarningUtils::WarningHandlerGuard warning_guard(&warnings);
  try {
    at::set_num_threads(1);
    c10::InferenceMode guard;
    torch::jit::script::Module m = torch::jit::load(path);
    m.eval();
    at::Tensor y = m.forward({a1::reference_input()}).toTensor();
    a1::print_warnings(warnings);
    a1::print_logits(y);
    return 0;
  } catch (const c10::Error& e) {
    return a1::fail(e.what_without_backtrace());
  } catch (const std::exception& e) {
    return a1::fail(e.what());
  } catch (...) {
    return a1::fail("unknown exception");
  }
}
