// Writing a folder of files all or nothing, keeping what was there (`exercise`, `exercise --force`).
//
// A new folder is built in a hidden sibling (.NAME.partial-XXXXXX) and renamed into place, so an
// interrupted run leaves no half-made folder under the name. An existing folder is written file
// by file, each through a temporary beside it that is renamed over the old name; every file that
// is replaced, and every stale entry named by the plan, is first moved into a backup folder
// `backup-<UTC time>/` inside the folder (same relative path), so nothing the learner had is
// deleted. Subfolders are opened with O_NOFOLLOW|O_DIRECTORY and entries are handled with the
// *at() calls on those descriptors: a symbolic link where a subfolder should be is refused,
// never followed. A failure undoes what was done (the backups move back), and SIGINT, SIGTERM,
// SIGHUP and SIGQUIT wait until the folder is whole; SIGXFSZ is ignored meanwhile so that a file
// size limit is a write error (EFBIG), not a kill.
#pragma once
#include <string>
#include <vector>

#include "attn/core/error.hpp"

namespace attn::folder {

struct file {
    std::string name;  // relative: "TASK.md" or "inputs/X.npy" or "cases/1/inputs/X.npy"
    std::string bytes;  // written as mode 0666 & ~umask
};

struct plan {
    std::vector<file> files;
    std::vector<std::string> stale;  // relative names moved to the backup if present (any kind of entry)
};

struct outcome {
    bool created = false;  // the folder did not exist before
    std::string backup;  // "backup-20261202T112745Z" (relative to the folder), empty when none
    std::vector<std::string> moved;  // relative names now inside the backup
};

// Why a write was refused or failed; `path` is the full path of the entry concerned. The caller
// phrases the message (app/ reads it from the lessons); what() is a plain English fallback.
struct failure : error {
    enum class kind {
        not_regular,  // a file to replace is a link, FIFO, device or folder: left alone
        not_folder,  // the folder, or a subfolder, is not a real folder (e.g. a symbolic link)
        cannot_create,  // a folder could not be made
        cannot_write,  // writing a file failed (full disk, size limit, permissions)
        cannot_move  // moving an entry into the backup failed
    };
    kind problem;
    std::string path, reason;
    failure(kind k, std::string p, std::string r);
};

// `stamp` names the backup folder: "backup-" + stamp (a suffix -2, -3, … when it exists).
// Throws failure; when it does, the folder is as it was before the call.
outcome write(const std::string& dir, const plan& p, const std::string& stamp);

}  // namespace attn::folder
