// Hostile folders and files (issue 27): exercise folders full of links, FIFOs and device nodes,
// interrupted and failing writes, --force's backup. Every case builds its own private files in a
// temporary folder; device nodes are made with mknod when permitted (root), else skipped.
#include <chrono>
#include <filesystem>
#include <fstream>
#include <string>

#include <catch2/catch.hpp>
#include <sys/resource.h>
#include <sys/stat.h>
#include <sys/sysmacros.h>
#include <unistd.h>

#include "files.hpp"
#include "attn/io/npy.hpp"
#include "attn/io/npz.hpp"
#include "attn/trace/exercise.hpp"
#include "cli_helpers.hpp"
#include "zip_builder.hpp"

namespace fs = std::filesystem;
namespace ex = attn::exercise;

namespace {

using test::exe;

using test::temp_dir;

using test::sh;

using test::slurp;
void spit(const fs::path& p, const std::string& text) { std::ofstream(p, std::ios::binary) << text; }

// Every entry under `root` (relative path -> bytes, or "<link>"/"<dir>"/"<other>"), to compare
// a folder before and after a refused or failed command.
std::map<std::string, std::string> snapshot(const fs::path& root) {
    std::map<std::string, std::string> m;
    for (auto it = fs::recursive_directory_iterator(root); it != fs::recursive_directory_iterator(); ++it) {
        const std::string rel = fs::relative(it->path(), root).string();
        const auto st = it->symlink_status();
        if (fs::is_symlink(st)) m[rel] = "<link>";
        else if (fs::is_directory(st))
            m[rel] = "<dir>";
        else if (fs::is_regular_file(st))
            m[rel] = slurp(it->path());
        else
            m[rel] = "<other>";
    }
    return m;
}

// Hidden leftovers of an interrupted write (.NAME.partial-…, .FILE.tmp-…) anywhere under `root`.
int leftovers(const fs::path& root) {
    int n = 0;
    for (auto it = fs::recursive_directory_iterator(root); it != fs::recursive_directory_iterator(); ++it) {
        const std::string name = it->path().filename().string();
        if (name.find(".partial-") != std::string::npos || name.find(".tmp-") != std::string::npos) ++n;
    }
    return n;
}

using test::count;

// A character device node of our own, or "" when mknod is not permitted (not root).
std::string make_device_of(const std::string& path, unsigned major, unsigned minor) {
    if (::mknod(path.c_str(), S_IFCHR | 0600, makedev(major, minor)) != 0) return "";
    return path;
}
// The null device's numbers.
std::string make_device(const std::string& path) { return make_device_of(path, 1, 3); }

}  // namespace

