#!/usr/bin/env python3
"""The ptxas table: registers, stack, spills, shared memory and occupancy of every CUDA kernel.

Compiles each CUDA translation unit of the build for one architecture (sm_90: H100/H200) with
`-Xptxas -v`, the flags CMake gives it (CMakeLists.txt's myriad_cuda_library, Release, and
--fmad=false for the float64 units), and reads what ptxas reports per entry function. No GPU
is needed, only nvcc. Occupancy is the theoretical one at the launch's block size (256 threads,
include/myriad/parallel_for.h) from the architecture's limits, not a measurement.

The budget (issue 31) for a kernel of the default CUDA path: no spills, at most 1 KiB of stack
and at most 128 registers, or up to 255 for a cooperative kernel whose block size is chosen for
it (COOPERATIVE below says which and how). Kernels kept only as an option carry "Fused" in their
name and are listed but not judged.

    python3 scripts/ptxas-table.py                  # the table on stdout
    python3 scripts/ptxas-table.py --write docs/benchmarks.md   # replaces its section there
    python3 scripts/ptxas-table.py --check          # exit 1 when a default-path kernel is over
    python3 scripts/ptxas-table.py --units cuda_batch_f64   # one unit's rows (a quick try)
"""
import argparse
import concurrent.futures
import os
import re
import subprocess
import sys
import tempfile

ROOT = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
# (source, extra nvcc options, what it holds); the options mirror the CMake targets'.
UNITS = [
    ("physics/cuda_batch_f32.cu", [], "engine, float32"),
    ("physics/cuda_batch_f64.cu", ["--fmad=false"], "engine, float64"),
    ("physics/cuda_fused_f32.cu", [], "engine's fused launches, float32"),
    ("physics/cuda_fused_f64.cu", ["--fmad=false"], "engine's fused launches, float64"),
    ("envs/locomotion/runners_cuda_f32.cu", [], "physics envs, float32"),
    ("envs/locomotion/runners_cuda_f64.cu", ["--fmad=false"], "physics envs, float64"),
    ("envs/backend_cuda.cu", [], "classic and multi-agent envs"),
    ("core/cuda_probe.cu", [], "device probe"),
]
FLAGS = ["-std=c++17", "-O3", "-DNDEBUG", "--extended-lambda", "--expt-relaxed-constexpr",
         "-I", os.path.join(ROOT, "include"), "-I", ROOT, "-Xptxas", "-v"]
# sm_90 limits (CUDA C Programming Guide, compute capability 9.0).
SM = {"regs": 65536, "threads": 2048, "blocks": 32, "warps": 64, "smem": 228 * 1024,
      "smem_reserved": 1024, "reg_unit": 256, "sub_partitions": 4}
BLOCK = 256
BUDGET = {"regs": 128, "stack": 1024, "cooperative_regs": 255}
# Cooperative kernels, whose block size is chosen for them: registers up to the 255 a thread can
# have (a 256-thread block then still fits an SM's 64K registers), the rest of the budget as is.
# kind substring: (its block size, physics/launch.h's kSolveBlock and kCcdBlock; what it is).
COOPERATIVE = {"(warp per env)": (32, "a warp per env, one env per 32-thread block"),
               "(lanes per pair)": (32, "a lane group per (env, pair), 32-thread blocks")}
# Kernels whose dynamic shared memory is sized at launch to what their register-bound occupancy
# leaves a block (physics/launch.h's solve_storage_bytes); ptxas sees none of it.
SHARED_SIZED = "(warp per env)"
SMEM_PER_BLOCK_MAX = 227 * 1024  # sm_90's opt-in most a block
BEGIN, END = "<!-- ptxas-table:begin -->", "<!-- ptxas-table:end -->"


def enum_names(path, enum, prefix):
    """The enumerators of `enum` in `path`, in order, as snake_case without `prefix` (a kernel's
    template argument is an enumerator's index); a count enumerator (kNum...) is left out."""
    text = open(os.path.join(ROOT, path)).read()
    body = re.search(r"enum (?:class )?" + enum + r"(?: : \w+)? \{([^}]*)\}", text).group(1)
    names = [n.split("=")[0].strip() for n in body.split(",") if n.strip()]
    return [re.sub(r"(?<!^)([A-Z])", r"_\1", n[len(prefix):]).lower() for n in names
            if not n.startswith("kNum")]


def stage_names():
    """Stage of physics/launch.h: StageKernel's template argument is an index."""
    return enum_names("physics/launch.h", "Stage", "k")


