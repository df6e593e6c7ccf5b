// `check --run` and `--watch`: running the learner's solution in the exercise folder, with a
// time limit, its stdout and stderr captured together. Only app/ starts processes.
#pragma once
#include <string>
#include <vector>

namespace app {

struct process_result {
    std::string output;  // stdout and stderr, interleaved as written (at most 1 MiB kept)
    int exit_code = -1;  // -1: killed by a signal (the time limit's included)
    bool timed_out = false;
    double seconds = 0;
};

// Runs argv (argv[0] looked up in PATH) in `dir`, its standard input /dev/null; after
// `timeout_seconds` the process and its children are killed. Throws attn::error when it
// cannot be started at all.
process_result run_process(const std::vector<std::string>& argv, const std::string& dir, double timeout_seconds);

// The modification time of a file in nanoseconds (0 when it does not exist).
long long modified_ns(const std::string& path);

}  // namespace app