TEST_CASE("exercise --force never deletes through an answer link", "[exercise][hostile]") {
    temp_dir t;
    const std::string d = t / "ex";
    REQUIRE(sh(exe + " exercise sdpa --seed 5 --dir " + d).code == 0);
    // the learner's other folder, holding files of the answers' names
    fs::create_directories(t.path / "elsewhere");
    for (const char* f : {"output.npy", "weights.npy", "Q.npy", "K.npy", "V.npy", "scores.npy"})
        spit(t.path / "elsewhere" / f, std::string("precious ") + f);
    fs::create_directory_symlink(t.path / "elsewhere", fs::path(d) / "answer");
    const auto before = snapshot(t.path);
    const auto r = sh(exe + " exercise sdpa --seed 6 --force --dir " + d);
    INFO(r.out);
    CHECK(r.code == 2);
    CHECK_THAT(r.out, Catch::Contains(d + "/answer") && Catch::Contains("not a folder"));
    CHECK(count(r.out, "\n") == 1);
    CHECK(snapshot(t.path) == before);  // nothing changed, here or through the link
    // a link to a file, a FIFO or a device node where answer/ or inputs/ should be: refused alike
    fs::remove(fs::path(d) / "answer");
    spit(t.path / "file", "a file");
    const std::string dev = make_device(t / "dev");
    std::vector<std::pair<std::string, std::string>> cases = {
        {"answer", "link-file"}, {"answer", "fifo"}, {"inputs", "link-dir"}};
    if (!dev.empty()) cases.push_back({"answer", "link-dev"}), cases.push_back({"answer", "dev"});
    else
        WARN("mknod is not permitted here: the device-node cases are skipped");
    for (const auto& [where, kind] : cases) {
        INFO(where << " as " << kind);
        const fs::path p = fs::path(d) / where;
        fs::path saved = t.path / ("saved-" + where);
        if (where == "inputs") fs::rename(p, saved);
        if (kind == "link-file") fs::create_symlink(t.path / "file", p);
        if (kind == "link-dir") fs::create_directory_symlink(t.path / "elsewhere", p);
        if (kind == "link-dev") fs::create_symlink(dev, p);
        if (kind == "fifo") REQUIRE(::mkfifo(p.c_str(), 0600) == 0);
        if (kind == "dev") REQUIRE(::mknod(p.c_str(), S_IFCHR | 0600, makedev(1, 3)) == 0);
        const auto snap = snapshot(t.path);
        const auto k = sh("timeout 20 " + exe + " exercise sdpa --seed 6 --force --dir " + d);
        INFO(k.out);
        CHECK(k.code == 2);
        CHECK_THAT(k.out, Catch::Contains("not a folder"));
        CHECK(snapshot(t.path) == snap);
        fs::remove(p);
        if (where == "inputs") fs::rename(saved, p);
    }
    // a FIFO or device node named answer.npz or answer/output.npy is moved aside, never opened
    fs::create_directories(fs::path(d) / "answer");
    REQUIRE(::mkfifo((fs::path(d) / "answer.npz").c_str(), 0600) == 0);
    if (!dev.empty()) make_device((fs::path(d) / "answer" / "output.npy").string());
    const auto moved = sh("timeout 20 " + exe + " exercise sdpa --seed 6 --force --dir " + d);
    INFO(moved.out);
    CHECK(moved.code == 0);
    CHECK(!fs::exists(fs::symlink_status(fs::path(d) / "answer.npz")));
    CHECK(!fs::exists(fs::symlink_status(fs::path(d) / "answer" / "output.npy")));
    CHECK(slurp(t.path / "elsewhere" / "output.npy") == "precious output.npy");
}

