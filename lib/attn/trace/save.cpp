// --save DIR for a run: its steps as .npy files (see save.hpp).
#include "attn/trace/save.hpp"

#include <filesystem>
#include <vector>

#include "attn/core/masks.hpp"
#include "attn/io/npy.hpp"

namespace attn {

namespace fs = std::filesystem;

namespace {
void write_step(const fs::path& folder, const step& s, dtype type) {
    const std::vector<std::size_t> shape(s.value.shape().begin(), s.value.shape().end());
    const std::vector<double> data(s.value.begin(), s.value.end());
    npy::write((folder / (s.id + ".npy")).string(), shape, data,
               type == dtype::float32 ? npy::dtype::float32 : npy::dtype::float64);
}
}  // namespace

void save_trace(const trace& t, const std::string& dir, save_layout layout) {
    const auto fill = [&](const std::string& tmp) {
        const fs::path folder(tmp);
        const fs::path correct = layout == save_layout::mistake ? folder / "correct" : folder;
        fs::create_directories(correct);
        for (const step& s : t.steps) write_step(correct, s, t.config.type);
        if (t.config.pattern.kind == pattern_kind::bigbird) {
            // BigBird's random blocks, as the [n/B, n/B] matrix rand (1 = drawn), so that a
            // reference implementation can rebuild the same mask.
            const std::size_t nb = t.config.seq_len / t.config.pattern.block;
            const auto drawn =
                bigbird_random_blocks(nb, t.config.pattern.random, t.config.pattern.globals, t.config.pattern.seed);
            std::vector<double> rand(nb * nb, 0.0);
            for (std::size_t r = 0; r < nb; ++r)
                for (std::size_t kb : drawn[r]) rand[r * nb + kb] = 1.0;
            npy::write((correct / "random_blocks.npy").string(), {nb, nb}, rand, npy::dtype::float64);
        }
        if (t.has_mistake)
            for (const step_group& g : t.mistake.groups) {
                fs::create_directory(folder / g.name);
                for (const step& s : g.steps) write_step(folder / g.name, s, t.config.type);
            }
    };
    save_folder(dir, fill, t.config.load_dir);
}

}  // namespace attn
