// The interview drill: questions generated from a seed (shapes, numbers), hand-written ones from
// lessons/ (concepts), and spot-the-bug ones from the mistakes catalogue; grading; the session
// plan. The answer key of every generated question comes from the library (shapes.hpp,
// attention.hpp), never typed in. app/cmd_drill.cpp runs the interactive loop.
#pragma once
#include <cstdint>
#include <map>
#include <optional>
#include <string>
#include <vector>

#include "attn/io/lessons.hpp"
#include "attn/io/progress.hpp"

namespace attn::drill {

// --topic values; "all" selects everything.
const std::vector<std::string>& topic_names();
// Throws attn::error listing the valid topics.
void check_topic(const std::string& topic);

struct question {
    std::string id;  // stable: "concept.sqrt-dk-why", "bug.no-scale", "shape.qk-…"
    std::string kind;  // "shape" | "numeric" | "concept" | "bug"
    std::vector<std::string> topics;  // topics[0] is the primary one: shapes, numeric, concepts, bugs
    std::string prompt;
    std::vector<std::string> choices;  // multiple choice (concept, bug); labelled a, b, c, …
    std::string answer;  // the answer as shown: "(32, 10, 10)", "0.62", "b"
    std::vector<std::size_t> shape;  // kind shape: the key
    double number = 0, tolerance = 0;  // kind numeric: the key and the accepted distance
    // kind numeric: the value before rounding, and the decimals the prompt asks for (−1: none, the
    // key is the value itself: a whole number, or a size graded within a relative tolerance)
    double exact = 0;
    int decimals = -1;
    std::string unit;  // kind numeric: "MiB", "B" (bytes) or "" (a pure number)
    std::string explanation, hint, command;
};

// The answer normaliser: "(32, 10, 10)", "32x10x10", "[32,10,10]", "32 10 10" and PyTorch's
// "torch.Size([32, 10, 10])" all give {32, 10, 10}; anything else gives nothing.
std::optional<std::vector<std::size_t>> parse_shape(const std::string& s);
// "0.62", ".62", "62%" (= 0.62), "1e3", "1,024" (thousands separators) -> a number. A comma
// that is not a thousands separator ("0,5": a decimal comma) gives nothing, as does a unit.
std::optional<double> parse_number(const std::string& s);
// A number with an optional unit of bytes, in `unit` (the question's: "MiB", "B", …):
// "4 GiB" -> 4096 for "MiB". B/bytes, KB/MB/GB/TB (powers of 1000), KiB/MiB/GiB/TiB (of 1024).
// No unit: the number is taken in `unit`. A unit that is not one of these gives nothing.
std::optional<double> parse_amount(const std::string& s, const std::string& unit);
// Grading: right, wrong, or not an answer the parsers can read (to be asked again, not
// counted): letters a-d (any case, "b)" or "(b)"; a letter past the choices is unreadable), a
// choice's text, a mistake id for a bug question; shapes in any of the forms above; numbers
// (with a unit for sizes) within the tolerance.
enum class verdict { right, wrong, unreadable };
verdict grade(const question& q, const std::string& reply);
bool is_right(const question& q, const std::string& reply);

// What the learner has done so far (io/progress.hpp keeps it in its file) favours weak topics and
// missed questions. Folds one answered question into it.
void record(progress& p, const question& q, bool right);

// The questions of one session, in order. Depends only on (seed, count, topic) and `p`;
// with p == nullptr (--no-save) only on the first three, on any machine.
std::vector<question> plan_session(const lessons& L, std::uint64_t seed, std::size_t count, const std::string& topic,
                                   const progress* p);

// Python code without its comments (each line cut at a # outside a string literal, trailing blanks
// dropped, lines left empty removed): the bug drill shows buggy lines without the hints.
std::string strip_code_comments(const std::string& code);
// Every hand-written concept question and every spot-the-bug question (for the content linter).
std::vector<question> concept_bank(const lessons& L);
std::vector<question> bug_bank(const lessons& L, std::uint64_t seed);

// The generators, exposed for tests: each draws its numbers from the seed.
question gen_shape(const lessons& L, std::uint64_t seed, int variant);  // variant 0..6
question gen_numeric(const lessons& L, std::uint64_t seed, int variant);  // variant 0..numeric_variants - 1
constexpr int shape_variants = 7, numeric_variants = 51;
// An exact value that lies halfway between two roundings at `decimals` decimals (0.03125 at
// four): "rounded to four decimals" then has two answers. The generators never ask one.
bool rounding_tie(double exact, int decimals);

}  // namespace attn::drill