TEST_CASE("exercise --force moves the learner's files to a backup folder and says so", "[exercise][hostile]") {
    temp_dir t;
    const std::string d = t / "ex";
    REQUIRE(sh(exe + " exercise sdpa --seed 5 --dir " + d).code == 0);
    const std::string old_inputs = slurp(fs::path(d) / "inputs" / "X.npy");
    const std::string starter = slurp(fs::path(d) / "solution_torch.py");
    spit(fs::path(d) / "solution_numpy.py", "# my edited solution\n");
    fs::create_directories(fs::path(d) / "answer");
    spit(fs::path(d) / "answer" / "output.npy", "my output");
    spit(fs::path(d) / "answer.npz", "my archive");
    spit(fs::path(d) / "notes.txt", "my notes");
    const auto r = sh(exe + " exercise sdpa --seed 6 --force --dir " + d + " --color never");
    INFO(r.out);
    REQUIRE(r.code == 0);
    fs::path backup;
    for (const auto& e : fs::directory_iterator(d))
        if (e.path().filename().string().rfind("backup-", 0) == 0) backup = e.path();
    REQUIRE(!backup.empty());
    // backup-YYYYMMDDTHHMMSSZ, named in the message
    CHECK(backup.filename().string().size() == std::string("backup-20261202T112745Z").size());
    CHECK_THAT(r.out, Catch::Contains(backup.filename().string()) && Catch::Contains("nothing was deleted"));
    CHECK(slurp(backup / "solution_numpy.py") == "# my edited solution\n");
    CHECK(slurp(backup / "solution_torch.py") == starter);
    CHECK(slurp(backup / "answer" / "output.npy") == "my output");
    CHECK(slurp(backup / "answer.npz") == "my archive");
    CHECK(slurp(backup / "inputs" / "X.npy") == old_inputs);
    CHECK_THAT(slurp(backup / "exercise.toml"), Catch::Contains("seed = 5"));
    // the folder holds the new exercise, the learner's other files stay, no stale answers
    CHECK_THAT(slurp(fs::path(d) / "exercise.toml"), Catch::Contains("seed = 6"));
    CHECK(slurp(fs::path(d) / "solution_numpy.py") != "# my edited solution\n");
    CHECK(slurp(fs::path(d) / "notes.txt") == "my notes");
    CHECK(!fs::exists(fs::path(d) / "answer" / "output.npy"));
    CHECK(!fs::exists(fs::path(d) / "answer.npz"));
    CHECK(leftovers(t.path) == 0);
    // again within the same second: a second backup folder, the first one untouched
    const auto again = sh(exe + " exercise sdpa --seed 7 --force --dir " + d);
    REQUIRE(again.code == 0);
    int backups = 0;
    for (const auto& e : fs::directory_iterator(d)) backups += e.path().filename().string().rfind("backup-", 0) == 0;
    CHECK(backups == 2);
    CHECK(slurp(backup / "solution_numpy.py") == "# my edited solution\n");
    // a folder without earlier files gets no backup folder
    const std::string fresh = t / "fresh";
    fs::create_directories(fresh);
    const auto none = sh(exe + " exercise sdpa --seed 6 --dir " + fresh);
    CHECK(none.code == 0);
    CHECK_THAT(none.out, !Catch::Contains("backup"));
}

TEST_CASE("exercise: a write that fails or is interrupted leaves no half-made folder", "[exercise][hostile]") {
    temp_dir t;
    // A file size limit (ulimit -f, in 512-byte blocks) makes a write fail midway: SIGXFSZ used
    // to kill the run and leave half a folder; now the write fails with EFBIG and is undone.
    const std::string d = t / "new";
    const auto big = sh("ulimit -f 1 && " + exe + " exercise sdpa --seed 5 --dir " + d);
    INFO(big.out);
    CHECK(big.code == 2);
    CHECK(count(big.out, "\n") == 1);
    CHECK_THAT(big.out, Catch::Contains("cannot write") && Catch::Contains("nothing was changed"));
    // the failing path is said once ("…/TASK.md …/TASK.md: write failed" before)
    const std::size_t at = big.out.find(d + "/");
    REQUIRE(at != std::string::npos);
    const std::string path = big.out.substr(at, big.out.find_first_of(": ", at) - at);
    CHECK(count(big.out, path) == 1);
    CHECK(!fs::exists(d));
    CHECK(leftovers(t.path) == 0);
    // --force in a folder that holds the learner's work: every file as it was, no backup folder
    const std::string ex = t / "ex";
    REQUIRE(sh(exe + " exercise sdpa --seed 5 --dir " + ex).code == 0);
    spit(fs::path(ex) / "solution_numpy.py", "# mine\n");
    fs::create_directories(fs::path(ex) / "answer");
    spit(fs::path(ex) / "answer" / "output.npy", "my output");
    const auto before = snapshot(t.path);
    const auto forced = sh("ulimit -f 1 && " + exe + " exercise causal --seed 6 --force --dir " + ex);
    INFO(forced.out);
    CHECK(forced.code == 2);
    CHECK_THAT(forced.out, Catch::Contains("nothing was changed"));
    CHECK(snapshot(t.path) == before);
    // SIGTERM at any moment: the folder is whole or absent, and nothing hidden is left behind
    for (int k = 0; k < 16; ++k) {
        const std::string target = t / ("term" + std::to_string(k));
        const std::string delay = std::to_string(0.004 * k);
        sh("timeout -s TERM " + delay + " " + exe + " exercise mha --seed 5 --dir " + target);
        INFO("after " << delay << " s");
        if (fs::exists(target)) {
            for (const char* f : {"exercise.toml", "TASK.md", "solution_numpy.py", "solution_torch.py", "inputs/X.npy"})
                CHECK(fs::is_regular_file(fs::path(target) / f));
        }
        CHECK(leftovers(t.path) == 0);
    }
}

