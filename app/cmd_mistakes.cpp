// `attn-explain mistakes`: the catalogue of classic attention bugs, one line each, grouped.
#include "attn/doc/walkthrough.hpp"
#include "registry.hpp"

namespace app {
namespace {

struct options {};
struct catalogue {};  // the page needs nothing but the lessons

std::optional<catalogue> run(const options&, run_context&) { return catalogue{}; }

attn::doc::document page(const catalogue&, const run_context& ctx) { return attn::doc::mistakes_catalogue(ctx.L()); }

report_spec<options, catalogue> spec() {
    auto s = spec_about<report_spec<options, catalogue>>(
        "mistakes", "List the classic attention mistakes the lab can run", 20, text_only, 0, {{""}});
    s.run = run;
    s.page = page;
    return s;
}
const registrar registered(spec());

}  // namespace
}  // namespace app
