// `attn-explain parallel --format python`: the same scheme on torch.distributed (gloo), one CPU
// process per device. Run as `python3 script.py` it spawns --devices processes itself
// (torch.multiprocessing.spawn, rendezvous through a file:// store in a fresh temporary folder, so
// parallel runs never share a port); under torchrun (RANK and WORLD_SIZE set) it is one rank
// (env:// rendezvous). Ring: isend/irecv of K and V around the ring, merged with the online-softmax
// rule; Ulysses: two all-to-alls; heads: one all_reduce. Every rank checks its rows against the
// tool's output; rank 0 prints "all devices match" last.
#pragma once
#include <string>

#include "attn/io/lessons.hpp"
#include "attn/trace/parallel.hpp"

namespace attn {

std::string render_parallel_python(const parallel_report& r, const lessons& L);

}  // namespace attn
