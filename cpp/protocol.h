// The runner protocol without libtorch: arguments, the inputs file's naming, stage times and the
// one stdout line, the quiet error handling. common.h (the libtorch runners) and executorch_run.cpp
// both build on it. Header-only: each program is one translation unit plus these headers.
//
//   PROGRAM MODEL --inputs IN.safetensors --outputs OUT.safetensors [--repeat K] [--warmup W] [--threads T]
//
// See cpp/README.md for the protocol.
#pragma once

#include <algorithm>
#include <charconv>
#include <chrono>
#include <cstdio>
#include <fstream>
#include <map>
#include <optional>
#include <stdexcept>
#include <string>
#include <string_view>
#include <vector>

#include <sys/mman.h>
#include <time.h>
#include <unistd.h>

#include "safetensors.h"

namespace runner {

// ---- errors and quiet stderr ----

// The line of a libtorch message worth showing. Usually the first non-empty line (c10::Error
// messages carry a backtrace after it). An error raised inside the TorchScript interpreter reads
//   The following operation failed in the TorchScript interpreter.
//   Traceback of TorchScript, serialized code (most recent call last):
//     File "code/__torch__.py", line 10, in forward
//     ...
//   RuntimeError: mat1 and mat2 must have the same dtype, but got Long and Float
// and there the last unindented "...Error: ..." line is the one that says what went wrong.
inline std::string meaningful_line(const std::string& msg) {
  std::vector<std::string> lines;
  size_t start = 0;
  while (start <= msg.size()) {
    size_t end = msg.find('\n', start);
    if (end == std::string::npos) end = msg.size();
    std::string line = msg.substr(start, end - start);
    while (!line.empty() && (line.back() == '\r' || line.back() == ' ')) line.pop_back();
    if (!line.empty()) lines.push_back(line);
    start = end + 1;
  }
  if (lines.empty()) return "unknown error";
  if (lines[0].starts_with("The following operation failed in the TorchScript interpreter")) {
    for (auto it = lines.rbegin(); it != lines.rend(); ++it) {
      const std::string& l = *it;
      const size_t colon = l.find(": ");
      if (l[0] != ' ' && colon != std::string::npos && colon >= 5 &&
          l.compare(colon - 5, 5, "Error") == 0 && l.find(' ') > colon - 5) {
        return l;
      }
    }
  }
  return lines[0];
}

// One line on stderr, exit status 1.
inline int fail(const std::string& what) {
  std::fprintf(stderr, "error: %s\n", meaningful_line(what).c_str());
  return 1;
}

// Holds back what is written straight to fd 2 while the model loads and runs: the AOTI runtime,
// for one, prints "Error: ..." and an empty line to std::cerr before the loader throws the same
// message as an exception. The held text goes to an anonymous memfd; `release(true)` replays each
// non-empty line as one "warning: ..." line (after a successful run), `release(false)` drops it.
class StderrHold {
 public:
  StderrHold() {
    std::fflush(stderr);
    fd_ = ::memfd_create("deploytui-stderr", 0);
    saved_ = fd_ >= 0 ? ::dup(2) : -1;
    if (saved_ < 0 || ::dup2(fd_, 2) < 0) close_all();
  }
  ~StderrHold() { release(false); }
  StderrHold(const StderrHold&) = delete;
  StderrHold& operator=(const StderrHold&) = delete;

  void release(bool replay) {
    if (saved_ < 0) return;
    std::fflush(stderr);
    ::dup2(saved_, 2);
    if (replay) {
      std::string text;
      char buf[4096];
      ::lseek(fd_, 0, SEEK_SET);
      for (ssize_t n; (n = ::read(fd_, buf, sizeof buf)) > 0;) text.append(buf, static_cast<size_t>(n));
      size_t start = 0;
      while (start < text.size()) {
        size_t end = text.find('\n', start);
        if (end == std::string::npos) end = text.size();
        const std::string line = text.substr(start, end - start);
        if (line.find_first_not_of(" \t\r") != std::string::npos) std::fprintf(stderr, "warning: %s\n", line.c_str());
        start = end + 1;
      }
    }
    close_all();
  }

