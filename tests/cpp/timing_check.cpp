// Test harness for the timed forwards of cpp/protocol.h (no libtorch), built by
// tests/test_serving_protocol.py. `timing_check spin|sleep MS MODEL --inputs I --outputs O
// [--repeat K] [--warmup W] [--threads T]`: each forward spins (burns MS milliseconds of this
// thread's CPU time) or sleeps MS milliseconds; prints the protocol's stdout line (no inputs
// are read, no outputs written).
#include <chrono>
#include <string>
#include <thread>

#include "protocol.h"

int main(int argc, char** argv) {
  if (argc < 3) return runner::fail("usage: timing_check spin|sleep MS MODEL --inputs I --outputs O ...");
  const std::string mode = argv[1];
  const double ms = std::stod(argv[2]);
  runner::Args a;
  try {
    a = runner::parse_args(argc - 2, argv + 2, "timing_check spin|sleep MS MODEL ...");
  } catch (const runner::UsageError& e) {
    return runner::fail(e.what());
  }
  const auto thread_ms = [] {
    timespec ts{};
    ::clock_gettime(CLOCK_THREAD_CPUTIME_ID, &ts);
    return static_cast<double>(ts.tv_sec) * 1e3 + static_cast<double>(ts.tv_nsec) / 1e6;
  };
  const auto forward = [&] {
    if (mode == "sleep") {
      std::this_thread::sleep_for(std::chrono::duration<double, std::milli>(ms));
      return;
    }
    const double t0 = thread_ms();
    while (thread_ms() - t0 < ms) {
    }
  };
  runner::print_stages(0.0, runner::timed_forwards(a, forward), 0, a.threads, -1);
  return 0;
}