namespace {

// The sdpa exercise at seed 5, and its correct output as .npy bytes.
std::string correct_output_npy() {
    const ex::config c = ex::make_config("sdpa", 5);
    const ex::nd out = ex::reference(c, ex::make_inputs(c)).at("output");
    return attn::npy::serialize(out.shape, out.data, attn::npy::dtype::float32);
}

// The other cases of that folder (cases/1, cases/2) answered right, so that the main case alone decides.
void answer_other_cases(const std::string& dir) {
    for (const ex::config& x : ex::all_cases(ex::make_config("sdpa", 5))) {
        if (x.index == 0) continue;
        const ex::nd out = ex::reference(x, ex::make_inputs(x)).at("output");
        fs::create_directories(fs::path(dir) / x.folder / "answer");
        attn::npy::write((fs::path(dir) / x.folder / "answer" / "output.npy").string(), out.shape, out.data,
                         attn::npy::dtype::float32);
    }
}

std::string read_error(const std::string& path, std::size_t max_elements = std::size_t{1} << 20) {
    try {
        attn::npz::read(path, attn::npy::max_file_bytes, max_elements);
    } catch (const attn::npy::error& e) {
        return e.what();
    }
    return "";
}

}  // namespace

TEST_CASE("npz: hostile archives are refused before they cost memory, with a message that says why", "[npz][hostile]") {
    temp_dir t;
    const std::string a = t / "answer.npz";
    const std::string good = correct_output_npy();
    // a correct archive, stored and deflated: read
    spit(a, test::make_zip({{"output.npy", good}, {"weights.npy", good, true}}));
    CHECK(read_error(a).empty());
    CHECK(attn::npz::read(a).size() == 2);
    // point 7: a sparse 200 MiB file is looked at by its end alone, never copied into memory (this
    // test case runs in a process of its own under ctest, so its peak memory starts small)
    { std::ofstream(a, std::ios::binary | std::ios::trunc); }
    fs::resize_file(a, std::size_t{200} << 20);
    struct rusage before {};
    ::getrusage(RUSAGE_SELF, &before);
    CHECK_THAT(read_error(a), Catch::Contains("not a readable .npz"));
    struct rusage after {};
    ::getrusage(RUSAGE_SELF, &after);
    CHECK(after.ru_maxrss - before.ru_maxrss < 100 * 1024);  // KiB
    // point 4: a deflated member whose header promises 2^24 elements (64 MiB of zeros) is refused
    // from its header, before it is inflated
    const std::string zeros(std::size_t{64} << 20, '\0');
    spit(a, test::make_zip({{"output.npy", test::npy_bytes("<f4", "(4096, 4096)", zeros), true}}));
    CHECK(fs::file_size(a) < (std::size_t{1} << 20));
    std::string e = read_error(a);
    CHECK_THAT(e,
               Catch::Contains("output.npy") && Catch::Contains("promises shape (4096, 4096)") &&
                   Catch::Contains("16777216 elements") && Catch::Contains("at most 1048576"));
    // a shape too large for any memory is refused the same way
    spit(a, test::make_zip({{"output.npy", test::npy_bytes("<f8", "(4294967296, 4294967296, 4294967296)", ""), true}}));
    CHECK_THAT(read_error(a), Catch::Contains("too many elements"));
    // a dtype other than float32/float64 is refused from the header
    spit(a, test::make_zip({{"output.npy", test::npy_bytes("<c16", "(4, 4)", std::string(256, '\0')), true}}));
    CHECK_THAT(read_error(a), Catch::Contains("'<c16'") && Catch::Contains("not supported"));
    // a member that holds more than its header promises is never inflated beyond the promise
    spit(a,
         test::make_zip(
             {{"output.npy", test::npy_bytes("<f4", "(2,)", std::string(std::size_t{8} << 20, '\0')), true}}));
    CHECK_THAT(read_error(a), Catch::Contains("trailing bytes") && Catch::Contains("(2,)"));
    // point 5: a CRC-32 that does not match the bytes (stored and deflated)
    for (bool deflate : {false, true}) {
        spit(a, test::make_zip({{"output.npy", good, deflate, true}}));
        CHECK_THAT(read_error(a), Catch::Contains("output.npy") && Catch::Contains("CRC-32 does not match"));
    }
    // point 6: a name twice
    spit(a, test::make_zip({{"output.npy", good}, {"weights.npy", good}, {"output.npy", good}}));
    e = read_error(a);
    CHECK_THAT(e, Catch::Contains("holds output.npy twice"));
    CHECK_THAT(e, !Catch::Contains("already exists"));
    // point 8: a 0-byte file is not an empty archive
    spit(a, "");
    CHECK_THAT(read_error(a), Catch::Contains("empty (0 bytes)"));
    // point 9: a truncated deflated member: refused (and, under the sanitizers, nothing leaks)
    for (std::size_t cut : {1, 7, 40}) {
        spit(a, test::make_zip({{"output.npy", good + std::string(4000, '\x11'), true, false, cut}}));
        CHECK_THAT(read_error(a), Catch::Contains("output.npy"));
    }
    // a FIFO and a device node named answer.npz are refused without being opened for reading
    fs::remove(a);
    REQUIRE(::mkfifo(a.c_str(), 0600) == 0);
    CHECK_THAT(read_error(a), Catch::Contains("not a regular file"));
    fs::remove(a);
    if (!make_device(a).empty()) CHECK_THAT(read_error(a), Catch::Contains("not a regular file"));
}

