/* Software-loaded TLBs (603, 405): the model's TLB levels mirror the CPU's, which Unicorn's
 * CPU model keeps itself (emu/softtlb.py explains the design). */
#include "state.h"

/* One translated access: a look-up in the model TLB (a mirror of the CPU's, which has
 * already translated it). Real-mode accesses look nothing up. Returns stall cycles (0). */
HOT i64 softtlb_lookup(i64 *st, i64 ea, bool fetch) {
    i64 level;
    if (fetch) {
        if ((st[H_XLATE] & MSR_IR) == 0)
            return 0;
        level = st[H_ITLB];
    } else {
        if ((st[H_XLATE] & MSR_DR) == 0)
            return 0;
        level = st[H_DTLB];
    }
    i64 r = REC(level);
    i64 page = ea >> st[r + L_SHIFT];
    i64 s = page & (st[r + L_SETS] - 1);
    st[r + L_ACCESSES] += 1;
    st[r + L_HITS] += 1;
    if (hit(st, r, page, s) < 0)
        st[st[H_SCRATCH] + S_DIVERGED] += 1;
    return 0;
}

/* The CPU missed: one look-up that missed */
static void softtlb_count_miss(i64 *st, bool fetch) {
    i64 r = REC(fetch ? st[H_ITLB] : st[H_DTLB]);
    st[r + L_ACCESSES] += 1;
    st[r + L_MISSES] += 1;
}

/* The way the next load into `ea`'s set replaces: an invalid one, else the LRU one */
static i64 softtlb_victim_way(i64 *st, bool fetch, i64 ea) {
    i64 r = REC(fetch ? st[H_ITLB] : st[H_DTLB]);
    i64 s = (ea >> st[r + L_SHIFT]) & (st[r + L_SETS] - 1);
    return victim(st, r, s);
}

/* tlbli/tlbld/tlbwe: `ea`'s page into `way` of its set (what was there is evicted).
 * Returns the page evicted + 1 (0: none). */
static i64 softtlb_load_way(i64 *st, bool fetch, i64 ea, i64 way) {
    i64 level = fetch ? st[H_ITLB] : st[H_DTLB];
    i64 r = REC(level);
    i64 page = ea >> st[r + L_SHIFT];
    i64 s = page & (st[r + L_SETS] - 1);
    i64 slot = s * st[r + L_WAYS] + way;
    i64 old = st[st[r + L_TAGS] + slot];
    if (old != 0) {
        drop_line(st, level, old - 1, way);
        st[r + L_EVICTIONS] += 1;
    }
    st[st[r + L_TAGS] + slot] = page + 1;
    touch(st, r, s, way, page + 1);
    return old;
}

/* A 405 tlbwe of an invalid tag: entry `way` of the unified TLB is emptied. Returns the
 * page dropped + 1 (0: none). */
static i64 softtlb_drop_way(i64 *st, i64 way) {
    i64 level = st[H_DTLB];
    i64 r = REC(level);
    i64 old = st[st[r + L_TAGS] + way];
    if (old != 0) {
        drop_line(st, level, old - 1, way);
        st[r + L_INVALIDATIONS] += 1;
    }
    return old;
}

EXPORT i64 emu_softtlb_lookup(i64 *st, i64 ea, i64 fetch) {
    return softtlb_lookup(st, ea, fetch != 0);
}
EXPORT void emu_softtlb_count_miss(i64 *st, i64 fetch) { softtlb_count_miss(st, fetch != 0); }
EXPORT i64 emu_softtlb_victim_way(i64 *st, i64 fetch, i64 ea) {
    return softtlb_victim_way(st, fetch != 0, ea);
}
EXPORT i64 emu_softtlb_load_way(i64 *st, i64 fetch, i64 ea, i64 way) {
    return softtlb_load_way(st, fetch != 0, ea, way);
}
EXPORT i64 emu_softtlb_drop_way(i64 *st, i64 way) { return softtlb_drop_way(st, way); }