def pair_groups():
    """PairGroup of physics/collision/contact.h: CollidePairs' template argument."""
    return enum_names("physics/collision/contact.h", "PairGroup", "kPairs")


def compile_unit(nvcc, arch, unit):
    src, extra, _ = unit
    with tempfile.TemporaryDirectory() as tmp:
        cmd = [nvcc, *FLAGS, f"-arch={arch}", *extra, "-c", os.path.join(ROOT, src), "-o",
               os.path.join(tmp, "unit.o")]
        proc = subprocess.run(cmd, capture_output=True, text=True)
    if proc.returncode != 0:
        raise SystemExit(f"nvcc failed on {src}:\n{proc.stderr[-4000:]}")
    return proc.stderr


def parse(ptxas_output):
    """Entry functions (kernels) with their properties, from `ptxas -v` output."""
    entries, props, current = set(), {}, None
    for line in ptxas_output.splitlines():
        m = re.search(r"Compiling entry function '([^']+)'", line)
        if m:
            entries.add(m.group(1))
            continue
        m = re.search(r"Function properties for (\S+)", line)
        if m:
            current = props.setdefault(m.group(1), {"stack": 0, "spill_st": 0, "spill_ld": 0,
                                                    "regs": 0, "smem": 0})
            continue
        m = re.search(r"(\d+) bytes stack frame, (\d+) bytes spill stores, (\d+) bytes spill loads",
                      line)
        if m and current is not None:
            current.update(stack=int(m.group(1)), spill_st=int(m.group(2)),
                           spill_ld=int(m.group(3)))
            continue
        m = re.search(r"Used (\d+) registers", line)
        if m and current is not None:
            current["regs"] = int(m.group(1))
            s = re.search(r"(\d+) bytes smem", line)
            current["smem"] = int(s.group(1)) if s else 0
            c = re.search(r"(\d+) bytes cumulative stack size", line)
            if c:  # the frame plus what called functions (not inlined) need
                current["stack"] = max(current["stack"], int(c.group(1)))
    # Kernels, and the device functions ptxas kept out of line (their stack and spills count
    # in the kernels that call them; ptxas does not say which).
    for name, p in props.items():
        p["kernel"] = name in entries
    return {n: p for n, p in props.items()
            if p["kernel"] or p["stack"] or p["spill_st"] or p["spill_ld"]}


def demangle(names):
    proc = subprocess.run(["c++filt"], input="\n".join(names), capture_output=True, text=True)
    return proc.stdout.splitlines() if proc.returncode == 0 else list(names)


def label(demangled, stages):
    """(kind, env): the functor a parallel_for_kernel runs with its stage and precision, and the
    env it is instantiated for ("" for the engine's kernels). Kernels that differ only by env
    share a kind, so the table lists each kind once with the worst env."""
    s = demangled
    inner = re.match(r"void myriad::parallel_for_kernel<(.*)>\(long, \1\)$", s)
    s = inner.group(1) if inner else s
    prec = " f64" if re.search(r"\bdouble\b", s) else (" f32" if re.search(r"\bfloat\b", s) else "")
    env_re = (r"myriad::envs::(?:locomotion::|legged::)?(\w+)"
              r"(?:<myriad::envs::(?:mpe::(\w+)Actions|legged::(\w+))>)?")

    def env_name(m, at):
        arg = m.group(at + 1) or m.group(at + 2)
        return m.group(at) + (f"<{arg}>" if arg else "")

    # The engine's staged kernels, on an env-major batch (block 1) or a blocked one (block 32,
    # physics/batch_layout.h): the blocked ones are labelled so.
    def blocked(block):
        return " blocked" if block and block != "1" else ""

    m = re.search(r"StageKernel<\(myriad::physics::Stage\)(\d+), (?:float|double), (\d+)>", s)
    if m:
        return f"physics.{stages[int(m.group(1))]}{blocked(m.group(2))}{prec}", ""
    m = re.search(r"myriad::physics::detail::CollidePairs<(\d+), (?:float|double), (\d+)>", s)
    if m:
        return f"physics.collision_{pair_groups()[int(m.group(1))]}{blocked(m.group(2))}{prec}", ""
    m = re.search(r"myriad::physics::detail::CollideCcdByLanes<(\d+), (?:float|double), (\d+)>", s)
    if m:
        return (f"physics.collision_{pair_groups()[int(m.group(1))]} (lanes per pair)"
                f"{blocked(m.group(2))}{prec}", "")
    m = re.search(r"myriad::physics::detail::SolveByWarp<(?:float|double), (\d+)>", s)
    if m:
        return f"physics.constraint_solve (warp per env){blocked(m.group(1))}{prec}", ""
    m = re.search(r"myriad::physics::(\w+Fused)<", s)
    if m:
        return f"physics.{m.group(1)}{prec}", ""
    m = re.search(r"myriad::envs::((?:Physics|Task)\w+)<(?:myriad::envs::PhysicsView<)?" + env_re,
                  s)
    # A physics env's kernels on an env-major batch or a blocked one (launch=blocked: MyriadSim's
    # block 32).
    sim = re.search(r"MyriadSim<(?:float|double), (\d+)>", s)
    sim_blocked = blocked(sim.group(1)) if sim else ""
    if m:
        family = "task_env" if m.group(1).startswith("Task") else "physics_env"
        return f"{family}.{m.group(1)}{sim_blocked}{prec}", env_name(m, 2)
    m = re.search(r"SimRunner<\(myriad::Device\)1, " + env_re + r", .*?>::(\w+)\(", s)
    if m:
        return f"physics_env.{m.group(4)}{sim_blocked}{prec}", env_name(m, 1)
    m = re.search(r"(launch_\w+)<\(myriad::Device\)1, " + env_re, s)
    if m:
        return f"env.{m.group(1)}", env_name(m, 2)
    s = re.sub(r"myriad::|envs::|physics::|\(myriad::Device\)1, |\(Device\)1, ", "", s)
    return s[:90] + ("..." if len(s) > 90 else ""), ""


