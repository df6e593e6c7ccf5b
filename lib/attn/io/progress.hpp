// The drill's progress file: per-topic accuracy, missed questions and past sessions, in one
// small text file with a header that says not to edit it. Written atomically (a unique
// temporary beside it, then a rename) under a lock, so concurrent sessions add up; a corrupt
// progress file is moved aside as a backup, never silently lost. Anything that is not ours (a
// folder, a device, a FIFO, a file without the header) is never moved, replaced or deleted.
#pragma once
#include <cstddef>
#include <functional>
#include <map>
#include <string>
#include <utility>
#include <vector>

namespace attn::drill {

// What the learner has done so far: the file's content (drill.hpp's plan_session reads it to
// favour weak topics and missed questions; drill::record adds an answer to it).
struct progress {
    std::map<std::string, std::pair<int, int>> topics;  // topic -> (asked, right)
    std::map<std::string, int> missed;  // question id -> times missed (not yet answered right)
    std::vector<std::string> sessions;  // "2026-11-29T10:00Z 7/10"
    std::vector<std::string> exercises;  // passed `check`s: "sdpa seed 5 2026-12-01T10:00:00Z 12.5/20 min"
    std::vector<std::string> lessons;  // `course` lessons done, by id, in the order they were done
};

// $XDG_STATE_HOME/attn-explain/drill-progress.txt (XDG_STATE_HOME only when absolute, as the XDG
// spec says), else ~/.local/state/attn-explain/drill-progress.txt; "" when neither is set.
std::string default_state_path();

// Where this session keeps its progress.
struct state_file {
    std::string path;
    bool create_parent = false;  // the default path's folder is ours to create; --state's must exist
};
// --state as given, or the default. Throws attn::error (one line, what to do) when there is no
// default, when --state's folder does not exist, or when the path exists and is not a regular file.
state_file resolve_state(const std::string& flag);

// The most a progress file may hold (it is a few KiB in practice).
inline constexpr std::size_t max_progress_bytes = std::size_t{1} << 20;

struct load_result {
    progress data;
    std::string warning;  // non-empty when the file was unreadable or corrupt (then data is empty)
};
// A missing file is an empty progress, not a warning. A corrupt progress file (one that starts
// with the header) is renamed to <path>.corrupt-<n> and reported. Throws attn::error for a path
// that is not a regular file or a file that is not a progress file (neither is touched).
load_result load_progress(const std::string& path);
// Writes `p` through a unique temporary and a rename. Returns a warning instead of throwing when
// the file cannot be written.
std::string save_progress(const std::string& path, const progress& p, bool create_parent = false);
// Under an exclusive lock (flock on <path>.lock): reads the file again, applies `update` and
// writes it back, so that sessions running at the same time all count. Returns a warning, or "".
std::string update_progress(const state_file& f, const std::function<void(progress&)>& update);
// Runs `body` under an exclusive lock (flock on <path>.lock, created beside `path`, and its folder
// too with create_parent); a lock file that is not a regular file is never used. Returns body's
// warning, or why nothing was saved: "cannot lock the `what` PATH: …: `lost` was not saved".
std::string with_file_lock(const std::string& path, bool create_parent, const std::string& what,
                           const std::string& lost, const std::function<std::string()>& body);
// --reset: removes the progress file (a regular file only). False when there was none.
bool reset_progress(const std::string& path);

std::string serialize(const progress& p);
// Throws attn::error with the line number on anything unexpected.
progress parse_progress(const std::string& text);

}  // namespace attn::drill
