// Shared by the two runners: the A1 reference input and the JSON printing.
// Header-only on purpose: each program is one translation unit plus this file.
#pragma once

#include <ATen/ATen.h>
#include <ATen/Parallel.h>
#include <c10/util/Exception.h>
#include <c10/util/Logging.h>

#include <cstdio>
#include <exception>
#include <string>
#include <vector>

namespace a1 {

constexpr int64_t kBatch = 4;
constexpr int64_t kIn = 4;

// The [4, 4] reference input, exactly as deploytui/a1.py builds it:
// element k (row-major) is 0.1*k - 0.5, computed in double, stored as float.
inline at::Tensor reference_input() {
  at::Tensor x = at::empty({kBatch, kIn}, at::kFloat);
  float* p = x.data_ptr<float>();
  for (int64_t k = 0; k < kBatch * kIn; ++k) {
    p[k] = static_cast<float>(0.1 * static_cast<double>(k) - 0.5);
  }
  return x;
}

// Prints {"logits": [[...], ...]} on one line. %.9g of a float is round-trip for f32,
// so the parsed value equals the computed float bit for bit.
inline void print_logits(const at::Tensor& y_in) {
  at::Tensor y = y_in.to(at::kFloat).contiguous();
  const int64_t rows = y.size(0);
  const int64_t cols = y.size(1);
  const float* p = y.data_ptr<float>();
  std::string out = "{\"logits\": [";
  char buf[32];
  for (int64_t r = 0; r < rows; ++r) {
    out += (r ? ", [" : "[");
    for (int64_t c = 0; c < cols; ++c) {
      std::snprintf(buf, sizeof buf, "%.9g", static_cast<double>(p[r * cols + c]));
      if (c) out += ", ";
      out += buf;
    }
    out += "]";
  }
  out += "]}\n";
  std::fputs(out.c_str(), stdout);
  std::fflush(stdout);
}

// stderr carries at most one line per problem: libtorch's own chatter is kept off it.
// LOG(WARNING) lines (e.g. the AOTI loader's multi-line "outdated pt2 archive" notice, which
// lists every ZIP member) are dropped via the log level; TORCH_WARN messages are collected and,
// after a successful run only, printed as one "warning: ..." line each.
class QuietWarnings : public c10::WarningHandler {
 public:
  void process(const c10::Warning& w) override { messages.push_back(w.msg()); }
  std::vector<std::string> messages;
};

inline void quiet_logging() { FLAGS_caffe2_log_level = 2; /* ERROR and above only */ }

inline void print_warnings(const QuietWarnings& q) {
  for (const std::string& m : q.messages) {
    std::fprintf(stderr, "warning: %s\n", m.substr(0, m.find('\n')).c_str());
  }
}

// One line on stderr: the first line of the message (c10::Error messages carry a backtrace).
inline int fail(const std::string& what) {
  std::string line = what.substr(0, what.find('\n'));
  std::fprintf(stderr, "error: %s\n", line.c_str());
  return 1;
}

// The part both programs share around their own load + forward: one thread, inference mode,
// libtorch's chatter kept off stderr, the logits printed as JSON; any exception becomes one
// `error:` line and exit 1. `forward` loads the model and returns the logits tensor.
template <typename Forward>
int run_guarded(Forward&& forward) {
  quiet_logging();
  QuietWarnings warnings;
  c10::WarningUtils::WarningHandlerGuard warning_guard(&warnings);
  try {
    at::set_num_threads(1);
    c10::InferenceMode guard;
    at::Tensor y = forward();
    print_warnings(warnings);
    print_logits(y);
    return 0;
  } catch (const c10::Error& e) {
    return fail(e.what_without_backtrace());
  } catch (const std::exception& e) {
    return fail(e.what());
  } catch (...) {
    return fail("unknown exception");
  }
}

}  // namespace a1
