#!/usr/bin/python3
"""Benchmark of `rnnstate rewrite` on big models and a model zoo (issue 4, "Benchmark").

    /usr/bin/python3 tools/bench.py --rnnstate build/rnnstate [--workdir DIR] [--keep]
        [--big-gb 1.0] [--huge-gb 2.5] [--zoo 500] [--repeat 3] [--jobs 2] [--json FILE]

Quick smoke run:  tools/bench.py --rnnstate build/rnnstate --big-gb 0.05 --huge-gb 0.1 --zoo 20 --repeat 1

One run, side by side, on generated models (nothing is committed; everything goes to --workdir,
default a temporary directory, removed at the end unless --keep):

  big    a single-file LSTM model of --big-gb GB (decimal GB): int64 `tokens` [seq, batch] -> Gather from
         big embedding table(s) -> LSTM (dynamic batch, no initial state) -> MatMul with big projection
         weight(s) -> `logits`. Large initializers are raw_data payloads consumed by real nodes; it runs in
         ONNX Runtime.
  huge   the same structure at --huge-gb GB (> 2 GiB). Protobuf cannot serialize a message over 2 GiB, so
         both models are written at the wire level, streaming: the small part is serialized with onnx, the
         big initializer TensorProto fields are appended to the graph bytes in chunks, and ModelProto
         field 7 gets the right varint length. A wire-level walk of the written file checks that the small
         structure round-trips.
  zoo    --zoo copies/variants of models/torch/*.onnx and models/handbuilt/*.onnx in nested directories.

Measured, for big and huge: `cp IN OUT`, `rnnstate rewrite IN -o OUT`, and a Python baseline (onnx.load +
add each recurrent node's Y_h as a graph output + onnx.save, run with --python). Also, as a reference only,
`cp` followed by `sync OUT`, compared with `rnnstate rewrite --fsync` (both flush the output to disk;
by default neither does). Each tool runs
after a warm-up read of its input (`cat IN > /dev/null`) and a `sync` (so dirty pages of an earlier run do
not get flushed during the next one): all tools see a warm page cache. Tools run round-robin, --repeat
times; medians are reported. Peak memory: /proc/PID/status is sampled every --sample-ms ms (maxima of
RssAnon = anonymous memory, RssFile = file-mapped pages incl. shared libraries; peak RSS = VmHWM, the
kernel's own high-water mark of the process's RSS). wait4()'s ru_maxrss is not used: it also counts the
forked bench process's pages before exec.

Zoo: `rnnstate rewrite -j N ZOO --out-dir OUT` (or, when the binary has no directory mode, one process
per file, N at a time, said in the output) vs one Python process looping over all files. References in
the same run: `cp -r ZOO OUT`, `python -c "import onnx"` (the baseline's fixed start-up) and the
validation floor (build/rnnstate_validation_floor, tools/validation_floor.cc): only the onnx shape
inference and checker calls rnnstate makes to trust a rewrite, with the same -j, nothing written.

Checks: the rewritten big model runs in ONNX Runtime (node + onnxruntime-node, tools/bench_ort_check.mjs)
with the same outputs as the original; the rewritten huge model has every large raw_data payload
byte-identical to the input's (sha1 of the byte ranges found by a wire-level walk of both files), the same
model-level fields outside the graph and metadata, and the rnnstate metadata/state inputs and outputs.

Targets of issue 4 are printed as PASS/FAIL. The exit status is 0 even when targets fail (2 on usage
errors, 1 when the benchmark itself cannot run).
"""
import argparse
import hashlib
import json
import math
import mmap
import os
import platform
import shutil
import statistics
import subprocess
import sys
import tempfile
import time

GB = 1e9
MB = 1e6
LARGE_PAYLOAD = 1 << 20  # raw_data of at least this many bytes counts as a "large payload"
CHUNK_FLOATS = 1 << 24   # 64 MB write chunks

HERE = os.path.dirname(os.path.abspath(__file__))
REPO = os.path.dirname(HERE)


def log(msg):
    print(f"[bench {time.strftime('%H:%M:%S')}] {msg}", file=sys.stderr, flush=True)


# ---------------------------------------------------------------------------------------------
# Protobuf wire format.

def varint(n):
    out = bytearray()
    while True:
        b = n & 0x7F
        n >>= 7
        if n:
            out.append(b | 0x80)
        else:
            out.append(b)
            return bytes(out)


def key(field, wire):
    return varint((field << 3) | wire)


def read_varint(buf, pos):
    result = shift = 0
    while True:
        b = buf[pos]
        pos += 1
        result |= (b & 0x7F) << shift
        if not b & 0x80:
            return result, pos
        shift += 7
        if shift > 63:
            raise ValueError(f"bad varint at {pos}")


def walk(buf, start, end):
    """Yields (field, wire, tag_start, value_start, value_end) for each field of buf[start:end]."""
    pos = start
    while pos < end:
        tag_start = pos
        k, pos = read_varint(buf, pos)
        field, wire = k >> 3, k & 7
        if wire == 0:
            _, vend = read_varint(buf, pos)
            vstart = pos
        elif wire == 1:
            vstart, vend = pos, pos + 8
        elif wire == 5:
            vstart, vend = pos, pos + 4
        elif wire == 2:
            n, vstart = read_varint(buf, pos)
            vend = vstart + n
        else:
            raise ValueError(f"unsupported wire type {wire} at offset {tag_start}")
        if vend > end:
            raise ValueError(f"field {field} at offset {tag_start} runs past its message ({vend} > {end})")
        yield field, wire, tag_start, vstart, vend
        pos = vend


def first_field_above(buf, number):
    """Offset of the first top-level field with a field number > number (or len(buf))."""
    for field, _, ts, _, _ in walk(buf, 0, len(buf)):
        if field > number:
            return ts
    return len(buf)


