// Runs an AOTInductor package (.pt2) with torch::inductor::AOTIModelPackageLoader on the inputs.
// Works with the default package (its .so NEEDs libtorch.so, found through this executable's
// DT_RPATH) and with a package exported with aot_inductor.link_libtorch=False.
// Usage: cpp-aoti MODEL.pt2 --inputs IN.safetensors --outputs OUT.safetensors [--repeat K]
// The package takes its inputs as one flat list in the order torch.export flattened args and
// kwargs (the inputs file's call order; with AOTI_RUNTIME_CHECK_INPUTS each one's dtype and shape
// is checked) and returns its outputs flattened (its out_spec describes the nesting): output_0, ...
#include <torch/csrc/inductor/aoti_package/model_package_loader.h>

#include <cstdlib>
#include <filesystem>
#include <memory>

#include "common.h"

namespace {

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

}  // namespace

int main(int argc, char** argv) {
  const std::string usage =
      "usage: cpp-aoti MODEL.pt2 --inputs IN.safetensors --outputs OUT.safetensors [--repeat K] [--warmup W] [--threads T]";
  // The generated model checks each input's dtype, sizes, strides and device only when this is
  // set; without it a wrong input is read as if it were right. The caller may set it to 0.
  ::setenv("AOTI_RUNTIME_CHECK_INPUTS", "1", 0);
  PrivateTmp tmp;
  return runner::run_main(argc, argv, usage, [](const std::string& path) -> runner::Forward {
    // (path, model_name, run_single_threaded, num_runners, device_index)
    auto loader = std::make_shared<torch::inductor::AOTIModelPackageLoader>(path, "model", false, 1, -1);
    return [loader](const std::vector<runner::Named>& inputs) {
      return runner::positional(loader->run(runner::tensors(inputs)));
    };
  });
}
