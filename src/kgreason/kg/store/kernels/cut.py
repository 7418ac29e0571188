"""The subgraph walk's cut report as a compiled loop (kernels/walk.py calls it after a cut):
what the edge-order bound left out, counted by walk.left_out's rules, beside its numpy form
(kg/store/walk.left_out).

Why: after a cut, numpy counts the distinct relations and not-reached entities of the rows
the walk did not take by gathering them; the loop reads those rows in place, over the
walk's own bitmaps (WalkScratch.walk_bits), so the report costs no gather.
"""

from __future__ import annotations

import numpy as np

from kgreason.jit import compiled


def _left_out_loop(  # pragma: no cover (compiled)
    fptr, frel, fdst, rptr, rrel, rsrc, reid, noise, any_noise,
    seen, visited, frontier, deg, ends, ci, u, b, scan,
):  # fmt: skip
    """walk.left_out after a compiled walk's cut, without gathering: (distinct relations,
    distinct entities not reached, exact) over the unseen rows of (1) the cut chunk's rows
    u .. b - 1, noise dropped, at most `scan` of them; (2) when those were all, the chunk's
    rows from b, at most what is left of `scan`; (3) the later chunks' first rows, while
    `scan` lasts. Stage (1) counts kept rows, (2) and (3) positions (as left_out does).
    `seen`, `visited`: the walk's bitmaps; counted entities are set in `visited` while
    counted, then cleared."""
    one = np.uint64(1)
    relm = np.zeros(len(noise), dtype=np.bool_)
    ents = np.empty(scan + 1, dtype=np.int64)
    n_rel = 0
    n_ent = 0
    exact = True
    scanned = 0
    n_ch = len(ends)
    stage = 0
    k0 = ends[ci - 1] if ci > 0 else 0
    k1 = ends[ci]
    lo, hi = u, b
    t_len = 0
    clen = 0
    for j in range(k0, k1):
        clen += deg[j]
    while True:
        ri = 0
        kept = 0
        for j in range(k0, k1):
            if ri >= hi:
                break
            if ri + deg[j] <= lo:
                ri += deg[j]
                continue
            x = frontier[j]
            for side in range(2):
                if side == 0:
                    a0, a1 = fptr[x], fptr[x + 1]
                else:
                    a0, a1 = rptr[x], rptr[x + 1]
                for q in range(a0, a1):
                    if ri >= hi:
                        break
                    ri += 1
                    if ri <= lo:
                        continue
                    if side == 0:
                        eid, y, r = q, fdst[q], frel[q]
                    else:
                        eid, y, r = reid[q], rsrc[q], rrel[q]
                    if any_noise and noise[r]:
                        continue
                    kept += 1
                    if stage == 0 and kept > scan:
                        break
                    if seen[eid >> 6] & (one << np.uint64(eid & 63)):
                        continue
                    if not relm[r]:
                        relm[r] = True
                        n_rel += 1
                    ybit = one << np.uint64(y & 63)
                    if not visited[y >> 6] & ybit:
                        visited[y >> 6] |= ybit
                        ents[n_ent] = y
                        n_ent += 1
                if stage == 0 and kept > scan:
                    break
            if stage == 0 and kept > scan:
                break
        if stage == 0:  # the tail: then the chunk's rest, if the tail was read whole
            t_len = min(kept, scan)
            if t_len >= scan:
                exact = False
                break
            rest = clen - b if kept <= scan else 0
            head = min(rest, scan - t_len)
            exact = exact and head == rest
            scanned = t_len + head
            stage, lo, hi = 1, b, b + head
            continue
        c = ci + stage  # the next later chunk
        if c >= n_ch:
            break
        if scanned >= scan:
            exact = False
            break
        take = scan - scanned
        k0, k1 = ends[c - 1], ends[c]
        cum = 0
        cut_at = k1 - k0  # searchsorted(cumulative rows, take) over the chunk
        for j in range(k0, k1):
            cum += deg[j]
            if cum >= take:
                cut_at = j - k0
                break
        trunc = min(cut_at + 1, k1 - k0)
        exact = exact and trunc >= k1 - k0
        rows = 0
        for j in range(k0, k0 + trunc):
            rows += deg[j]
        exact = exact and rows <= take
        scanned += min(rows, take)
        stage, lo, hi = stage + 1, 0, min(rows, take)
    for i in range(n_ent):
        y = ents[i]
        visited[y >> 6] &= ~(one << np.uint64(y & 63))
    return n_rel, n_ent, exact


#: the store's columns are memory-mapped, read-only (as kernels/walk.py)
_RO32 = "Array(int32, 1, 'C', readonly=True)"
_RO64 = "Array(int64, 1, 'C', readonly=True)"
LOOPS = [
    (
        _left_out_loop,
        "Tuple((int64, int64, boolean))("
        f"{_RO64}, {_RO32}, {_RO32}, {_RO64}, {_RO32}, {_RO32}, {_RO32}, boolean[::1], boolean,"
        " uint64[::1], uint64[::1], int64[::1], int64[::1], int64[::1], int64, int64,"
        " int64, int64)",
    ),
]


def ready() -> bool:
    """Whether the loop is compiled (kernels/walk.py checks before it walks: a cut must be
    reported by the same walk)."""
    return compiled(*LOOPS[0]) is not None


def left_out(cols, noise, any_noise, seen, visited, frontier, deg, ends, ci, u, b, scan):
    """_left_out_loop over the store columns `cols` (kernels/walk._columns' order):
    (distinct relations, distinct entities not reached, exact)."""
    kernel = compiled(*LOOPS[0])
    if kernel is None:  # kernels/walk checked ready(): cannot happen
        raise RuntimeError("kernels.cut: the left-out loop is not compiled")
    return kernel(*cols, noise, any_noise, seen, visited, frontier, deg, ends, ci, u, b, scan)


def warm_inputs() -> bool:
    """The loop on a one-edge graph (node 0 -> 1, nothing seen): one relation and one
    entity left out, exactly, and the visited bitmap zero again (kernels.warm)."""
    if not ready():  # no numba, or it cannot compile the loop: numpy's left_out counts
        return False
    i32 = np.zeros(1, np.int32)
    cols = (
        np.array([0, 1, 1], np.int64), i32, np.ones(1, np.int32),
        np.array([0, 0, 1], np.int64), i32, i32, i32,
    )  # fmt: skip
    seen, visited = np.zeros(1, np.uint64), np.zeros(1, np.uint64)
    one = np.ones(1, np.int64)
    got = left_out(
        cols, np.zeros(1, bool), False, seen, visited, np.zeros(1, np.int64), one, one, 0, 0, 0, 8
    )
    return tuple(got) == (1, 1, True) and not visited.any()