 private:
  void close_all() {
    if (saved_ >= 0) ::close(saved_);
    if (fd_ >= 0) ::close(fd_);
    saved_ = fd_ = -1;
  }
  int fd_ = -1;
  int saved_ = -1;
};

// ---- arguments ----

constexpr int kMaxRepeat = 10000;  // --repeat and --warmup at most this: the line stays bounded

struct Args {
  std::string model;
  std::optional<std::string> inputs;
  std::string outputs;
  int repeat = 10;
  int warmup = 0;
  int threads = 1;
};

struct UsageError : std::runtime_error {
  using std::runtime_error::runtime_error;
};

// A whole number from `least` to kMaxRepeat, or the usage error.
inline int count_flag(std::string_view flag, const std::string& value, int least) {
  int k = -1;
  const auto [end, ec] = std::from_chars(value.data(), value.data() + value.size(), k);
  if (ec != std::errc() || end != value.data() + value.size() || k < least || k > kMaxRepeat) {
    throw UsageError(std::string(flag) + " wants a whole number from " + std::to_string(least) + " to " +
                     std::to_string(kMaxRepeat) + ", not '" + value + "'");
  }
  return k;
}

inline Args parse_args(int argc, char** argv, const std::string& usage) {
  Args a;
  bool have_model = false, have_outputs = false;
  std::vector<std::string_view> seen;
  for (int i = 1; i < argc; ++i) {
    const std::string_view arg = argv[i];
    if (arg == "--inputs" || arg == "--outputs" || arg == "--repeat" || arg == "--warmup" || arg == "--threads") {
      if (i + 1 >= argc) throw UsageError(std::string(arg) + " needs a value; " + usage);
      if (std::find(seen.begin(), seen.end(), arg) != seen.end()) throw UsageError(std::string(arg) + " given twice; " + usage);
      seen.push_back(arg);
      const std::string value = argv[++i];
      if (arg == "--inputs") {
        a.inputs = value;
      } else if (arg == "--outputs") {
        a.outputs = value;
        have_outputs = true;
      } else if (arg == "--repeat") {
        a.repeat = count_flag(arg, value, 0);
      } else if (arg == "--warmup") {
        a.warmup = count_flag(arg, value, 0);
      } else {
        a.threads = count_flag(arg, value, 1);
      }
    } else if (arg.starts_with("--")) {
      throw UsageError("unknown option " + std::string(arg) + "; " + usage);
    } else if (!have_model) {
      a.model = std::string(arg);
      have_model = true;
    } else {
      throw UsageError(usage);
    }
  }
  if (!have_model) throw UsageError(usage);
  if (!a.inputs || !have_outputs) throw UsageError("--inputs and --outputs are required; " + usage);
  return a;
}

// ---- the inputs file ----

// input_N with N in decimal, no leading zeros; -1 for any other name.
inline long input_index(std::string_view name) {
  constexpr std::string_view kPrefix = "input_";
  if (!name.starts_with(kPrefix)) return -1;
  const std::string_view digits = name.substr(kPrefix.size());
  if (digits.empty() || digits.size() > 6 || (digits.size() > 1 && digits[0] == '0')) return -1;
  long n = 0;
  for (const char c : digits) {
    if (c < '0' || c > '9') return -1;
    n = n * 10 + (c - '0');
  }
  return n;
}

// The inputs file's tensors in call order (views into `f`): as its __metadata__ "inputs" lists
// them (comma-joined names: input_0, input_1, ... positional, then keywords such as
// attention_mask), else input_0, input_1, ... by number. Any problem is one line that names the file.
inline std::vector<const st::TensorView*> ordered_inputs(const st::File& f, const std::string& path) {
  const std::string where = "inputs file " + path + ": ";
  std::vector<const st::TensorView*> inputs;
  const auto listed = f.metadata.find("inputs");
  if (listed != f.metadata.end()) {
    std::vector<std::string> names;
    size_t start = 0;
    while (start <= listed->second.size() && !listed->second.empty()) {
      size_t end = listed->second.find(',', start);
      if (end == std::string::npos) end = listed->second.size();
      names.push_back(listed->second.substr(start, end - start));
      start = end + 1;
    }
    for (const std::string& name : names) {
      const auto it = std::find_if(f.tensors.begin(), f.tensors.end(), [&](const st::TensorView& t) { return t.name == name; });
      if (it == f.tensors.end()) throw std::runtime_error(where + "its metadata lists " + st::quote_name(name) + ", which it does not hold");
      inputs.push_back(&*it);
    }
    if (inputs.size() != f.tensors.size()) throw std::runtime_error(where + "holds tensors its metadata does not list");
    if (inputs.empty()) throw std::runtime_error(where + "no inputs");
    return inputs;
  }
  std::map<long, const st::TensorView*> by_index;
  for (const st::TensorView& t : f.tensors) {
    const long n = input_index(t.name);
    if (n < 0) throw std::runtime_error(where + "unexpected tensor " + st::quote_name(t.name) + " (inputs are named input_0, input_1, ...)");
    by_index[n] = &t;
  }
  for (const auto& [n, t] : by_index) {
    if (n != static_cast<long>(inputs.size())) {
      throw std::runtime_error(where + "no tensor named input_" + std::to_string(inputs.size()));
    }
    inputs.push_back(t);
  }
  if (inputs.empty()) throw std::runtime_error(where + "no tensor named input_0");
  return inputs;
}

inline st::File read_inputs_file(const std::string& path) {
  try {
    return st::read_file(path);
  } catch (const st::Error& e) {
    throw std::runtime_error(std::string("inputs file ") + e.what());
  }
}

// ---- the protocol run ----

inline double ms_since(std::chrono::steady_clock::time_point t0) {
  return std::chrono::duration<double, std::milli>(std::chrono::steady_clock::now() - t0).count();
}

inline double median(std::vector<double> v) {
  std::sort(v.begin(), v.end());
  const size_t n = v.size();
  return n % 2 ? v[n / 2] : (v[n / 2 - 1] + v[n / 2]) / 2.0;
}

// The process's CPU time (all its threads), ms.
inline double cpu_ms() {
  timespec ts{};
  ::clock_gettime(CLOCK_PROCESS_CPUTIME_ID, &ts);
  return static_cast<double>(ts.tv_sec) * 1e3 + static_cast<double>(ts.tv_nsec) / 1e6;
}

// What the timed forwards measured: the first forward; after `warmup` untimed ones, each of the
// `repeat` timed alone (steady_clock around the call); the process's CPU time and the wall time
// over those `repeat` (-1 when there are none).
struct Timing {
  double first_ms = 0;
  int warmup = 0;
  std::vector<double> forward_ms;
  double cpu_ms = -1;
  double loop_ms = -1;
};

// Runs `forward()` 1 + warmup + repeat times as the protocol says (see Timing).
template <typename Forward>
Timing timed_forwards(const Args& a, Forward&& forward) {
  Timing t;
  auto t0 = std::chrono::steady_clock::now();
  forward();
  t.first_ms = ms_since(t0);
  for (int k = 0; k < a.warmup; ++k) forward();
  t.warmup = a.warmup;
  t.forward_ms.reserve(static_cast<size_t>(a.repeat));
  const double cpu0 = cpu_ms();
  const auto wall0 = std::chrono::steady_clock::now();
  for (int k = 0; k < a.repeat; ++k) {
    t0 = std::chrono::steady_clock::now();
    forward();
    t.forward_ms.push_back(ms_since(t0));
  }
  if (a.repeat > 0) {
    t.cpu_ms = cpu_ms() - cpu0;
    t.loop_ms = ms_since(wall0);
  }
  return t;
}

inline std::string json_ms(double v) {
  if (v < 0) return "null";
  char buf[32];
  std::snprintf(buf, sizeof buf, "%.6f", v);
  return buf;
}

// The protocol's stdout line; `threads_reported` < 0: the runtime reports none.
inline void print_stages(double load_ms, const Timing& t, size_t outputs, int threads_requested, int threads_reported) {
  std::string times;
  for (const double x : t.forward_ms) times += (times.empty() ? "" : ", ") + json_ms(x);
  const std::string steady = t.forward_ms.empty() ? "null" : json_ms(median(t.forward_ms));
  const std::string reported = threads_reported < 0 ? "null" : std::to_string(threads_reported);
  std::printf(
      "{\"stages_ms\": {\"load\": %.6f, \"first_forward\": %.6f, \"steady_forward\": %s}, \"outputs\": %zu, "
      "\"warmup\": %d, \"forward_ms\": [%s], \"cpu_ms\": %s, \"loop_ms\": %s, "
      "\"threads\": {\"requested\": %d, \"reported\": %s}}\n",
      load_ms, t.first_ms, steady.c_str(), outputs, t.warmup, times.c_str(), json_ms(t.cpu_ms).c_str(),
      json_ms(t.loop_ms).c_str(), threads_requested, reported.c_str());
  std::fflush(stdout);
}

// main() of every C++ runner: parse the arguments, check the model file opens, hold back what the
// runtime logs to stderr (replayed as warnings after a good run: `run` releases it), and turn any
// exception into one `error:` line and exit 1. `run(args, hold)` does the rest of the protocol.
template <typename Run>
int held_main(int argc, char** argv, const std::string& usage, Run&& run) {
  Args a;
  try {
    a = parse_args(argc, argv, usage);
  } catch (const UsageError& e) {
    return fail(e.what());
  }
  if (!std::ifstream(a.model).good()) return fail("cannot open model file: " + a.model);
  StderrHold hold;
  try {
    run(a, hold);
    return 0;
  } catch (const std::exception& e) {
    hold.release(false);
    return fail(e.what());
  } catch (...) {
    hold.release(false);
    return fail("unknown exception");
  }
}

}  // namespace runner