TEST_CASE("check: answer archives and answer folders that are not what they seem", "[exercise][hostile]") {
    temp_dir t;
    const std::string d = t / "ex";
    const std::string checker = exe + " check --state " + (t / "progress.txt") + " ";
    REQUIRE(sh(exe + " exercise sdpa --seed 5 --dir " + d).code == 0);
    answer_other_cases(d);
    const std::string good = correct_output_npy();
    const fs::path npz = fs::path(d) / "answer.npz";
    // the right answer passes; with a wrong CRC-32 it is refused, not graded
    spit(npz, test::make_zip({{"output.npy", good, true}}));
    CHECK(sh(checker + d).code == 0);
    spit(npz, test::make_zip({{"output.npy", good, true, true}}));
    auto r = sh(checker + d);
    CHECK(r.code == 2);
    CHECK_THAT(r.out, Catch::Contains("CRC-32"));
    // a header promising 16 × more than the largest answer (but under 2^20) still reaches the grader,
    // which reads the wrong shape; past the limit it is refused before inflating
    spit(npz,
         test::make_zip({{"output.npy", test::npy_bytes("<f4", "(64, 64)", std::string(64 * 64 * 4, '\0')), true}}));
    r = sh(checker + d + " --format json");
    CHECK(r.code == 1);
    CHECK_THAT(r.out, Catch::Contains("\"shape\""));
    spit(npz,
         test::make_zip(
             {{"output.npy", test::npy_bytes("<f4", "(2048, 1024)", std::string(std::size_t{8} << 20, '\0')), true}}));
    r = sh(checker + d);
    CHECK(r.code == 2);
    CHECK_THAT(r.out, Catch::Contains("promises shape (2048, 1024)"));
    fs::remove(npz);
    // point 8: answer that is a file, a FIFO, a link to a device or a link to nothing is said for what it is
    const fs::path answer = fs::path(d) / "answer";
    spit(answer, "not a folder");
    r = sh(checker + d);
    CHECK(r.code == 2);
    CHECK_THAT(r.out, Catch::Contains(answer.string() + " is a regular file, not a folder"));
    fs::remove(answer);
    REQUIRE(::mkfifo(answer.c_str(), 0600) == 0);
    CHECK_THAT(sh("timeout 20 " + checker + d).out, Catch::Contains("is a FIFO (named pipe), not a folder"));
    fs::remove(answer);
    fs::create_symlink(t.path / "nowhere", answer);
    CHECK_THAT(sh(checker + d).out, Catch::Contains("is a link to nothing, not a folder"));
    fs::remove(answer);
    const std::string dev = make_device(t / "dev");
    if (!dev.empty()) {
        fs::create_symlink(dev, answer);
        CHECK_THAT(sh(checker + d).out, Catch::Contains("is a link to a device node, not a folder"));
        fs::remove(answer);
    }
    // a link to a real folder of answers is read through
    fs::create_directories(t.path / "mine");
    spit(t.path / "mine" / "output.npy", good);
    fs::create_directory_symlink(t.path / "mine", answer);
    CHECK(sh(checker + d).code == 0);
}

