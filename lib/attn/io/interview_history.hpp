// The mock interviews taken (`attn-explain interview --history`): one line a session, in a file
// beside the drill's progress file (interview-history.txt in its folder), with the progress file's
// safety rules: a header that says not to edit it, written whole through a unique temporary and a
// rename under a lock, so sessions at the same time all count; a corrupt history (one with our
// header) is moved aside as a backup; anything else (a folder, a FIFO, a file without the header)
// is never moved, replaced or deleted.
#pragma once
#include <string>
#include <vector>

namespace attn::interview {

struct record {
    std::string date;  // "2026-12-06T14:30Z"
    std::string level;
    int score = 0, max_score = 0;
    bool partial = false;  // ended before its last part (the end of input, or q)
    std::string dir;  // the interview's folder, as given
};

// interview-history.txt beside the progress file `state_path`.
std::string history_path(const std::string& state_path);

std::string serialize_history(const std::vector<record>& rs);
// Throws attn::error with the line number on anything unexpected.
std::vector<record> parse_history(const std::string& text);

struct history_load {
    std::vector<record> records;
    std::string warning;  // a corrupt history was moved aside (then records is empty)
};
// A missing file is no history. Throws attn::error for a path that is not a regular file, or a
// file that is not a history (neither is touched).
history_load load_history(const std::string& path);
// Adds `r` under the lock (reading the file again first). Returns a warning, or "".
std::string append_history(const std::string& path, bool create_parent, const record& r);

}  // namespace attn::interview