class WireModel:
    """A wire-level view of a single-file ONNX model: its structure with the large raw_data payloads
    taken out (`skeleton`, parseable by onnx at any file size) and where those payloads are."""

    def __init__(self, path, threshold=LARGE_PAYLOAD):
        self.path = path
        self.size = os.path.getsize(path)
        self.payloads = []      # dicts: name, offset, size, header (TensorProto bytes without raw_data)
        self.top_fields = []    # (field, bytes) of ModelProto fields other than graph
        self.graph_count = 0
        with open(path, "rb") as f:
            mm = mmap.mmap(f.fileno(), 0, access=mmap.ACCESS_READ)
            try:
                self.skeleton = self._build(mm, threshold)
            finally:
                mm.close()

    def _build(self, mm, threshold):
        out = bytearray()
        for field, wire, ts, vs, ve in walk(mm, 0, len(mm)):
            if field == 7 and wire == 2:
                self.graph_count += 1
                g = bytearray()
                for gf, gw, gts, gvs, gve in walk(mm, vs, ve):
                    if gf == 5 and gw == 2 and gve - gvs >= threshold:
                        t = bytearray()
                        raw = None
                        name = ""
                        for tf, tw, tts, tvs, tve in walk(mm, gvs, gve):
                            if tf == 9 and tw == 2 and tve - tvs >= threshold:
                                raw = (tvs, tve - tvs)
                                continue
                            if tf == 8 and tw == 2:
                                name = bytes(mm[tvs:tve]).decode("utf-8", "replace")
                            t += mm[tts:tve]
                        if raw is not None:
                            self.payloads.append({"name": name, "offset": raw[0], "size": raw[1],
                                                  "header": bytes(t)})
                        g += key(5, 2) + varint(len(t)) + t
                    else:
                        g += mm[gts:gve]
                out += key(7, 2) + varint(len(g)) + g
            else:
                self.top_fields.append((field, bytes(mm[ts:ve])))
                out += mm[ts:ve]
        return bytes(out)

    def model(self):
        import onnx
        m = onnx.ModelProto()
        m.ParseFromString(self.skeleton)
        return m

    def payload_bytes(self):
        return sum(p["size"] for p in self.payloads)

    def hash_payloads(self):
        buf = bytearray(16 << 20)  # reused: fresh memory is slow to touch on these VMs
        view = memoryview(buf)
        with open(self.path, "rb") as f:
            fd = f.fileno()
            for p in self.payloads:
                h = hashlib.sha1()
                off, left = p["offset"], p["size"]
                while left:
                    n = os.preadv(fd, [view[:min(left, len(buf))]], off)
                    if n <= 0:
                        raise ValueError(f"{self.path}: payload of {p['name']} truncated")
                    h.update(view[:n])
                    off += n
                    left -= n
                p["sha1"] = h.hexdigest()


# ---------------------------------------------------------------------------------------------
# Model generation.

E = 64        # embedding width = LSTM input size
H = 64        # LSTM hidden size
OPSET = 13
IR = 7