TEST_CASE("progress: a stray lock file is named, with what it is and that it can be removed", "[hostile][progress]") {
    temp_dir t;
    const std::string d = t / "ex";
    REQUIRE(sh(exe + " exercise sdpa --seed 5 --dir " + d).code == 0);
    answer_other_cases(d);
    fs::create_directories(fs::path(d) / "answer");
    spit(fs::path(d) / "answer" / "output.npy", correct_output_npy());
    const std::string state = t / "progress.txt", lock = state + ".lock";
    const std::string dev = make_device(t / "dev");
    std::vector<std::pair<std::string, std::string>> kinds = {
        {"fifo", "a FIFO"}, {"folder", "a folder"}, {"link", "a symbolic link"}, {"dangling", "a symbolic link"}};
    if (!dev.empty()) kinds.push_back({"device", "a device node"});
    for (const auto& [kind, said] : kinds) {
        INFO(kind);
        if (kind == "fifo") REQUIRE(::mkfifo(lock.c_str(), 0600) == 0);
        if (kind == "folder") fs::create_directories(lock);
        if (kind == "link") spit(t.path / "target", ""), fs::create_symlink(t.path / "target", lock);
        if (kind == "dangling") fs::create_symlink(t.path / "nowhere", lock);
        if (kind == "device") REQUIRE(::mknod(lock.c_str(), S_IFCHR | 0600, makedev(1, 3)) == 0);
        const auto r = sh("timeout 20 " + exe + " check " + d + " --state " + state);
        CHECK(r.code == 0);  // graded and passed; only the record is skipped
        CHECK_THAT(r.out,
                   Catch::Contains("its lock file " + lock + " is " + said) && Catch::Contains("can be removed") &&
                       Catch::Contains("progress was not saved"));
        fs::remove_all(lock);
    }
}

TEST_CASE("save: --save into an existing writable folder inside a read-only one", "[hostile][save]") {
    temp_dir t;
    const fs::path parent = t.path / "ro", out = parent / "out";
    fs::create_directories(out);
    fs::permissions(out, fs::perms::all);
    fs::permissions(t.path,
                    fs::perms::owner_all | fs::perms::others_read | fs::perms::others_exec | fs::perms::group_read |
                        fs::perms::group_exec);
    fs::permissions(parent,
                    fs::perms::owner_read | fs::perms::owner_exec | fs::perms::group_read | fs::perms::group_exec |
                        fs::perms::others_read | fs::perms::others_exec);
    // root writes anywhere: run as nobody then (when setpriv can), else as ourselves
    std::string as = "";
    if (::geteuid() == 0) {
        if (sh("setpriv --reuid=65534 --regid=65534 --clear-groups " + exe + " --version").code != 0) {
            WARN("cannot run as an unprivileged user here: the read-only parent case is skipped");
            fs::permissions(parent, fs::perms::owner_all);
            return;
        }
        as = "setpriv --reuid=65534 --regid=65534 --clear-groups ";
    }
    const auto r = sh(as + exe + " step --no-pause --save " + out.string());
    INFO(r.out);
    CHECK(r.code == 0);
    CHECK(fs::is_regular_file(out / "output.npy"));
    CHECK(fs::is_regular_file(out / "weights.npy"));
    CHECK(leftovers(t.path) == 0);
    // a folder that cannot be written is refused before the work
    fs::permissions(out, fs::perms::owner_all);
    const auto refused = sh(as + exe + " step --no-pause --save " + out.string());
    if (!as.empty() || ::geteuid() != 0) {
        CHECK(refused.code == 2);
        CHECK_THAT(refused.out, Catch::Contains("cannot write to " + out.string()));
    }
    fs::permissions(parent, fs::perms::owner_all);
}

