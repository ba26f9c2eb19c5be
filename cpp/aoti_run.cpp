// Runs an AOTInductor package (.pt2) with torch::inductor::AOTIModelPackageLoader on A1's
// reference input once. Works with the default package (its .so NEEDs libtorch.so, found through
// this executable's DT_RPATH) and with a package exported with aot_inductor.link_libtorch=False.
// Usage: cpp-aoti MODEL.pt2   ->  {"logits": [[...], ...]} on stdout
#include <torch/csrc/inductor/aoti_package/model_package_loader.h>

#include <cstdlib>
#include <stdexcept>
#include <filesystem>
#include <fstream>

#include "common.h"

// The loader unpacks the package into $TMPDIR/aotinductor_XXXXXX and removes it on success, but
// leaves it behind when loading fails part-way (e.g. a ZIP that holds no model). So: one private
// folder per run under the caller's TMPDIR, handed to the loader via TMPDIR, removed on every exit.
struct PrivateTmp {
  std::string dir;
  PrivateTmp() {
    const char* base = std::getenv("TMPDIR");
    std::string templ = std::string(base && *base ? base : "/tmp") + "/deploytui-cpp-aoti-XXXXXX";
    if (::mkdtemp(templ.data()) != nullptr) {
      dir = templ;
      ::setenv("TMPDIR", dir.c_str(), 1);
    }
  }
  ~PrivateTmp() {
    std::error_code ec;
    if (!dir.empty()) std::filesystem::remove_all(dir, ec);
  }
};

int main(int argc, char** argv) {
  if (argc != 2) return a1::fail("usage: cpp-aoti MODEL.pt2");
  const std::string path = argv[1];
  if (!std::ifstream(path).good()) return a1::fail("cannot open model file: " + path);
  PrivateTmp tmp;
  return a1::run_guarded([&] {
    // (path, model_name, run_single_threaded, num_runners, device_index)
    torch::inductor::AOTIModelPackageLoader loader(path, "model", false, 1, -1);
    std::vector<at::Tensor> out = loader.run({a1::reference_input()});
    if (out.empty()) throw std::runtime_error("the package returned no outputs");
    return out[0];
  });
}