def plan_big(total_bytes, max_piece_bytes):
    emb_total = total_bytes / 2
    proj_total = total_bytes - emb_total
    n_emb = max(1, math.ceil(emb_total / max_piece_bytes))
    n_proj = max(1, math.ceil(proj_total / max_piece_bytes))
    vocab = max(16, int(emb_total // n_emb // (4 * E)))
    k = max(16, int(proj_total // n_proj // (4 * H)))
    return n_emb, vocab, n_proj, k


def write_big_model(path, total_bytes, max_piece_bytes, seed):
    """Writes the LSTM model at the wire level, streaming the big payloads. Returns a description."""
    import numpy as np
    import onnx
    from onnx import TensorProto, helper, numpy_helper

    n_emb, vocab, n_proj, k = plan_big(total_bytes, max_piece_bytes)
    rng = np.random.default_rng(seed)

    big = []  # (name, dims)
    nodes = []
    for i in range(n_emb):
        big.append((f"embedding_{i}", [vocab, E]))
        nodes.append(helper.make_node("Gather", [f"embedding_{i}", "tokens"], [f"emb_{i}"], name=f"Gather_{i}"))
    x = "emb_0"
    for i in range(1, n_emb):
        nodes.append(helper.make_node("Add", [x, f"emb_{i}"], [f"emb_sum_{i}"], name=f"EmbAdd_{i}"))
        x = f"emb_sum_{i}"
    scale = 1.0 / math.sqrt(H)
    w = (rng.random((1, 4 * H, E), dtype=np.float32) - 0.5) * 2 * scale
    r = (rng.random((1, 4 * H, H), dtype=np.float32) - 0.5) * 2 * scale
    b = (rng.random((1, 8 * H), dtype=np.float32) - 0.5) * 2 * scale
    small_inits = [numpy_helper.from_array(w.astype(np.float32), "lstm.W"),
                   numpy_helper.from_array(r.astype(np.float32), "lstm.R"),
                   numpy_helper.from_array(b.astype(np.float32), "lstm.B"),
                   numpy_helper.from_array(np.array([1], dtype=np.int64), "squeeze_axes")]
    # No initial_h / initial_c (ONNX default zeros), dynamic batch: rnnstate has work to do. Y_h is
    # named but not a graph output, Y_c is absent.
    nodes.append(helper.make_node("LSTM", [x, "lstm.W", "lstm.R", "lstm.B"], ["lstm_Y", "lstm_Y_h"],
                                  name="lstm", hidden_size=H))
    nodes.append(helper.make_node("Squeeze", ["lstm_Y", "squeeze_axes"], ["lstm_out"], name="Squeeze_0"))
    for j in range(n_proj):
        big.append((f"projection_{j}", [H, k]))
        nodes.append(helper.make_node("MatMul", ["lstm_out", f"projection_{j}"], [f"proj_{j}"], name=f"MatMul_{j}"))
    y = "proj_0"
    for j in range(1, n_proj):
        out = "logits" if j == n_proj - 1 else f"proj_sum_{j}"
        nodes.append(helper.make_node("Add", [y, f"proj_{j}"], [out], name=f"ProjAdd_{j}"))
        y = out
    if y != "logits":
        nodes[-1].output[0] = "logits"
    graph = helper.make_graph(
        nodes, "bench_big_lstm",
        [helper.make_tensor_value_info("tokens", TensorProto.INT64, ["seq", "batch"])],
        [helper.make_tensor_value_info("logits", TensorProto.FLOAT, ["seq", "batch", k])],
        initializer=small_inits)
    model = helper.make_model(graph, opset_imports=[helper.make_opsetid("", OPSET)],
                              producer_name="rnnstate-bench", producer_version="1")
    model.ir_version = IR
    model.doc_string = "generated by tools/bench.py; large initializers are raw_data payloads"
    helper.set_model_props(model, {"bench": "big-lstm"})

    # Big TensorProto fields: header (dims, data_type, name) serialized by onnx, then raw_data (field 9).
    headers = []
    for name, dims in big:
        t = TensorProto(name=name, dims=dims, data_type=TensorProto.FLOAT)
        hdr = t.SerializeToString()
        n = 4 * int(np.prod(dims))
        raw_prefix = key(9, 2) + varint(n)
        body_len = len(hdr) + len(raw_prefix) + n
        headers.append((name, dims, n, key(5, 2) + varint(body_len) + hdr + raw_prefix, t))
    big_fields_len = sum(len(h[3]) + h[2] for h in headers)

    graph_bytes = model.graph.SerializeToString()
    g_split = first_field_above(graph_bytes, 5)  # after node, name, (small) initializer: canonical order
    model_wo_graph = onnx.ModelProto()
    model_wo_graph.CopyFrom(model)
    model_wo_graph.ClearField("graph")
    top = model_wo_graph.SerializeToString()
    m_split = first_field_above(top, 7)
    graph_len = len(graph_bytes) + big_fields_len

    base = ((rng.random(CHUNK_FLOATS, dtype=np.float32) - np.float32(0.5)) * np.float32(0.2)).astype(np.float32)
    buf = np.empty_like(base)
    bview = memoryview(buf).cast("B")
    chunk_no = 0
    tmp = path + ".part"
    with open(tmp, "wb") as f:
        f.write(top[:m_split])
        f.write(key(7, 2) + varint(graph_len))
        f.write(graph_bytes[:g_split])
        for name, dims, n, prefix, _ in headers:
            f.write(prefix)
            left = n
            while left:
                chunk_no += 1
                np.add(base, np.float32((chunk_no % 251) * 1e-4), out=buf)
                m = min(left, len(bview))
                f.write(bview[:m])
                left -= m
        f.write(graph_bytes[g_split:])
        f.write(top[m_split:])
    os.replace(tmp, path)

    # The small structure must round-trip: the skeleton of the file (large payloads left out) is the
    # model with the big initializers as headers only, in canonical position.
    expected = onnx.ModelProto()
    expected.CopyFrom(model)
    for *_, t in headers:
        expected.graph.initializer.append(t)
    wm = WireModel(path)
    got = wm.model()
    ok = (got == expected and wm.graph_count == 1 and len(wm.payloads) == len(headers)
          and [p["name"] for p in wm.payloads] == [h[0] for h in headers]
          and all(p["size"] == h[2] for p, h in zip(wm.payloads, headers)))
    size = os.path.getsize(path)
    expected_size = len(top) + len(key(7, 2) + varint(graph_len)) + graph_len
    if not ok or size != expected_size:
        raise RuntimeError(f"{path}: generated model does not round-trip at the wire level "
                           f"(size {size}, expected {expected_size})")
    return {"path": path, "size": size, "vocab": vocab, "k": k, "n_embedding": n_emb, "n_projection": n_proj,
            "large_tensors": [{"name": h[0], "dims": h[1], "bytes": h[2]} for h in headers],
            "over_2GiB": size >= 2 ** 31, "wire_roundtrip": True}


def build_zoo(zoo_dir, n, seed):
    import onnx
    sources = []
    for sub in ("torch", "handbuilt"):
        d = os.path.join(REPO, "models", sub)
        sources += sorted(os.path.join(d, f) for f in os.listdir(d) if f.endswith(".onnx"))
    if not sources:
        raise RuntimeError("no source models in models/torch, models/handbuilt")
    loaded = [(os.path.splitext(os.path.basename(p))[0], onnx.load(p)) for p in sources]
    paths = []
    for i in range(n):
        stem, src = loaded[i % len(loaded)]
        m = onnx.ModelProto()
        m.CopyFrom(src)
        m.doc_string = f"bench zoo variant {i} of {stem}"
        m.model_version = i + 1
        m.graph.doc_string = f"variant {i}"
        d = os.path.join(zoo_dir, f"family_{i % 7}", f"batch_{(i // 7) % 5}")
        if i % 3 == 0:
            d = os.path.join(d, "deeper")
        os.makedirs(d, exist_ok=True)
        p = os.path.join(d, f"{stem}_{i:04d}.onnx")
        onnx.save(m, p)
        paths.append(p)
    return {"files": len(paths), "sources": len(sources),
            "bytes": sum(os.path.getsize(p) for p in paths), "paths": paths}


# The recurrent operators rnnstate knows (the list its unit tests keep equal to the C++ table).
with open(os.path.join(os.path.dirname(os.path.abspath(__file__)), "recurrent_ops.json")) as _f:
    # (domain, op_type) -> the output slot of the final hidden state
    RECURRENT_OPS = {(op["domain"], op["op_type"]): op["y_h"] for op in json.load(_f)["ops"]}

BASELINE = r'''
"""Python baseline: onnx.load + add each recurrent node's Y_h as a graph output + onnx.save."""
import os, sys, time
import onnx
from onnx import TensorProto, helper

RECURRENT_OPS = %(ops)r

def add_state_outputs(model):
    g = model.graph
    have = {o.name for o in g.output}
    for i, n in enumerate(g.node):
        y_h = RECURRENT_OPS.get((n.domain if n.domain != "ai.onnx" else "", n.op_type))
        if y_h is not None:
            while len(n.output) <= y_h:
                n.output.append("")
            if not n.output[y_h]:
                n.output[y_h] = (n.name or f"{n.op_type}_{i}") + ".Y_h"
            if n.output[y_h] not in have:
                g.output.append(helper.make_tensor_value_info(n.output[y_h], TensorProto.FLOAT, None))
                have.add(n.output[y_h])

def one(src, dst):
    m = onnx.load(src)
    add_state_outputs(m)
    onnx.save(m, dst)

if sys.argv[1] == "--zoo":
    root, out = sys.argv[2], sys.argv[3]
    files = sorted(os.path.join(d, f) for d, _, fs in os.walk(root) for f in fs if f.endswith(".onnx"))
    failed = 0
    for src in files:
        dst = os.path.join(out, os.path.relpath(src, root))
        os.makedirs(os.path.dirname(dst), exist_ok=True)
        try:
            one(src, dst)
        except Exception as e:
            failed += 1
            print(f"{src}: {type(e).__name__}: {e}", file=sys.stderr)
    print(f"files={len(files)} failed={failed}")
    sys.exit(1 if failed else 0)
else:
    one(sys.argv[1], sys.argv[2])
'''


# ---------------------------------------------------------------------------------------------
# Measurement.

def read_status(pid):
    vals = {}
    try:
        with open(f"/proc/{pid}/status") as f:
            for line in f:
                k, _, v = line.partition(":")
                if k in ("VmHWM", "VmRSS", "RssAnon", "RssFile", "RssShmem"):
                    vals[k] = int(v.split()[0]) * 1024
    except (FileNotFoundError, ProcessLookupError, ValueError):
        pass
    return vals


def measure(argv, log_prefix, sample_ms, timeout):
    """Runs argv; returns wall time, CPU time, peak memory (sampled maxima + ru_maxrss), exit code."""
    out = open(log_prefix + ".stdout", "wb")
    err = open(log_prefix + ".stderr", "wb")
    peaks = {"VmHWM": 0, "VmRSS": 0, "RssAnon": 0, "RssFile": 0, "RssShmem": 0}
    samples = 0
    t0 = time.perf_counter()
    p = subprocess.Popen(argv, stdout=out, stderr=err, stdin=subprocess.DEVNULL)
    killed = False
    while True:
        st = read_status(p.pid)
        if st:
            samples += 1
            for k, v in st.items():
                peaks[k] = max(peaks[k], v)
        pid, status, ru = os.wait4(p.pid, os.WNOHANG)
        if pid:
            break
        if time.perf_counter() - t0 > timeout and not killed:
            p.kill()
            killed = True
        time.sleep(sample_ms / 1000.0)
    wall = time.perf_counter() - t0
    p.returncode = os.waitstatus_to_exitcode(status)
    out.close()
    err.close()
    with open(log_prefix + ".stderr", "rb") as f:
        tail = f.read()[-4000:].decode("utf-8", "replace").strip().splitlines()
    return {"argv": argv, "wall_s": wall, "cpu_s": ru.ru_utime + ru.ru_stime, "exit": p.returncode,
            # ru_maxrss would also count the forked bench process's pages before exec: use VmHWM.
            "killed_timeout": killed, "maxrss": peaks["VmHWM"], "ru_maxrss": ru.ru_maxrss * 1024,
            "peak_rss_anon": peaks["RssAnon"], "peak_rss_file": peaks["RssFile"],
            "peak_rss_shmem": peaks["RssShmem"], "samples": samples,
            "stderr_tail": tail[-3:]}


def warm(paths):
    """Warm page cache for the inputs (`cat > /dev/null`), then flush earlier runs' dirty pages."""
    subprocess.run(["cat", *paths], stdout=subprocess.DEVNULL, check=True)
    os.sync()


def rm(path):
    if os.path.isdir(path):
        shutil.rmtree(path, ignore_errors=True)
    elif os.path.lexists(path):
        os.unlink(path)


def median_run(runs):
    """Median wall time; memory peaks are the maximum over runs."""
    if not runs:
        return None
    agg = {"runs": len(runs), "wall_s": statistics.median(r["wall_s"] for r in runs),
           "wall_all_s": [r["wall_s"] for r in runs],
           "cpu_s": statistics.median(r["cpu_s"] for r in runs),
           "exit": max((r["exit"] for r in runs), key=abs),
           "ok": all(r["exit"] == 0 for r in runs)}
    for k in ("maxrss", "peak_rss_anon", "peak_rss_file", "samples"):
        agg[k] = max(r[k] for r in runs)
    agg["stderr_tail"] = next((r["stderr_tail"] for r in runs if r["exit"] != 0), runs[-1]["stderr_tail"])
    return agg


def bench_big(label, model_path, a, work):
    """cp / rnnstate / python / cp+sync on one big model. Keeps rnnstate's last output for checks."""
    tools = {
        "cp": lambda o: ["cp", model_path, o],
        "rnnstate": lambda o: [a.rnnstate, "rewrite", model_path, "-o", o],
        # The same rewrite, flushed to disk before the rename (compare with cp+sync).
        "rnnstate-fsync": lambda o: [a.rnnstate, "rewrite", model_path, "-o", o, "--fsync"],
        "python": lambda o: [a.python, os.path.join(work, "baseline_onnx.py"), model_path, o],
        "cp+sync": lambda o: ["sh", "-c", 'cp "$1" "$2" && sync "$2"', "sh", model_path, o],
    }
    order = ["cp", "rnnstate", "rnnstate-fsync", "python", "cp+sync"]
    if a.no_python:
        order.remove("python")
    runs = {t: [] for t in order}
    keep_out = os.path.join(work, f"{label}.rnnstate.onnx")
    for rep in range(a.repeat):
        for t in list(order):
            out = os.path.join(work, f"{label}.{t}.out.onnx")
            rm(out)
            warm([model_path])
            log(f"{label}: {t} (run {rep + 1}/{a.repeat})")
            r = measure(tools[t](out), os.path.join(work, f"{label}.{t}.{rep}"), a.sample_ms, a.timeout)
            r["output_size"] = os.path.getsize(out) if os.path.exists(out) else None
            log(f"{label}: {t}: {r['wall_s']:.2f} s, exit {r['exit']}, anon {r['peak_rss_anon'] / MB:.0f} MB, "
                f"file {r['peak_rss_file'] / MB:.0f} MB")
            runs[t].append(r)
            if t == "rnnstate" and os.path.exists(out):
                os.replace(out, keep_out)
            else:
                rm(out)
            # A Python baseline that fails (the huge model) fails the same way every time: run it once.
            if t == "python" and r["exit"] != 0:
                order.remove("python")
    res = {t: median_run(runs[t]) for t in runs}
    res["rnnstate_output"] = keep_out if os.path.exists(keep_out) else None
    return res


def check_rewritten(in_path, out_path):
    """Wire-level comparison of an input model and rnnstate's output."""
    c = {"input_size": os.path.getsize(in_path), "ok": False}
    if not out_path or not os.path.exists(out_path):
        c["error"] = "no output file"
        return c
    c["output_size"] = os.path.getsize(out_path)
    try:
        wi = WireModel(in_path)
        wo = WireModel(out_path)
        wi.hash_payloads()
        wo.hash_payloads()
        mi, mo = wi.model(), wo.model()
    except Exception as e:  # noqa: BLE001 - any failure to read the output is a failed check
        c["error"] = f"wire-level read failed: {type(e).__name__}: {e}"
        return c
    ins = {p["name"]: p for p in wi.payloads}
    outs = {p["name"]: p for p in wo.payloads}
    problems = []
    for name, p in ins.items():
        q = outs.get(name)
        if q is None:
            problems.append(f"large initializer {name} missing from the output")
        elif q["size"] != p["size"] or q["sha1"] != p["sha1"]:
            problems.append(f"payload of {name} differs")
        elif q["header"] != p["header"]:
            problems.append(f"tensor header (dims/type/name) of {name} differs")
    extra = sorted(set(outs) - set(ins))
    if extra:
        problems.append(f"unexpected large payloads in the output: {extra}")
    # Model-level fields outside the graph: identical, except metadata_props (14) may gain entries.
    ti = [(f, b) for f, b in wi.top_fields if f != 14]
    to = [(f, b) for f, b in wo.top_fields if f != 14]
    if ti != to:
        problems.append("model-level fields outside graph/metadata differ")
    mdi = {p.key: p.value for p in mi.metadata_props}
    mdo = {p.key: p.value for p in mo.metadata_props}
    if any(mdo.get(k) != v for k, v in mdi.items()):
        problems.append("existing metadata_props changed")
    # Small initializers of the input kept byte-identical.
    small_in = {t.name: t.SerializeToString() for t in mi.graph.initializer if t.name not in ins}
    small_out = {t.name: t.SerializeToString() for t in mo.graph.initializer}
    for name, b in small_in.items():
        if small_out.get(name) != b:
            problems.append(f"small initializer {name} changed")
    # The rewrite itself: rnnstate metadata, state inputs and outputs.
    states = []
    try:
        meta = json.loads(mdo.get("rnnstate", "null"))
        states = meta["states"] if meta else []
    except (ValueError, KeyError, TypeError) as e:
        problems.append(f"bad rnnstate metadata: {e}")
    g_in = {v.name for v in mo.graph.input}
    g_out = {v.name for v in mo.graph.output}
    kinds = sorted(s.get("kind") for s in states)
    if kinds != ["c", "h"]:
        problems.append(f"expected h and c state pairs in the rnnstate metadata, got {kinds}")
    for s in states:
        if s.get("input") not in g_in:
            problems.append(f"state input {s.get('input')} is not a graph input")
        if s.get("output") not in g_out:
            problems.append(f"state output {s.get('output')} is not a graph output")
    c.update({
        "large_payloads": len(wi.payloads), "large_payload_bytes": wi.payload_bytes(),
        "payloads_identical": not any("payload" in p or "missing" in p for p in problems),
        "structure_bytes_in": c["input_size"] - wi.payload_bytes(),
        "structure_bytes_out": c["output_size"] - wo.payload_bytes(),
        "states": [{k: s.get(k) for k in ("kind", "input", "output", "node")} for s in states],
        "problems": problems, "ok": not problems})
    return c


def ort_check(a, orig, rewritten, vocab):
    script = os.path.join(HERE, "bench_ort_check.mjs")
    argv = [a.node, script, "--original", orig, "--rewritten", rewritten, "--vocab", str(vocab),
            "--ort-dir", a.ort_dir, "--tol", "1e-5"]
    p = subprocess.run(argv, capture_output=True, text=True, timeout=a.timeout)
    try:
        res = json.loads(p.stdout.strip().splitlines()[-1])
    except (ValueError, IndexError):
        res = {"ok": False, "error": (p.stderr or p.stdout).strip()[-500:]}
    res["exit"] = p.returncode
    return res


def bench_zoo(a, work, zoo_dir, n_files):
    zoo_out = os.path.join(work, "zoo_out_rnnstate")
    py_out = os.path.join(work, "zoo_out_python")
    files = sorted(os.path.join(d, f) for d, _, fs in os.walk(zoo_dir) for f in fs if f.endswith(".onnx"))
    help_text = subprocess.run([a.rnnstate, "rewrite", "--help"], capture_output=True, text=True).stdout
    batch_mode = "--out-dir" in help_text and "--jobs" in help_text
    res = {"files": n_files, "jobs": a.jobs, "batch_mode": batch_mode}
    rn_runs, py_runs, cp_runs, floor_runs, import_runs = [], [], [], [], []
    goal_ratios = []  # per round: rnnstate / (cp -r + floor), the three run one after the other
    floor_bin = a.floor or os.path.join(os.path.dirname(a.rnnstate), "rnnstate_validation_floor")
    pairs_file = os.path.join(work, "zoo_pairs.txt")
    with open(pairs_file, "w") as f:
        for src in files:
            f.write(f"{src}\t{os.path.join(zoo_out, os.path.relpath(src, zoo_dir))}\n")
    cp_out = os.path.join(work, "zoo_out_cp")
    for rep in range(a.repeat):
        rm(zoo_out)
        warm(files)
        log(f"zoo: rnnstate -j {a.jobs} (run {rep + 1}/{a.repeat})")
        if batch_mode:
            r = measure([a.rnnstate, "rewrite", "-j", str(a.jobs), zoo_dir, "--out-dir", zoo_out],
                        os.path.join(work, f"zoo.rnnstate.{rep}"), a.sample_ms, a.timeout)
        else:
            r = per_file_fallback(a, files, zoo_dir, zoo_out)
        r["outputs"] = sum(1 for _, _, fs in os.walk(zoo_out) for f in fs if f.endswith(".onnx")) \
            if os.path.isdir(zoo_out) else 0
        log(f"zoo: rnnstate: {r['wall_s']:.2f} s, exit {r['exit']}, {r['outputs']} outputs")
        rn_runs.append(r)
        # References that bound what any tool can do here: copying the files, and the validation work
        # alone (parse + onnx shape inference on each input, checker + shape inference on each output).
        if os.access(floor_bin, os.X_OK) and r["exit"] == 0:
            warm(files)
            r = measure([floor_bin, str(a.jobs), pairs_file], os.path.join(work, f"zoo.floor.{rep}"),
                        a.sample_ms, a.timeout)
            r["outputs"] = n_files
            log(f"zoo: validation floor: {r['wall_s']:.3f} s, exit {r['exit']}")
            floor_runs.append(r)
        rm(cp_out)
        warm(files)
        r = measure(["cp", "-r", zoo_dir, cp_out], os.path.join(work, f"zoo.cp.{rep}"), a.sample_ms, a.timeout)
        r["outputs"] = n_files
        log(f"zoo: cp -r: {r['wall_s']:.3f} s")
        cp_runs.append(r)
        if len(floor_runs) == rep + 1 and rn_runs[-1]["exit"] == 0:
            goal_ratios.append({key: rn_runs[-1][key] / below for key in ("wall_s", "cpu_s")
                                if (below := (r.get(key) or 0) + (floor_runs[-1].get(key) or 0)) > 0})
        rm(cp_out)
        if not a.no_python:
            rm(py_out)
            warm(files)
            log(f"zoo: python (run {rep + 1}/{a.repeat})")
            r = measure([a.python, os.path.join(work, "baseline_onnx.py"), "--zoo", zoo_dir, py_out],
                        os.path.join(work, f"zoo.python.{rep}"), a.sample_ms, a.timeout)
            r["outputs"] = sum(1 for _, _, fs in os.walk(py_out) for f in fs if f.endswith(".onnx")) \
                if os.path.isdir(py_out) else 0
            log(f"zoo: python: {r['wall_s']:.2f} s, exit {r['exit']}, {r['outputs']} outputs")
            py_runs.append(r)
            r = measure([a.python, "-c", "import onnx"], os.path.join(work, f"zoo.import.{rep}"),
                        a.sample_ms, a.timeout)
            r["outputs"] = 0
            import_runs.append(r)
    for name, runs in (("rnnstate", rn_runs), ("python", py_runs), ("cp -r", cp_runs),
                       ("floor", floor_runs), ("import onnx", import_runs)):
        if runs:
            m = median_run(runs)
            m["outputs"] = min(r["outputs"] for r in runs)
            m["files_per_s"] = n_files / m["wall_s"] if m["wall_s"] > 0 else None
            res[name] = m
    if goal_ratios:
        res["goal_ratio"] = {key: statistics.median(g[key] for g in goal_ratios)
                             for key in ("wall_s", "cpu_s") if all(key in g for g in goal_ratios)}
    rm(zoo_out)
    rm(py_out)
    return res


def per_file_fallback(a, files, zoo_dir, zoo_out):
    """One rnnstate process per file, a.jobs at a time (binary without a directory mode)."""
    t0 = time.perf_counter()
    pending = list(files)
    running = []
    worst = 0
    while pending or running:
        while pending and len(running) < a.jobs:
            src = pending.pop(0)
            dst = os.path.join(zoo_out, os.path.relpath(src, zoo_dir))
            os.makedirs(os.path.dirname(dst), exist_ok=True)
            running.append(subprocess.Popen([a.rnnstate, "-q", "rewrite", src, "-o", dst],
                                            stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL))
        time.sleep(0.001)
        still = []
        for p in running:
            if p.poll() is None:
                still.append(p)
            else:
                worst = max(worst, p.returncode)
        running = still
    return {"argv": ["(one process per file)"], "wall_s": time.perf_counter() - t0, "cpu_s": 0.0,
            "exit": worst, "maxrss": 0, "peak_rss_anon": 0, "peak_rss_file": 0,
            "samples": 0, "stderr_tail": [], "fallback": True}


# ---------------------------------------------------------------------------------------------
# Report.

def fmt_s(x):
    return "-" if x is None else (f"{x:.3f}" if x < 10 else f"{x:.1f}")


def fmt_mb(x):
    return "-" if not x else f"{x / MB:,.0f}"


def machine_facts(a):
    mem = ""
    with open("/proc/meminfo") as f:
        for line in f:
            if line.startswith("MemTotal:"):
                mem = f"{int(line.split()[1]) / 1024 / 1024:.1f} GiB"
    cpu = ""
    try:
        with open("/proc/cpuinfo") as f:
            for line in f:
                if line.startswith("model name"):
                    cpu = line.split(":", 1)[1].strip()
                    break
    except OSError:
        pass
    ver = subprocess.run([a.rnnstate, "--version"], capture_output=True, text=True).stdout.strip()
    h = hashlib.sha1()
    with open(a.rnnstate, "rb") as f:
        h.update(f.read())
    st = os.stat(a.rnnstate)
    import onnx
    return {"date": time.strftime("%Y-%m-%d %H:%M:%S %Z"), "nproc": os.cpu_count(), "memory": mem, "cpu": cpu,
            "kernel": platform.release(), "python": sys.version.split()[0], "onnx": onnx.__version__,
            "rnnstate": a.rnnstate, "rnnstate_version": ver, "rnnstate_sha1": h.hexdigest()[:12],
            "rnnstate_mtime": time.strftime("%Y-%m-%d %H:%M:%S", time.localtime(st.st_mtime))}


def status_text(r):
    if r is None:
        return "-"
    if r["exit"] == 0:
        return "ok"
    lines = [l.strip() for l in (r.get("stderr_tail") or []) if l.strip()]
    tail = lines[-1] if lines else ""
    if len(tail) > 110:
        tail = tail[:107] + "..."
    return f"exit {r['exit']}: {tail}" if tail else f"exit {r['exit']}"


def print_report(res, a):
    lines = []
    P = lines.append
    m = res["machine"]
    P(f"rnnstate benchmark  {m['date']}  nproc={m['nproc']}  memory={m['memory']}  cpu={m['cpu']}")
    P(f"binary: {m['rnnstate']} ({m['rnnstate_version']}, sha1 {m['rnnstate_sha1']}, built {m['rnnstate_mtime']})")
    P(f"python baseline: {a.python} (onnx {m['onnx']}): onnx.load + add Y_h graph output + onnx.save")
    P(f"median of {a.repeat} run(s); each run after `cat IN > /dev/null` + `sync` (warm page cache for every tool)")
    P(f"memory: /proc/PID/status sampled every {a.sample_ms:g} ms, maxima of RssAnon (anonymous memory), RssFile "
      "(file-mapped pages, incl. shared libraries) and VmHWM (peak RSS); MB = 10^6 bytes, GB = 10^9 bytes")
    P("")
    for label in ("big", "huge"):
        b = res.get(label)
        if not b:
            continue
        g = b["model"]
        P(f"## {label}: {g['size'] / GB:.2f} GB single file ({g['size']:,} bytes; {len(g['large_tensors'])} large "
          f"tensors; over 2 GiB: {'yes' if g['over_2GiB'] else 'no'})")
        P(f"{'tool':<19} {'wall s':>8} {'cpu s':>7} {'peak RSS MB':>12} {'RssAnon MB':>11} {'RssFile MB':>11}  status")
        for t in ("cp", "rnnstate", "rnnstate-fsync", "python", "cp+sync"):
            r = b["runs"].get(t)
            if not r:
                continue
            name = {"cp+sync": "cp+sync*", "rnnstate-fsync": "rnnstate --fsync*"}.get(t, t)
            P(f"{name:<19} {fmt_s(r['wall_s']):>8} {fmt_s(r['cpu_s']):>7} {fmt_mb(r['maxrss']):>12} "
              f"{fmt_mb(r['peak_rss_anon']):>11} {fmt_mb(r['peak_rss_file']):>11}  {status_text(r)}")
        rt = b["ratios"]
        P(f"ratios: rnnstate/cp = {rt['rnnstate_over_cp']:.2f}x" if rt.get("rnnstate_over_cp") else "ratios: rnnstate/cp = -")
        if rt.get("python_over_rnnstate"):
            P(f"        python/rnnstate = {rt['python_over_rnnstate']:.1f}x")
        else:
            P("        python/rnnstate = - (python baseline failed or not run)")
        if rt.get("fsync_over_cp_sync"):
            P(f"        (rnnstate --fsync)/(cp+sync) = {rt['fsync_over_cp_sync']:.2f}x   "
              "(* reference: both flush the output to disk)")
        P("")
    z = res.get("zoo")
    if z:
        P(f"## zoo: {z['files']} small models ({z['bytes'] / MB:.1f} MB) in nested directories, "
          f"copies/variants of {z['sources']} models from models/torch and models/handbuilt")
        mode = (f"rnnstate rewrite -j {z['jobs']} ZOO --out-dir OUT" if z["batch_mode"] else
                f"FALLBACK: binary has no directory mode; one rnnstate process per file, {z['jobs']} at a time")
        P(f"rnnstate: {mode}")
        P(f"{'tool':<10} {'wall s':>8} {'cpu s':>7} {'files/s':>9} {'outputs':>8} {'peak RSS MB':>12}  status")
        for t in ("rnnstate", "python", "cp -r", "floor", "import onnx"):
            r = z.get(t)
            if r:
                fps = f"{r['files_per_s']:>9.1f}" if r["outputs"] else f"{'-':>9}"
                P(f"{t:<11} {fmt_s(r['wall_s']):>8} {fmt_s(r['cpu_s']) if r['cpu_s'] else '-':>7} "
                  f"{fps} {r['outputs']:>8} {fmt_mb(r['maxrss']):>12}  {status_text(r)}")
        P("(wall time of the whole command: python includes interpreter start-up and `import onnx`;")
        P(" references: `cp -r ZOO OUT` copies the files; `floor` is tools/validation_floor.cc with the same -j:")
        P(" parse + onnx shape inference of each input, checker + shape inference of each rnnstate output,")
        P(" nothing written; `import onnx` is the baseline's fixed start-up)")
        if z.get("speedup"):
            P(f"ratio: rnnstate files/s / python files/s = {z['speedup']:.1f}x")
        if z.get("goal_ratio"):
            # Issue 36's goal: within 1.5x of copying the files plus the validation floor, the onnx calls
            # that validating a rewrite cannot skip (the median of each round's ratio: a round runs the
            # three one after the other).
            parts = [f"{what} {z['goal_ratio'][key]:.2f}x" for key, what in (("wall_s", "wall"), ("cpu_s", "cpu"))
                     if key in z["goal_ratio"]]
            if parts:
                P(f"ratio: rnnstate / (cp -r + floor) = {'; '.join(parts)} (issue 36's goal: 1.5x)")
        P("")
    P("## checks")
    for c in res["checks"]:
        P(f"{c['status']:<5} {c['name']}: {c['detail']}")
    P("")
    P("## targets (issue 4)")
    for t in res["targets"]:
        P(f"{t['status']:<5} {t['name']}: {t['detail']}")
    n_pass = sum(t["status"] == "PASS" for t in res["targets"])
    n_all = sum(t["status"] != "SKIP" for t in res["targets"])
    P("")
    P(f"SUMMARY: {n_pass} of {n_all} targets met" +
      ("" if n_pass == n_all else "; failed: " + ", ".join(t["name"] for t in res["targets"] if t["status"] == "FAIL")))
    print("\n".join(lines), flush=True)


def ratio(x, y):
    return x / y if x and y else None


def main():
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0],
                                 formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--rnnstate", default=os.path.join(REPO, "build", "rnnstate"), help="binary under test")
    ap.add_argument("--workdir", help="where generated models go (default: a temporary directory)")
    ap.add_argument("--keep", action="store_true", help="keep the generated files")
    ap.add_argument("--big-gb", type=float, default=1.0, help="size of the big model, GB (0 = skip)")
    ap.add_argument("--huge-gb", type=float, default=2.5, help="size of the huge model, GB (0 = skip)")
    ap.add_argument("--zoo", type=int, default=500, help="number of zoo models (0 = skip)")
    ap.add_argument("--max-tensor-gb", type=float, default=0.75, help="largest single initializer, GB")
    ap.add_argument("--repeat", type=int, default=3, choices=(1, 2, 3), help="runs per measurement (median)")
    ap.add_argument("--jobs", type=int, default=2, help="-j for the zoo rewrite")
    ap.add_argument("--sample-ms", type=float, default=2.0, help="/proc sampling period")
    ap.add_argument("--timeout", type=float, default=1800.0, help="per process, seconds")
    ap.add_argument("--floor", help="validation floor binary (default: rnnstate_validation_floor beside --rnnstate)")
    ap.add_argument("--python", default="/usr/bin/python3", help="python with onnx for the baseline")
    ap.add_argument("--no-python", action="store_true", help="skip the Python baseline")
    ap.add_argument("--node", default="node")
    ap.add_argument("--ort-dir", default=os.path.join(REPO, "tests", "e2e"),
                    help="directory whose node_modules holds onnxruntime-node")
    ap.add_argument("--json", help="also write all results as JSON to this file")
    ap.add_argument("--seed", type=int, default=4)
    a = ap.parse_args()
    a.rnnstate = os.path.abspath(a.rnnstate)
    if not os.access(a.rnnstate, os.X_OK):
        ap.error(f"--rnnstate {a.rnnstate}: not an executable")

    work = os.path.abspath(a.workdir) if a.workdir else tempfile.mkdtemp(prefix="rnnstate-bench-")
    os.makedirs(work, exist_ok=True)
    need = 0
    if a.big_gb:
        need += 3 * a.big_gb * GB
    if a.huge_gb:
        need += 3 * a.huge_gb * GB
    free = shutil.disk_usage(work).free
    if need > free * 0.9:
        print(f"bench: not enough disk in {work}: need ~{need / GB:.1f} GB, {free / GB:.1f} GB free", file=sys.stderr)
        return 1
    with open(os.path.join(work, "baseline_onnx.py"), "w") as f:
        f.write(BASELINE % {"ops": RECURRENT_OPS})
    log(f"workdir {work}; binary {a.rnnstate}")

    res = {"machine": machine_facts(a), "args": vars(a), "workdir": work, "checks": [], "targets": []}
    checks, targets = res["checks"], res["targets"]

    def add(lst, name, ok, detail):
        lst.append({"name": name, "status": "SKIP" if ok is None else ("PASS" if ok else "FAIL"), "detail": detail})

    try:
        for label, gb in (("big", a.big_gb), ("huge", a.huge_gb)):
            if not gb:
                continue
            path = os.path.join(work, f"{label}.onnx")
            log(f"generating {label} model ({gb} GB) -> {path}")
            t0 = time.perf_counter()
            model = write_big_model(path, gb * GB, a.max_tensor_gb * GB, a.seed + (label == "huge"))
            model["generate_s"] = time.perf_counter() - t0
            log(f"generated {model['size']:,} bytes in {model['generate_s']:.1f} s (wire-level round trip ok)")
            runs = bench_big(label, path, a, work)
            out = runs.pop("rnnstate_output")
            cp, rn, py, cps, fs_ = (runs.get(t) for t in ("cp", "rnnstate", "python", "cp+sync", "rnnstate-fsync"))
            ratios = {"rnnstate_over_cp": ratio(rn["wall_s"], cp["wall_s"]) if rn["ok"] else None,
                      "python_over_rnnstate": ratio(py["wall_s"], rn["wall_s"]) if py and py["ok"] and rn["ok"] else None,
                      "fsync_over_cp_sync": ratio(fs_["wall_s"], cps["wall_s"]) if fs_ and fs_["ok"] and cps else None}
            res[label] = {"model": model, "runs": runs, "ratios": ratios}
            log(f"{label}: checking rnnstate's output at the wire level")
            chk = check_rewritten(path, out)
            res[label]["check"] = chk
            sizes = f"input {chk['input_size']:,} bytes, output {chk.get('output_size', 0) or 0:,} bytes"
            if chk.get("error"):
                detail = f"{chk['error']} ({status_text(rn)}); {sizes}"
            else:
                detail = (f"{chk['large_payloads']} large raw_data payloads ({chk['large_payload_bytes'] / GB:.2f} GB) "
                          f"sha1-identical: {'yes' if chk['payloads_identical'] else 'NO'}; structure "
                          f"{chk['structure_bytes_in']:,} -> {chk['structure_bytes_out']:,} bytes; states "
                          f"{', '.join(s['kind'] + ':' + str(s['input']) + '->' + str(s['output']) for s in chk['states'])}"
                          f"; {sizes}" + ("" if chk["ok"] else "; problems: " + "; ".join(chk["problems"][:4])))
            add(checks, f"{label}: rnnstate output byte-identical outside the rewritten graph", chk["ok"], detail)
            if label == "big":
                if out:
                    log("big: running original and rewritten model in ONNX Runtime")
                    o = ort_check(a, path, out, model["vocab"])
                    res[label]["ort"] = o
                    if o.get("error"):
                        detail = f"error: {o['error']}"
                    else:
                        detail = (f"outputs {o.get('compared')} max_abs_diff={o.get('max_abs_diff'):.3g} "
                                  f"(tol 1e-5), inputs {o.get('inputs_rewritten')}, new outputs "
                                  f"{o.get('extra_outputs')}")
                    add(checks, "big: rewritten model runs in ONNX Runtime with the original's outputs",
                        bool(o.get("ok")), detail)
                else:
                    o = None
                    add(checks, "big: rewritten model runs in ONNX Runtime with the original's outputs", False,
                        "rnnstate wrote no output")
                anon = rn["peak_rss_anon"]
                add(targets, "big: rnnstate wall time within 3x of cp",
                    ratios["rnnstate_over_cp"] is not None and ratios["rnnstate_over_cp"] <= 3.0,
                    f"rnnstate {fmt_s(rn['wall_s'])} s vs cp {fmt_s(cp['wall_s'])} s = "
                    + (f"{ratios['rnnstate_over_cp']:.2f}x" if ratios["rnnstate_over_cp"] else status_text(rn)))
                if py:
                    add(targets, "big: rnnstate at least 20x faster than the Python baseline",
                        ratios["python_over_rnnstate"] is not None and ratios["python_over_rnnstate"] >= 20.0,
                        f"python {fmt_s(py['wall_s'])} s vs rnnstate {fmt_s(rn['wall_s'])} s = "
                        + (f"{ratios['python_over_rnnstate']:.1f}x" if ratios["python_over_rnnstate"]
                           else f"n/a (python: {status_text(py)}; rnnstate: {status_text(rn)})"))
                else:
                    add(targets, "big: rnnstate at least 20x faster than the Python baseline", None, "--no-python")
                add(targets, "big: rnnstate anonymous memory under 100 MB", rn["ok"] and 0 < anon < 100 * MB,
                    f"peak RssAnon {anon / MB:.1f} MB (peak RssFile {rn['peak_rss_file'] / MB:.0f} MB, "
                    f"peak RSS {rn['maxrss'] / MB:.0f} MB)")
                add(targets, "big: rewritten model gives the original's outputs in ONNX Runtime",
                    bool(o and o.get("ok")) and chk["ok"], "see checks")
            else:
                add(targets, f"huge ({model['size'] / GB:.2f} GB): rewritten correctly",
                    rn["ok"] and chk["ok"],
                    f"rnnstate {status_text(rn)}, {fmt_s(rn['wall_s'])} s ({ratios['rnnstate_over_cp']:.2f}x cp)"
                    if rn["ok"] and ratios["rnnstate_over_cp"] else f"rnnstate {status_text(rn)}")
                if py:
                    how = (("succeeded (unexpected over 2 GiB)" if model["over_2GiB"] else
                            "succeeded (the model is under 2 GiB at this size)") if py["ok"] else
                           f"failed as expected after {fmt_s(py['wall_s'])} s, peak RSS {fmt_mb(py['maxrss'])} MB, "
                           f"peak RssAnon {fmt_mb(py['peak_rss_anon'])} MB: {status_text(py)}")
                    checks.append({"name": "huge: Python baseline (onnx.load over 2 GiB)", "status": "INFO",
                                   "detail": how})
            rm(path)
            rm(out or "")
        if a.zoo:
            zoo_dir = os.path.join(work, "zoo")
            log(f"generating zoo of {a.zoo} models -> {zoo_dir}")
            zinfo = build_zoo(zoo_dir, a.zoo, a.seed)
            z = bench_zoo(a, work, zoo_dir, zinfo["files"])
            z["bytes"], z["sources"] = zinfo["bytes"], zinfo["sources"]
            rn, py = z.get("rnnstate"), z.get("python")
            z["speedup"] = ratio(rn["files_per_s"], py["files_per_s"]) if rn and py else None
            res["zoo"] = z
            add(checks, "zoo: every file rewritten", rn["outputs"] == z["files"] and rn["exit"] == 0,
                f"{rn['outputs']} of {z['files']} outputs, exit {rn['exit']}"
                + ("" if z["batch_mode"] else " (fallback: one process per file)"))
            if py:
                budget = z["files"] / (10 * py["files_per_s"])
                refs = [f"10x the baseline means {z['files']} files in {fmt_s(budget)} s"]
                for key, what in (("cp -r", "`cp -r` of the zoo takes"), ("floor", "the validation floor takes")):
                    if z.get(key):
                        refs.append(f"{what} {fmt_s(z[key]['wall_s'])} s")
                checks.append({"name": "zoo: what 10x would take", "status": "INFO", "detail": "; ".join(refs)})
                add(targets, f"zoo: rnnstate -j {a.jobs} at least 10x the Python baseline's files/s",
                    z["speedup"] is not None and z["speedup"] >= 10.0,
                    f"{rn['files_per_s']:.1f} vs {py['files_per_s']:.1f} files/s = {z['speedup']:.1f}x"
                    + ("" if z["batch_mode"] else " (fallback: one process per file)"))
            else:
                add(targets, f"zoo: rnnstate -j {a.jobs} at least 10x the Python baseline's files/s", None, "--no-python")
            if not a.keep:
                rm(zoo_dir)
    finally:
        if not a.keep:
            if a.workdir:
                for f in os.listdir(work):
                    p = os.path.join(work, f)
                    if f.endswith(".onnx") or f.startswith("zoo"):
                        rm(p)
            else:
                shutil.rmtree(work, ignore_errors=True)

    print_report(res, a)
    if a.json:
        with open(a.json, "w") as f:
            json.dump(res, f, indent=1, default=str)
    return 0


if __name__ == "__main__":
    sys.exit(main())
