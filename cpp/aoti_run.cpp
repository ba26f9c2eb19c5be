// Runs an AOTInductor package (.pt2) with torch::inductor::AOTIModelPackageLoader on A1's
// reference input once. Works with the default package (its .so NEEDs libtorch.so, found through
// this executable's DT_RPATH) and with a package exported with aot_inductor.link_libtorch=False.
// Usage: cpp-aoti MODEL.pt2   ->  {"logits": [[...], ...]} on stdout
#include <ATen/Parallel.h>
#include <torch/csrc/inductor/aoti_package/model_package_loader.h>

#include <cstdlib>
#include <exception>
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
  a1::quiet_logging();
  a1::QuietWarnings warnings;
  c10::WarningUtils::WarningHandlerGuard warning_guard(&warnings);
  try {
    at::set_num_threads(1);
    c10::InferenceMode guard;
    // (path, model_name, run_single_threaded, num_runners, device_index)
    torch::inductor::AOTIModelPackageLoader loader(path, "model", false, 1, -1);
    std::vector<at::Tensor> out = loader.run({a1::reference_input()});
    if (out.empty()) return a1::fail("the package returned no outputs");
    a1::print_warnings(warnings);
    a1::print_logits(out[0]);
    return 0;
  } catch (const c10::Error& e) {
    return a1::fail(e.what_without_backtrace());
  } catch (const std::exception& e) {
    return a1::fail(e.what());
  } catch (...) {
    return a1::fail("unknown exception");
  }
}