def block_of(kind):
    return next((b for k, (b, _) in COOPERATIVE.items() if k in kind), BLOCK)


def blocks_per_sm(regs, smem, block=BLOCK):
    """(blocks an SM by its registers, by its shared memory) at `block` threads per block."""
    warps_per_block = block // 32
    reg_per_warp = -(-max(regs, 1) * 32 // SM["reg_unit"]) * SM["reg_unit"]
    # Registers are allocated per sub-partition (a quarter of the SM's, CUDA's
    # cuda_occupancy.h): the warps an SM holds are what one quarter holds, four times.
    quarter = SM["regs"] // SM["sub_partitions"]
    blocks_regs = (quarter // reg_per_warp * SM["sub_partitions"]) // warps_per_block
    blocks_smem = SM["smem"] // (smem + SM["smem_reserved"]) if smem else SM["blocks"]
    return blocks_regs, blocks_smem


def launch_storage(regs, block):
    """The shared memory a SHARED_SIZED kernel takes a block on sm_90 (solve_group.h's
    warp_solve_storage_bytes for the blocks an SM its registers allow): bytes."""
    blocks = min(blocks_per_sm(regs, 0, block)[0], SM["blocks"], SM["threads"] // block)
    share = SM["smem"] // max(blocks, 1) - SM["smem_reserved"]
    return min(max(share, 0) // 1024 * 1024, SMEM_PER_BLOCK_MAX)


def occupancy(regs, smem, block=BLOCK):
    """Theoretical occupancy (active warps / 64) at `block` threads per block on sm_90."""
    blocks_regs, blocks_smem = blocks_per_sm(regs, smem, block)
    blocks = min(blocks_regs, blocks_smem, SM["blocks"], SM["threads"] // block)
    return blocks * (block // 32) / SM["warps"]


def verdict(name, p, unit):
    # A fused kernel, or a device function ptxas kept out of line in a unit of fused launches
    # (only they call it).
    if "Fused" in name or "fused launches" in unit[2]:
        return "option (not judged)"
    cooperative = next((why for kind, (_, why) in COOPERATIVE.items() if kind in name), None)
    # The blocked layout's kernels (physics-bench --layout blocked, the physics envs'
    # launch=blocked): an option until a GPU has measured it; judged, not counted as the default
    # path's.
    option = "option (blocked layout): " if " blocked" in name else ""
    over = []
    if p["spill_st"] or p["spill_ld"]:
        over.append("spills")
    if p["stack"] > BUDGET["stack"]:
        over.append("stack")
    if p["regs"] > (BUDGET["cooperative_regs"] if cooperative else BUDGET["regs"]):
        over.append("registers")
    # The warp solve's shared memory is sized at launch to what its registers leave: static
    # shared memory on top of it would bound its occupancy first.
    if SHARED_SIZED in name and p["smem"] > 0:
        over.append(f"static shared memory ({p['smem']} B) on top of the launch's")
    if over:
        return option + ("over: " if option else "OVER: ") + ", ".join(over)
    return option + (f"ok (cooperative: {cooperative})" if cooperative else "ok")


def main():
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--arch", default="sm_90")
    ap.add_argument("--nvcc", default=os.environ.get("NVCC", "/usr/local/cuda/bin/nvcc"))
    ap.add_argument("--jobs", type=int, default=os.cpu_count() or 1)
    ap.add_argument("--write", help="a Markdown file whose ptxas-table section is replaced")
    ap.add_argument("--check", action="store_true", help="exit 1 if a default-path kernel is over")
    ap.add_argument("--units", help="only the units whose path contains this text (a partial "
                    "table, to try a change quickly; refused with --write)")
    a = ap.parse_args()
    units = [u for u in UNITS if a.units is None or a.units in u[0]]
    if not units:
        raise SystemExit(f"--units {a.units}: no unit matches (units: "
                         f"{', '.join(u[0] for u in UNITS)})")
    if a.write and len(units) != len(UNITS):
        raise SystemExit("--write takes the whole table: leave out --units")
    if not os.path.exists(a.nvcc):
        raise SystemExit(f"nvcc not found at {a.nvcc} (set NVCC or --nvcc)")
    stages = stage_names()
    with concurrent.futures.ThreadPoolExecutor(a.jobs) as pool:
        outputs = list(pool.map(lambda u: compile_unit(a.nvcc, a.arch, u), units))
    rows = []
    for unit, out in zip(units, outputs):
        kernels = parse(out)
        names = sorted(kernels)
        for mangled, pretty in zip(names, demangle(names)):
            p = kernels[mangled]
            kind, env = label(pretty, stages)
            if not p["kernel"]:
                kind += " (device function)"
            v = verdict(kind, p, unit)
            if SHARED_SIZED in kind:  # its occupancy and smem column: with the launch's storage
                p = dict(p, smem=p["smem"] + launch_storage(p["regs"], block_of(kind)))
            rows.append((unit[0], kind, env, p, occupancy(p["regs"], p["smem"], block_of(kind)),
                         v))
    # One line per (unit, kind): the worst env's numbers, and how many envs share the kind.
    groups = {}
    for src, kind, env, p, occ, v in rows:
        g = groups.setdefault((src, kind), {"n": 0, "worst": None})
        g["n"] += 1
        key = (p["spill_st"] + p["spill_ld"], p["regs"], p["stack"])
        if g["worst"] is None or key > g["worst"][0]:
            g["worst"] = (key, env, p, occ, v)
    lines = [f"`{a.arch}`, {BLOCK} threads per block (a cooperative kernel: its own); budget for "
             f"the default path: no spills, "
             f"stack at most {BUDGET['stack']} B, at most {BUDGET['regs']} registers. Generated "
             f"by `python3 scripts/ptxas-table.py --write docs/benchmarks.md`. Env kernels: one "
             f"row per kind, the numbers of the env that needs most. smem: static, and for the "
             f"warp solve the dynamic storage its launch takes (what its registers' occupancy "
             f"leaves a block).", "",
             "| unit | kernel | envs | registers | stack (B) | spill st/ld (B) | smem (B) | "
             "occupancy | budget |", "| --- | --- | --- | ---: | ---: | ---: | ---: | ---: | --- |"]
    for (src, kind), g in sorted(groups.items()):
        _, env, p, occ, v = g["worst"]
        envs = f"{g['n']} (most: {env})" if g["n"] > 1 and env else (env or "")
        lines.append(f"| {src} | {kind} | {envs} | {p['regs']} | {p['stack']} | {p['spill_st']}/"
                     f"{p['spill_ld']} | {p['smem']} | {occ:.0%} | {v} |")
    over = [r for r in rows if r[5].startswith("OVER")]
    lines += ["", f"{len(rows)} kernels; default path over budget: {len(over)}."]
    table = "\n".join(lines)
    print(table)
    if a.write:
        text = open(a.write).read() if os.path.exists(a.write) else ""
        block = f"{BEGIN}\n{table}\n{END}"
        if BEGIN in text and END in text:
            text = text[:text.index(BEGIN)] + block + text[text.index(END) + len(END):]
        else:
            text += ("\n" if text else "") + block + "\n"
        open(a.write, "w").write(text)
    return 1 if a.check and over else 0


if __name__ == "__main__":
    sys.exit(main())
