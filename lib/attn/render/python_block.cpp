// `attn-explain block --format python` (see python_block.hpp).
#include "attn/render/python_block.hpp"

#include <fmt/format.h>

#include "attn/doc/block.hpp"
#include "attn/render/python.hpp"

namespace attn {

std::string render_block_python(const block_report& r, const lessons& L) {
    const vars v = block_vars(r, L);
    std::string out = python_preamble(r.config.type, L, "block");
    out += python_comment(L.text("block.python.header", {{"config", L.text("block.config", v)}}));
    out += L.text("block.python.dims", v) + "\n";
    out += "torch.set_grad_enabled(False)\n\n";
    out += python_comment(L.raw("python.inputs"));
    for (const block_tensor& t : r.inputs) out += t.id + " = tensor(" + python_list(t.value) + ")\n";
    out += "\n";
    for (std::size_t i = 0; i < r.steps.size(); ++i) {
        const block_tensor& s = r.steps[i];
        const block_step_text text = block_text_of(r, L, s.id);
        out += fmt::format("# {}/{} {}: {}\n# {}\n", i + 1, r.steps.size(), s.id, text.title, shape_of(s.value));
        out += text.pytorch + "\n";
        out += fmt::format("check(\"{}\", {}, tensor({}))\n\n", s.id, s.id, python_list(s.value));
    }
    out += "print(f\"all {matched} steps match\")\n";
    return out;
}

}  // namespace attn