TEST_CASE("drill: endless, binary or overlong input ends the session instead of reading forever", "[hostile][drill]") {
    temp_dir t;
    const std::string drill = "timeout 20 " + exe + " drill --seed 9 --count 5 --no-save < ";
    // a private zero device (mknod as root), else a file of NUL bytes
    std::string zero = make_device_of(t / "zero", 1, 5);
    if (zero.empty()) {
        zero = t / "zero";
        spit(zero, std::string(std::size_t{1} << 20, '\0'));
    }
    auto r = sh(drill + zero);
    CHECK(r.code == 0);
    CHECK_THAT(r.out, Catch::Contains("NUL byte") && Catch::Contains("session ends"));
    // lines too long to be answers: each is refused; the third ends the session
    spit(t.path / "long",
         std::string(5000, 'x') + "\ns\n" + std::string(5000, 'y') + "\n" + std::string(9000, 'z') + "\ns\ns\n");
    r = sh(drill + (t / "long"));
    CHECK(r.code == 0);
    CHECK(count(r.out, "longer than 4096 bytes") == 3);
    CHECK(count(r.out, "the session ends here") == 1);
    CHECK(count(r.out, "skipped: the answer") == 1);
    // one endless line without an end of line (no NUL in it): ends at 64 KiB
    spit(t.path / "endless", std::string(std::size_t{1} << 20, 'a'));
    r = sh(drill + (t / "endless"));
    CHECK(r.code == 0);
    CHECK_THAT(r.out, Catch::Contains("longer than 4096 bytes") && Catch::Contains("session ends"));
    // an answer of 4096 bytes is still read (and is not one of the choices)
    spit(t.path / "fits", std::string(4096, 'b') + "\nq\n");
    r = sh(drill + (t / "fits"));
    CHECK(r.code == 0);
    CHECK(count(r.out, "longer than") == 0);
}

namespace {

// The Markdown outside code spans and fenced blocks (CommonMark reads no HTML inside them).
std::string outside_code(const std::string& md) {
    std::string out;
    std::size_t i = 0;
    bool line_start = true;
    while (i < md.size()) {
        if (line_start && md.compare(i, 3, "```") == 0) {  // a fence: to the closing fence of the same length
            std::size_t n = 0;
            while (i + n < md.size() && md[i + n] == '`') ++n;
            const std::string fence(n, '`');
            std::size_t close = md.find("\n" + fence, i + n);
            while (close != std::string::npos && close + 1 + n < md.size() && md[close + 1 + n] == '`')
                close = md.find("\n" + fence, close + 1);
            i = close == std::string::npos ? md.size() : close + 1 + n;
            continue;
        }
        if (md[i] == '`' && (i == 0 || md[i - 1] != '\\')) {  // a code span: to the same run of backticks
            std::size_t n = 0;
            while (i + n < md.size() && md[i + n] == '`') ++n;
            const std::string run(n, '`');
            std::size_t close = md.find(run, i + n);
            while (close != std::string::npos && close + n < md.size() && md[close + n] == '`')
                close = md.find(run, close + n + 1);
            if (close != std::string::npos) {
                i = close + n;
                continue;
            }
        }
        line_start = md[i] == '\n';
        out += md[i++];
    }
    return out;
}

// Every '<', '>', '&' and backtick outside code is escaped (preceded by an odd run of backslashes).
std::string first_unescaped(const std::string& md) {
    const std::string text = outside_code(md);
    for (std::size_t i = 0; i < text.size(); ++i) {
        const char c = text[i];
        if (c != '<' && c != '&' && c != '`') continue;
        std::size_t slashes = 0;
        while (slashes < i && text[i - 1 - slashes] == '\\') ++slashes;
        if (slashes % 2 == 0) return text.substr(i >= 30 ? i - 30 : 0, 70);
    }
    return "";
}

}  // namespace

