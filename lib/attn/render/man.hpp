// The man renderer: a doc::document as a roff man page (man(7) macros), for the per-command pages
// attn-explain-COMMAND(1) the build generates from `attn-explain help COMMAND --format man`.
// Level-1 headings become sections (.SH), a level-2 heading and the indented prose under it a
// tagged paragraph (.TP: a flag and its text), prose paragraphs .PP, listings and kept lines
// no-fill blocks, key/value lists tagged paragraphs; any other block is drawn by the text
// renderer at 80 columns inside a no-fill block.
#pragma once
#include <string>

#include "attn/doc/document.hpp"

namespace attn {

struct man_header {
    std::string name;  // "attn-explain-step": the page's name (.TH and NAME)
    std::string section = "1";
    std::string summary;  // NAME's one line: "attn-explain-step \- <summary>"
    std::string source;  // "attn-explain 0.1.0"
    std::string manual = "attn-explain manual";
};

// The page: .TH, NAME, then the document's blocks from its first section on (the title and the
// lines under it, before the first level-1 heading, are what NAME says).
std::string render_man(const doc::document& d, const man_header& h);

}  // namespace attn
