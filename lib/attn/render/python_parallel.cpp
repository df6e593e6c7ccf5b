// `attn-explain parallel --format python` (see python_parallel.hpp).
#include "attn/render/python_parallel.hpp"

#include <fmt/format.h>

#include "attn/render/python.hpp"

namespace attn {

namespace {

// The shared part: attention over held heads with the online-softmax merge, the checks, the
// launcher. Written for torch 1.13 (Debian 12): all_to_all_single runs on gloo there.
const char* par_py_helpers = R"(
def kv_range(j):
    if SCHEME == "heads":
        return j * (G // P), (j + 1) * (G // P)
    gl = G // P if G >= P else 1
    g0 = j * gl if G >= P else j // (P // G)
    return g0, g0 + gl


def merge(state, q, qpos, k, v, kpos, group):
    m, l, acc = state  # m, l [heads, rows]; acc [heads, rows, d_head]
    k = k.repeat_interleave(group, dim=1)
    v = v.repeat_interleave(group, dim=1)
    s = torch.einsum("rhd,khd->hrk", q, k) / math.sqrt(DH)
    if CAUSAL:
        s = s.masked_fill(kpos[None, None, :] > qpos[None, :, None], -math.inf)
    m_new = torch.maximum(m, s.amax(-1))
    seen = torch.isfinite(m_new)
    m_safe = torch.where(seen, m_new, torch.zeros_like(m_new))
    alpha = torch.where(seen, torch.exp(m - m_safe), torch.ones_like(m))
    e = torch.exp(s - m_safe[..., None])
    l = l * alpha + e.sum(-1)
    acc = acc * alpha[..., None] + torch.einsum("hrk,khd->hrd", e, v)
    return m_new, l, acc


def attend(q, qpos, k, v, kpos, group):
    heads, rows = q.shape[1], q.shape[0]
    state = (torch.full((heads, rows), -math.inf, dtype=DTYPE, device=DEVICE),
             torch.zeros(heads, rows, dtype=DTYPE, device=DEVICE),
             torch.zeros(heads, rows, DH, dtype=DTYPE, device=DEVICE))
    m, l, acc = merge(state, q, qpos, k, v, kpos, group)
    return (acc / l[..., None]).transpose(0, 1).reshape(rows, heads * DH)
)";

const char* par_py_ring = R"(
def ring_rows(p):
    chunks = [p, 2 * P - 1 - p] if CAUSAL else [p]
    c = N // (2 * P) if CAUSAL else N // P
    return torch.cat([torch.arange(i * c, (i + 1) * c) for i in chunks]).to(DEVICE)


def run(rank):
    rows = ring_rows(rank)
    x = X[rows]
    q = (x @ W_Q).view(len(rows), H, DH)
    k = (x @ W_K).view(len(rows), G, DH)
    v = (x @ W_V).view(len(rows), G, DH)
    state = (torch.full((H, len(rows)), -math.inf, dtype=DTYPE, device=DEVICE),
             torch.zeros(H, len(rows), dtype=DTYPE, device=DEVICE),
             torch.zeros(H, len(rows), DH, dtype=DTYPE, device=DEVICE))
    for r in range(P):
        src = (rank - r) % P
        if r + 1 < P:
            k_next, v_next = torch.empty_like(k), torch.empty_like(v)
            reqs = [dist.isend(k.contiguous(), (rank + 1) % P, tag=2 * r),
                    dist.isend(v.contiguous(), (rank + 1) % P, tag=2 * r + 1),
                    dist.irecv(k_next, (rank - 1) % P, tag=2 * r),
                    dist.irecv(v_next, (rank - 1) % P, tag=2 * r + 1)]
        state = merge(state, q, rows, k, v, ring_rows(src), H // G)
        if r + 1 < P:
            for req in reqs:
                req.wait()
            k, v = k_next, v_next
    m, l, acc = state
    o = (acc / l[..., None]).transpose(0, 1).reshape(len(rows), H * DH)
    return rows, o @ W_O
)";

const char* par_py_ulysses = R"(
def run(rank):
    b, hl = N // P, H // P
    rows = torch.arange(rank * b, (rank + 1) * b, device=DEVICE)
    x = X[rows]
    q = (x @ W_Q).view(b, H, DH)
    k = (x @ W_K).view(b, G, DH)
    v = (x @ W_V).view(b, G, DH)
    # @send@
    send_q = torch.stack([q[:, j * hl:(j + 1) * hl] for j in range(P)]).contiguous()
    send_k = torch.stack([k[:, kv_range(j)[0]:kv_range(j)[1]] for j in range(P)]).contiguous()
    send_v = torch.stack([v[:, kv_range(j)[0]:kv_range(j)[1]] for j in range(P)]).contiguous()
    got_q, got_k, got_v = torch.empty_like(send_q), torch.empty_like(send_k), torch.empty_like(send_v)
    dist.all_to_all_single(got_q, send_q)
    dist.all_to_all_single(got_k, send_k)
    dist.all_to_all_single(got_v, send_v)
    every = torch.arange(N, device=DEVICE)
    g0, g1 = kv_range(rank)
    q_all, k_all, v_all = got_q.reshape(N, hl, DH), got_k.reshape(N, g1 - g0, DH), got_v.reshape(N, g1 - g0, DH)
    o = attend_heads(q_all, every, k_all, v_all, rank * hl, g0)
    # @gather@
    send_o = o.view(P, b, hl * DH).contiguous()
    got_o = torch.empty_like(send_o)
    dist.all_to_all_single(got_o, send_o)
    return rows, got_o.transpose(0, 1).reshape(b, H * DH) @ W_O


def attend_heads(q, qpos, k, v, head0, kv0):
    # @kv_index@
    idx = torch.tensor([(head0 + a) // (H // G) - kv0 for a in range(q.shape[1])], device=DEVICE)
    return attend(q, qpos, k[:, idx], v[:, idx], qpos, 1)
)";

const char* par_py_heads = R"(
def run(rank):
    hl, gl = H // P, G // P
    rows = torch.arange(N, device=DEVICE)
    q = (X @ W_Q[:, rank * hl * DH:(rank + 1) * hl * DH]).view(N, hl, DH)
    k = (X @ W_K[:, rank * gl * DH:(rank + 1) * gl * DH]).view(N, gl, DH)
    v = (X @ W_V[:, rank * gl * DH:(rank + 1) * gl * DH]).view(N, gl, DH)
    o = attend(q, rows, k, v, rows, H // G)
    y = o @ W_O[rank * hl * DH:(rank + 1) * hl * DH]  # @partial@
    dist.all_reduce(y)
    return rows, y
)";

const char* par_py_main = R"(
def worker(rank, init):
    global DEVICE, X, W_Q, W_K, W_V, W_O, WANT
    torch.set_num_threads(1)
    if BACKEND == "nccl":
        local = int(os.environ.get("LOCAL_RANK", rank))
        torch.cuda.set_device(local)
        DEVICE = torch.device("cuda", local)
    X, W_Q, W_K, W_V, W_O, WANT = (torch.tensor(t, dtype=DTYPE, device=DEVICE)
                                   for t in (X_, W_Q_, W_K_, W_V_, W_O_, WANT_))
    if init is None:
        dist.init_process_group(BACKEND, init_method="env://")
    else:
        dist.init_process_group(BACKEND, init_method=init, rank=rank, world_size=P)
    if dist.get_world_size() != P:
        sys.exit(f"this script runs on {P} processes, not {dist.get_world_size()}")
    with torch.no_grad():
        rows, y = run(rank)
    diff = (y - WANT[rows]).abs().max().item()
    ok = diff <= TOL
    print(f"device {rank}: rows {rows[0].item()}..{rows[-1].item()}, max diff {diff:.3g}"
          + ("" if ok else " MISMATCH"), flush=True)
    good = torch.tensor([1.0 if ok else 0.0], dtype=DTYPE, device=DEVICE)
    dist.all_reduce(good)
    dist.destroy_process_group()
    if good.item() != P:
        sys.exit(1)
    if rank == 0:
        print("all devices match", flush=True)


if __name__ == "__main__":
    if "RANK" in os.environ and "WORLD_SIZE" in os.environ:
        worker(int(os.environ["RANK"]), None)  # @torchrun@
    else:
        import torch.multiprocessing as mp
        with tempfile.TemporaryDirectory() as folder:  # @store@
            mp.spawn(worker, args=("file://" + os.path.join(folder, "store"),), nprocs=P, join=True)
)";

// The script's code with its comments (@name@, parallel.pytorch.comment.name) in L's language.
std::string par_py_comments(std::string code, const lessons& L) {
    for (std::size_t at = code.find("# @"); at != std::string::npos; at = code.find("# @", at)) {
        const std::size_t end = code.find('@', at + 3);
        const std::string name = code.substr(at + 3, end - at - 3);
        code.replace(at + 2, end + 1 - (at + 2), L.raw("parallel.pytorch.comment." + name));
    }
    return code;
}

}  // namespace

std::string render_parallel_python(const parallel_report& r, const lessons& L) {
    const parallel::dims& d = r.config.dims;
    const bool f32 = r.config.dtype == "float32";
    std::string out = "#!/usr/bin/env python3\n";
    out +=
        python_comment(L.text("parallel.pytorch.header",
                              {{"scheme", parallel::scheme_name(r.config.scheme)}, {"P", std::to_string(d.devices)}}));
    out += "import math\nimport os\nimport sys\nimport tempfile\n\nimport torch\nimport torch.distributed as dist\n\n";
    out += fmt::format("SCHEME = \"{}\"\nP, N, D, H, G, DH = {}, {}, {}, {}, {}, {}\nCAUSAL = {}\n",
                       parallel::scheme_name(r.config.scheme), d.devices, d.n, d.d_model, d.heads, d.kv_heads,
                       d.d_head(), d.causal ? "True" : "False");
    out += fmt::format("DTYPE = torch.{}\nTOL = {}\n", r.config.dtype, f32 ? "1e-4" : "1e-9");
    out += python_comment(L.raw("parallel.pytorch.backend"));
    out += "BACKEND = os.environ.get(\"ATTN_BACKEND\", \"gloo\")\nDEVICE = torch.device(\"cpu\")\n\n";
    out += python_comment(L.raw("parallel.pytorch.inputs"));
    out += "X_ = " + python_list(tensor(r.inputs.x)) + "\n";
    out += "W_Q_ = " + python_list(tensor(r.inputs.w_q)) + "\n";
    out += "W_K_ = " + python_list(tensor(r.inputs.w_k)) + "\n";
    out += "W_V_ = " + python_list(tensor(r.inputs.w_v)) + "\n";
    out += "W_O_ = " + python_list(tensor(r.inputs.w_o)) + "\n";
    out += "WANT_ = " + python_list(tensor(r.result.output)) + "\n\n";
    out += python_comment(L.raw("parallel.pytorch.merge")) + par_py_helpers + "\n";
    const char* body = r.config.scheme == parallel::scheme::ring ? par_py_ring
        : r.config.scheme == parallel::scheme::ulysses           ? par_py_ulysses
                                                                 : par_py_heads;
    out += python_comment(L.raw(std::string("parallel.pytorch.") + parallel::scheme_name(r.config.scheme))) +
        par_py_comments(body, L);
    out += "\n" + python_comment(L.raw("parallel.pytorch.main")) + par_py_comments(par_py_main, L);
    return out;
}

}  // namespace attn
