// libFuzzer harness: the drill's answer parsers (shapes, numbers, choices) take any line without
// crashing, and a parsed shape prints back to something they parse again to the same shape.
#include <cmath>
#include <cstddef>
#include <cstdint>
#include <string>

#include "attn/drill/drill.hpp"

extern "C" int LLVMFuzzerTestOneInput(const std::uint8_t* data, std::size_t size) {
    const std::string s(reinterpret_cast<const char*>(data), size);
    if (const auto shape = attn::drill::parse_shape(s)) {
        std::string again = "(";
        for (std::size_t i = 0; i < shape->size(); ++i) again += (i ? ", " : "") + std::to_string((*shape)[i]);
        again += ")";
        if (attn::drill::parse_shape(again) != shape) __builtin_trap();
    }
    (void)attn::drill::parse_number(s);
    // A size in one unit, read in another: finite whenever it is read at all.
    for (const char* unit : {"", "B", "MiB", "GiB"})
        if (const auto a = attn::drill::parse_amount(s, unit); a && !std::isfinite(*a)) __builtin_trap();
    attn::drill::question q;
    q.kind = "concept";
    q.choices = {"alpha", "beta", "gamma", "delta"};
    q.answer = "b";
    (void)attn::drill::is_right(q, s);
    q.kind = "shape";
    q.shape = {32, 10, 10};
    (void)attn::drill::is_right(q, s);
    q.kind = "numeric";
    q.number = 0.62;
    q.tolerance = 0.01;
    (void)attn::drill::is_right(q, s);
    q.unit = "MiB";
    // Right, wrong or unreadable, and is_right agrees with grade.
    const auto v = attn::drill::grade(q, s);
    if ((v == attn::drill::verdict::right) != attn::drill::is_right(q, s)) __builtin_trap();
    return 0;
}
