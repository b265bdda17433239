/* Software-loaded TLBs (603, 405): the model's TLB levels mirror the CPU's, which Unicorn's
 * CPU model keeps itself (emu/softtlb.py explains the design). */
#include "state.h"

/* Does a BAT the model knows translate `address` for this privilege? (MSR[PR] in H_XLATE:
 * Vs for the supervisor, Vp for the user; the BATs map EA = physical, so the hook's address,
 * the EA of a fetch and the physical address of a data access, is tested as it is) */
static bool bat_translates(const i64 *st, i64 address, bool fetch) {
    const i64 *bat = (const i64 *)(intptr_t)st[H_BATS] + (fetch ? 0 : BATS_PER_SIDE * BAT_WORDS);
    i64 valid = (st[H_XLATE] & MSR_PR) ? BAT_VP : BAT_VS;
    for (int k = 0; k < BATS_PER_SIDE; k++, bat += BAT_WORDS)
        if (bat[valid] && address >= bat[BAT_START] && address - bat[BAT_START] < bat[BAT_SIZE])
            return true;
    return false;
}

/* Is `physical` in a page a valid 603 DTLB entry maps cache-inhibited (WIMG I in its RPA
 * word)? Searched only while such an entry exists (SW_INHIBITED603, kept by the loads and
 * tlbie). The hook sees the physical address only; the architecture requires every
 * translation of a page to agree on I, so the page decides. */
static bool inhibited603(const i64 *t, i64 physical) {
    for (i64 k = 0; k < 2 * t[SW_CLASSES]; k++) {        /* the DTLB's records come first */
        const i64 *e = t + SW_E603 + 4 * k;
        if (e[0] && (e[2] & RPA_WIMG_I) && (e[2] >> 12) == (physical >> 12))
            return true;
    }
    return false;
}

/* Count the valid cache-inhibited DTLB entries again (after a load or a tlbie) */
static void count_inhibited603(i64 *t) {
    i64 n = 0;
    for (i64 k = 0; k < 2 * t[SW_CLASSES]; k++) {
        const i64 *e = t + SW_E603 + 4 * k;
        n += e[0] && (e[2] & RPA_WIMG_I);
    }
    t[SW_INHIBITED603] = n;
}

/* One translated access: a look-up in the model TLB (a mirror of the CPU's, which has
 * already translated it). Real-mode accesses look nothing up; nor do those a BAT translates
 * (counted). With translations other than the identity (the kernel model's user pages), a
 * data access's hook address is physical, not the EA the mirror is tagged with: it counts
 * as a hit without a look-up (the CPU translated it). A data access to a page a 603 DTLB
 * entry maps cache-inhibited is marked so (H_XLATE_ATTR: it bypasses the caches), before
 * the BAT test, since the BATs map all of RAM at EA = physical and the hook cannot tell
 * the two translations apart. Returns stall cycles (0). */
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
        const i64 *t = (const i64 *)(intptr_t)st[H_SOFTTLB];
        if (UNLIKELY(t[SW_INHIBITED603] > 0) && inhibited603(t, ea)) {
            i64 r = REC(level);
            st[r + L_ACCESSES] += 1;
            st[r + L_HITS] += 1;
            st[H_XLATE_ATTR] = ATTR_INHIBITED;
            return 0;
        }
    }
    if (st[H_BATS] && bat_translates(st, ea, fetch)) {
        st[H_BAT_HITS] += 1;
        return 0;
    }
    i64 r = REC(level);
    i64 page = ea >> st[r + L_SHIFT];
    i64 s = page & (st[r + L_SETS] - 1);
    st[r + L_ACCESSES] += 1;
    st[r + L_HITS] += 1;
    if (!fetch && !((const i64 *)(intptr_t)st[H_SOFTTLB])[SW_IDENTITY])
        return 0;
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
