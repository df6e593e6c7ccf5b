#!/usr/bin/env python3
"""An independent re-simulation of `attn-explain serve`: from each JSON's `requests` trace and its
config alone, schedule the three policies again (written from the rules in lib/attn/core/serve.hpp,
not from its code) and reproduce every policy's numbers in the JSON: iterations, tokens per
iteration, idle slots, TTFT and latency (mean, nearest-rank p50 and p99), each request's first and
last iterations and every pass's chunks; when the run was priced, the milliseconds from the
passes' own prices. Prints "ok" or the differences. Usage: serve_oracle.py RUN.json ..."""
import json
import math
import sys

import numpy as np


def schedule(policy, trace, max_batch, budget, max_wait):
    """Returns (passes, first, last): passes as (iteration, slots, [(request, new, cached, prefill)])."""
    n = len(trace)
    order = sorted(range(n), key=lambda i: (trace[i][0], i))
    done_prompt = [0] * n  # prompt tokens processed
    made = [0] * n  # output tokens produced
    first, last = [None] * n, [None] * n
    queue, running, passes = [], [], []
    arrived = 0
    t = 0
    while sum(x is not None for x in last) < n:
        while arrived < n and trace[order[arrived]][0] <= t:
            queue.append(order[arrived])
            arrived += 1
        chunks = []
        if policy == "static":
            if not running and queue and (len(queue) >= max_batch or t - trace[queue[0]][0] >= max_wait):
                running, queue = queue[:max_batch], queue[max_batch:]
            waiting_prefill = [r for r in running if done_prompt[r] < trace[r][1]]
            if waiting_prefill:
                room = budget
                for r in waiting_prefill:
                    if trace[r][1] > room:
                        break
                    chunks.append((r, trace[r][1], 0, 1))
                    room -= trace[r][1]
            else:
                chunks = [(r, 1, trace[r][1] + made[r] - 1, 0) for r in running]
        else:
            chunks = [(r, 1, trace[r][1] + made[r] - 1, 0) for r in running if done_prompt[r] == trace[r][1]]
            room = budget - len(chunks)
            if policy == "continuous-chunked":
                for r in running:
                    if done_prompt[r] < trace[r][1] and room > 0:
                        take = min(trace[r][1] - done_prompt[r], room)
                        chunks.append((r, take, done_prompt[r], 1))
                        room -= take
            while queue and len(running) < max_batch and room > 0:
                r = queue[0]
                if policy == "continuous" and trace[r][1] > room:
                    break
                queue.pop(0)
                running.append(r)
                take = min(trace[r][1], room)
                chunks.append((r, take, 0, 1))
                room -= take
        if not chunks:
            t += 1
            continue
        passes.append((t, len(running), chunks))
        for r, new, cached, prefill in chunks:
            if prefill:
                done_prompt[r] += new
                if done_prompt[r] < trace[r][1]:
                    continue
            made[r] += 1
            if made[r] == 1:
                first[r] = t
            if made[r] == trace[r][2]:
                last[r] = t
        running = [r for r in running if made[r] < trace[r][2]]
        t += 1
    return passes, first, last


def nearest_rank(values, p):
    v = np.sort(np.asarray(values))
    return v[max(1, math.ceil(p / 100 * len(v))) - 1]


def close(a, b):
    return abs(a - b) <= 1e-9 * max(1.0, abs(a), abs(b))


def check_run(path, problems):
    data = json.load(open(path))
    c = data["config"]
    trace = [(q["arrival"], q["prompt"], q["output"]) for q in data["requests"]]
    for pol in data["policies"]:
        name = pol["name"]
        where = f"{path} {name}"
        passes, first, last = schedule(name, trace, c["max_batch"], c["token_budget"], c["max_wait"])
        tokens = sum(new for _, _, ch in passes for _, new, _, _ in ch)
        ttft = [f - a + 1 for f, (a, _, _) in zip(first, trace)]
        latency = [l - a + 1 for l, (a, _, _) in zip(last, trace)]
        want = {
            "iterations": len(passes),
            "throughput_tokens_per_iter": tokens / len(passes),
            "generated_tokens_per_iter": sum(o for _, _, o in trace) / len(passes),
            "tokens": tokens,
            "idle_slots": sum(c["max_batch"] - slots for _, slots, _ in passes),
            "ticks": max(last) + 1,
        }
        for key, value in want.items():
            if not close(pol[key], value):
                problems.append(f"{where}: {key} {pol[key]} but re-simulated {value}")
        for key, values in (("ttft", ttft), ("latency", latency)):
            stats = {"mean": float(np.mean(values)), "p50": nearest_rank(values, 50), "p99": nearest_rank(values, 99)}
            for s, value in stats.items():
                if not close(pol[key][s], value):
                    problems.append(f"{where}: {key}.{s} {pol[key][s]} but re-simulated {value}")
        for i, tm in enumerate(pol["timings"]):
            if (tm["first"], tm["last"]) != (first[i], last[i]):
                problems.append(f"{where}: request {i} first/last {tm['first']}/{tm['last']}, re-simulated "
                                f"{first[i]}/{last[i]}")
                break
        got = [(p["at"], p["slots"], [tuple(ch) for ch in p["chunks"]]) for p in pol["passes"]]
        if got != passes:
            problems.append(f"{where}: the passes differ from the re-simulated ones")
        if c["priced"] is not None:
            ms = {p["at"]: p["ms"] for p in pol["passes"]}
            for key, upto in (("ttft_ms", first), ("latency_ms", last)):
                per = [sum(v for at, v in ms.items() if a <= at <= u) for u, (a, _, _) in zip(upto, trace)]
                stats = {"mean": float(np.mean(per)), "p50": nearest_rank(per, 50), "p99": nearest_rank(per, 99)}
                for s, value in stats.items():
                    if abs(pol[key][s] - value) > 1e-9 * max(1.0, abs(value)):
                        problems.append(f"{where}: {key}.{s} {pol[key][s]} but re-summed {value}")
            if abs(pol["time_ms"] - sum(ms.values())) > 1e-9 * max(1.0, pol["time_ms"]):
                problems.append(f"{where}: time_ms {pol['time_ms']} but the passes sum to {sum(ms.values())}")


def main():
    problems = []
    for path in sys.argv[1:]:
        check_run(path, problems)
    for p in problems[:20]:
        print(p)
    print("ok" if not problems else "FAILED")
    return 1 if problems else 0


if __name__ == "__main__":
    sys.exit(main())
