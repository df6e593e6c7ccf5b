// `check --run`: what a learner's failed run printed, read. The Python traceback's frame in the
// learner's file (its line number and code), the error, and for a shape error the sizes it
// gives, named by the exercise's dimensions when one name fits a size ("n=5", "d_k=3"), so the
// page can say "line 12, Q @ K: K is (n=5, d_k=3), so Q @ K needs K's transpose". Pure text
// analysis; the sentences live in lessons/<lang>/exercise.toml under [run].
#pragma once
#include <map>
#include <string>
#include <vector>

#include "attn/trace/exercise.hpp"

namespace attn::exercise {

struct traceback_info {
    bool found = false;  // a Python traceback was printed
    std::string file;  // the learner's file of the deepest frame in it (else the last frame's)
    long line = 0;
    std::string code;  // that line, as the traceback shows it
    std::string error;  // "ValueError: matmul: …", the last line
    // A shape error explained: lesson key "run.<key>" and its placeholders ("" when none fits).
    std::string key;
    std::map<std::string, std::string> args;
};

// One run of the learner's solution by `check --run`.
struct run_record {
    std::string command, dir;
    int exit_code = 0;  // -1 when killed
    bool timed_out = false;
    double seconds = 0, timeout = 0;
    std::string output;  // stdout and stderr
    traceback_info traceback;
    bool failed() const { return timed_out || exit_code != 0; }
};

// `output` is the run's stderr (and stdout); `learner_files` the file names (no folder) that
// are the learner's own, e.g. solution_numpy.py.
traceback_info read_traceback(const std::string& output, const config& c,
                              const std::vector<std::string>& learner_files);

}  // namespace attn::exercise