TEST_CASE("markdown: tokens and other text cannot inject HTML or code", "[hostile][markdown]") {
    const std::string tokens = "'<script>alert(2)</script> b'";
    const std::string hostile = "'<img/src=x/onerror=alert(1)> `x`&amp; \\<b>'";  // three tokens
    for (const std::string& cmd :
         {"positions -n 2 --tokens " + tokens, "step -n 2 --tokens " + tokens, "heads -n 2 --tokens " + tokens,
          "mistake no-scale -n 2 --tokens " + tokens, "grad -n 2 --tokens " + tokens, "step -n 3 --tokens " + hostile,
          "positions -n 3 --tokens " + hostile}) {
        INFO(cmd);
        const auto r = test::capture(exe + " " + cmd + " --format markdown --no-pause 2>/dev/null");
        REQUIRE(r.code == 0);
        CHECK(first_unescaped(r.out).empty());
    }
}

TEST_CASE("output budget: huge runs of positions, variant, learn, step and heads are refused up front",
          "[hostile][budget]") {
    const std::pair<std::string, std::string> cases[] = {
        {"positions --d-k 100000 --format json", "the JSON output would be about"},
        {"positions --d-model 1048576", ""},
        {"positions --d-k 100000 --encoding rope --no-pause", "the tensors the text output shows elided"},
        {"variant linear --d-v 100000 --format json", "smaller --d-v"},
        {"variant linear --d-v 100000 --no-pause", "the tensors the text output shows elided"},
        {"step --seq-len 5000 --no-pause", "the tensors the text output shows elided would be about"},
        {"step --seq-len 5000 --no-pause --format markdown", "the tensors the markdown output shows elided"},
        {"heads --batch 1048576 --no-pause", "smaller --batch"},
        {"learn --seq-len 64 --d-model 512 --heads 8 --layers 2 --batch 4096 --steps 100000 --no-pause", ""},
    };
    for (const auto& [cmd, said] : cases) {
        INFO(cmd);
        const auto start = std::chrono::steady_clock::now();
        const auto r = test::capture("timeout 60 " + exe + " " + cmd + " 2>&1 >/dev/null");
        const double seconds = std::chrono::duration<double>(std::chrono::steady_clock::now() - start).count();
        INFO(r.out);
        CHECK(r.code == 2);
        CHECK(seconds < 10);  // refused before computing (each took a minute or more, or was killed)
        CHECK(count(r.out, "\n") == 1);
        CHECK_THAT(r.out, Catch::Contains(said));
    }
    // the defaults and a lifted budget still run
    for (const char* cmd : {"positions --no-pause", "variant linear --no-pause", "batching --no-pause",
                            "learn --task previous --steps 20 --no-pause", "step --seq-len 200 --no-pause"})
        CHECK(test::capture(exe + " " + cmd + " >/dev/null 2>&1").code == 0);
    const auto low = test::capture(exe + " step --seq-len 300 --no-pause --max-output 64K 2>&1 >/dev/null");
    CHECK(low.code == 2);
    CHECK_THAT(low.out, Catch::Contains("pass --max-output"));
    CHECK(test::capture(exe + " step --seq-len 300 --no-pause --max-output none >/dev/null 2>&1").code == 0);
}
