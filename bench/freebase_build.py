"""What `kgreason kg build freebase-rdf-latest.gz` costs, against Virtuoso's bulk loader
on the same dump, in the same run.

    python bench/freebase_build.py --sizes 10M,30M,100M --memory 2G --virtuoso 10M,30M

For each size it generates the synthetic dump (bench/freebase_dump.py, cached in --dir),
then times a fresh `kgreason kg build DUMP --memory M` process: wall time, peak RSS
(the child's ru_maxrss), lines per second. For the sizes in --virtuoso it bulk-loads the
same gzip file into a fresh Virtuoso (ld_dir + rdf_loader_run + checkpoint, buffers sized
to the same memory budget, as Virtuoso's own guidance sizes them) and prints the ratio.
Last, both rates are extrapolated linearly to the published dump (1.9B lines) and to the
954,538,780-triple cleaned KG (PoG#2). A linear extrapolation is a guess: it assumes the
rate measured here holds 20x further, which the by-size rows let the reader check.
"""

from __future__ import annotations

import argparse
import json
import os
import subprocess
import sys
import tempfile
import time
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))
sys.path.insert(0, str(Path(__file__).resolve().parent))

from tests.servers import VIRTUOSO_INI, _popen, _wait_ready, find_binary, free_port

import freebase_dump

FULL_DUMP_LINES = 1_900_000_000  # freebase-rdf-latest.gz, as issue 33 gives it
CLEANED_TRIPLES = 954_538_780  # PoG#2: the author's cleaned dump


def size(text: str) -> int:
    text = text.strip().upper()
    scale = {"K": 10**3, "M": 10**6, "B": 10**9, "G": 2**30}.get(text[-1:], 1)
    return int(float(text.rstrip("KMBG")) * scale)


def child_run(cmd: list[str], env: dict[str, str] | None = None) -> tuple[float, int, str]:
    """(wall seconds, peak RSS bytes, stdout) of one fresh process."""
    t0 = time.perf_counter()
    proc = subprocess.Popen(cmd, stdout=subprocess.PIPE, stderr=subprocess.PIPE, env=env)
    out, err = proc.communicate()
    wall = time.perf_counter() - t0
    rss = _maxrss_of_children()
    if proc.returncode != 0:
        raise SystemExit(f"{' '.join(cmd)} failed:\n{err.decode()[-2000:]}")
    return wall, rss, out.decode()


def _maxrss_of_children() -> int:
    import resource

    # RUSAGE_CHILDREN's maxrss is the largest of all waited-for children: each build runs
    # in its own bench process for that reason (see main: one size per --one call)
    return resource.getrusage(resource.RUSAGE_CHILDREN).ru_maxrss * 1024


def kgreason_build(dump: Path, out: Path, memory: str) -> dict[str, object]:
    cmd = [sys.executable, "-m", "kgreason", "kg", "build", str(dump), "--out", str(out)]
    cmd += ["--force", "--no-warm", "--json", "--memory", memory]
    wall, rss, stdout = child_run(cmd)
    built = json.loads(stdout)
    return {"wall_s": wall, "peak_rss": rss, **built}


def virtuoso_load(dump: Path, work: Path, memory_bytes: int) -> dict[str, float]:
    """A fresh Virtuoso, the dump bulk-loaded as it is, checkpointed; wall time of the load
    and the server's peak RSS (VmHWM)."""
    binary, isql = find_binary("virtuoso-t"), find_binary("isql-vt")
    if not binary or not isql:
        raise SystemExit("virtuoso-t / isql-vt not installed (apt virtuoso-opensource)")
    (work / "data").mkdir(parents=True, exist_ok=True)
    link = work / "data" / "freebase.nt.gz"  # the loader picks the parser by the name
    link.unlink(missing_ok=True)
    os.link(dump, link) if dump.stat().st_dev == work.stat().st_dev else link.symlink_to(dump)
    buffers = memory_bytes * 2 // 3 // 8192  # Virtuoso's guide: 2/3 of the memory for buffers
    sql_port, http_port = free_port(), free_port()
    ini = work / "virtuoso.ini"
    ini.write_text(
        VIRTUOSO_INI.format(
            d=work,
            sql_port=sql_port,
            http_port=http_port,
            max_rows=10000,
            max_sorted=10000,
            buffers=buffers,
            dirty=buffers * 3 // 4,
        )
    )
    proc = _popen([binary, "+foreground", "+configfile", str(ini)], work / "stdout.log", work)
    try:
        from tests.servers import RunningServer

        server = RunningServer(
            "Virtuoso", f"http://127.0.0.1:{http_port}/sparql", proc, work, work / "stdout.log"
        )
        _wait_ready(server, 120)
        sql = (
            f"ld_dir('{work}/data', 'freebase.nt.gz', 'http://rdf.freebase.com'); "
            "rdf_loader_run(); checkpoint; SELECT ll_file, ll_error FROM DB.DBA.load_list;"
        )
        t0 = time.perf_counter()
        res = subprocess.run(
            [isql, f"127.0.0.1:{sql_port}", "dba", "dba", f"exec={sql}"],
            capture_output=True,
            text=True,
            timeout=6 * 3600,
            cwd=work,
        )
        wall = time.perf_counter() - t0
        if res.returncode != 0 or "Error" in res.stdout:
            raise SystemExit(
                f"Virtuoso bulk load failed:\n{res.stdout[-2000:]}{res.stderr[-2000:]}"
            )
        count = subprocess.run(
            [
                isql,
                f"127.0.0.1:{sql_port}",
                "dba",
                "dba",
                "exec=SPARQL SELECT COUNT(*) FROM <http://rdf.freebase.com> WHERE { ?s ?p ?o };",
            ],
            capture_output=True,
            text=True,
            timeout=3600,
            cwd=work,
        )
        hwm = _vm_hwm(proc.pid)
        triples = next((int(x) for x in count.stdout.split() if x.isdigit()), -1)
    finally:
        proc.terminate()
        try:
            proc.wait(60)
        except subprocess.TimeoutExpired:
            proc.kill()
            proc.wait()
    return {"wall_s": wall, "peak_rss": hwm, "triples": triples}


def _vm_hwm(pid: int) -> int:
    try:
        for row in Path(f"/proc/{pid}/status").read_text().splitlines():
            if row.startswith("VmHWM:"):
                return int(row.split()[1]) * 1024
    except OSError:
        pass
    return -1


def one(args: argparse.Namespace) -> None:
    """One size, in this process (so RUSAGE_CHILDREN is this build's alone)."""
    lines = size(args.one)
    d = Path(args.dir)
    d.mkdir(parents=True, exist_ok=True)
    dump = d / f"fb-{args.one}.gz"
    gen_s = 0.0
    if not dump.exists():
        t0 = time.perf_counter()
        freebase_dump.generate(dump, lines, seed=0)
        gen_s = time.perf_counter() - t0
    row: dict[str, object] = {"size": args.one, "lines": lines, "dump_bytes": dump.stat().st_size}
    row["generate_s"] = round(gen_s, 1)
    with tempfile.TemporaryDirectory(dir=d) as tmp:
        row["kgreason"] = kgreason_build(dump, Path(tmp) / "store", args.memory)
    if args.virtuoso_here:
        with tempfile.TemporaryDirectory(dir=d) as tmp:
            row["virtuoso"] = virtuoso_load(dump, Path(tmp), size(args.memory.rstrip("B")))
    print(json.dumps(row))


def main() -> int:
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawTextHelpFormatter)
    ap.add_argument("--sizes", default="10M,30M,100M")
    ap.add_argument("--virtuoso", default="10M,30M", help="sizes also loaded into Virtuoso")
    ap.add_argument("--memory", default="2G")
    ap.add_argument("--dir", default="/tmp/kgreason-fb-bench")
    ap.add_argument("--one", help=argparse.SUPPRESS)
    ap.add_argument("--virtuoso-here", action="store_true", help=argparse.SUPPRESS)
    a = ap.parse_args()
    if a.one:
        one(a)
        return 0
    rows = []
    for s in a.sizes.split(","):
        cmd = [sys.executable, __file__, "--one", s, "--memory", a.memory, "--dir", a.dir]
        if s in a.virtuoso.split(","):
            cmd.append("--virtuoso-here")
        res = subprocess.run(cmd, capture_output=True, text=True)
        if res.returncode != 0:
            print(res.stderr[-3000:], file=sys.stderr)
            return 1
        rows.append(json.loads(res.stdout.strip().splitlines()[-1]))
        report(rows, a.memory)
    return 0


def report(rows: list[dict], memory: str) -> None:
    print(f"\nkgreason kg build on a synthetic Freebase dump, --memory {memory}")
    print(
        f"{'lines':>6} {'dump MB':>8} {'kept triples':>13} {'entities':>10} {'build s':>8} "
        f"{'peak RSS':>9} {'lines/s':>9} | {'Virtuoso s':>10} {'its RSS':>8} {'ratio':>6}"
    )
    for r in rows:
        k = r["kgreason"]
        v = r.get("virtuoso")
        vir = (
            ""
            if not v
            else (
                f"{v['wall_s']:>10.1f} {v['peak_rss'] / 2**30:>7.2f}G {v['wall_s'] / k['wall_s']:>5.1f}x"
            )
        )
        print(
            f"{r['size']:>6} {r['dump_bytes'] / 1e6:>8.0f} {k['triples']:>13,} {k['entities']:>10,} "
            f"{k['wall_s']:>8.1f} {k['peak_rss'] / 2**30:>8.2f}G "
            f"{r['lines'] / k['wall_s']:>9,.0f} | {vir}"
        )
    big = rows[-1]
    rate = big["lines"] / big["kgreason"]["wall_s"]
    kept = big["kgreason"]["triples"] / big["lines"]
    print(
        f"extrapolated from {big['size']} (linear): the 1.9B-line dump in "
        f"{FULL_DUMP_LINES / rate / 3600:.1f} h; a dump whose cleaning keeps the "
        f"954,538,780 triples of PoG#2 in {CLEANED_TRIPLES / kept / rate / 3600:.1f} h "
        f"(at this dump's {kept:.0%} kept)"
    )
    vrows = [r for r in rows if r.get("virtuoso")]
    if vrows:
        v = vrows[-1]
        vrate = v["lines"] / v["virtuoso"]["wall_s"]
        print(
            f"Virtuoso at its {v['size']} rate: the 1.9B-line dump in "
            f"{FULL_DUMP_LINES / vrate / 3600:.1f} h (linear; users report 3-10 h and stalls)"
        )


if __name__ == "__main__":
    sys.exit(main())
