/* The MMU model: TLBs (cache levels whose lines are pages) and, on a miss in the last TLB,
 * the walker: the 32- and 64-bit PowerPC hashed page tables and ARMv7 short descriptors,
 * read from guest RAM. emu/mmu.py documents the design and its sources. */
#include "state.h"

/* ------------------------------------------------- the 32-bit hash, by the architecture book */

static i64 primary_hash(i64 vsid, i64 ea) { return (vsid & 0x7FFFF) ^ ((ea >> 12) & 0xFFFF); }
static i64 secondary_hash(i64 vsid, i64 ea) { return ~primary_hash(vsid, ea) & 0x7FFFF; }

static i64 pteg_address(i64 sdr1, i64 hash_value) {
    i64 htaborg = sdr1 & 0xFFFF0000, htabmask = sdr1 & 0x1FF;
    return htaborg | ((hash_value << 6) & ((htabmask << 16) | 0xFFC0));
}

static i64 pte_word0(i64 vsid, i64 ea, bool secondary) {
    return PTE_VALID | ((vsid & 0xFFFFFF) << 7) | (secondary ? PTE_SECONDARY : 0) |
           ((ea >> 22) & 0x3F);
}

/* A big-endian word of guest RAM, read by the model (not by the guest); -1 outside RAM */
static i64 load_be32(const i64 *st, i64 address) {
    if (address < 0 || address + 4 > st[H_RAM_SIZE])
        return -1;
    const uint8_t *ram = (const uint8_t *)(intptr_t)st[H_RAM_PTR] + address;
    return ((i64)ram[0] << 24) | ((i64)ram[1] << 16) | ((i64)ram[2] << 8) | (i64)ram[3];
}

static i64 load_le32(const i64 *st, i64 address) {
    if (address < 0 || address + 4 > st[H_RAM_SIZE])
        return -1;
    const uint8_t *ram = (const uint8_t *)(intptr_t)st[H_RAM_PTR] + address;
    return (i64)ram[0] | ((i64)ram[1] << 8) | ((i64)ram[2] << 16) | ((i64)ram[3] << 24);
}

/* Search the HTAB for `ea`: primary PTEG, then secondary. Returns found; adds the stall;
 * the entry's attributes (WIMG I: cache-inhibited) in *attr. */
static bool walk_hashed32(i64 *st, i64 ea, i64 *stall, i64 *attr) {
    st[H_WALKS] += 1;
    if (UNLIKELY(st[H_SAMPLE_EVENTS]))
        event(st, EVENT_WALK);
    i64 vsid = st[st[H_SEGMENTS] + ((ea >> 28) & 0xF)] & 0xFFFFFF;
    *stall = st[H_WALK_CYCLES];
    for (int secondary = 0; secondary < 2; secondary++) {
        i64 h = secondary ? secondary_hash(vsid, ea) : primary_hash(vsid, ea);
        i64 group = pteg_address(st[H_SDR1], h);
        i64 want = pte_word0(vsid, ea, secondary);
        for (i64 k = 0; k < PTES_PER_GROUP; k++) {
            i64 pte = group + 8 * k;
            *stall += data_access(st, pte, 8, false);
            if (load_be32(st, pte) == want) {
                st[secondary ? H_SECONDARY_HITS : H_PRIMARY_HITS] += 1;
                *attr = (load_be32(st, pte + 4) & 0x20) ? ATTR_INHIBITED : 0;   /* WIMG I */
                return true;
            }
        }
    }
    return false;
}

HOT i64 needs(bool write, bool fetch) {
    return write ? DENY_WRITE : fetch ? DENY_FETCH : DENY_READ;
}

/* Note the first fault's kind (and the SLB entry it used); false, for the walker */
static bool hash64_fault(i64 *st, i64 status, i64 slb_entry) {
    if (st[H_PAGE_FAULTS] == 0) {
        st[H_FAULT_STATUS] = status;
        st[H_FAULT_L1_ADDR] = slb_entry;
    }
    return false;
}

/* A TLB entry's permission word from an HPTE's doubleword 1 and its SLB entry */
static i64 permissions64(i64 dword1, i64 vsid_word) {
    bool may_read, may_write;
    pp_rights(dword1, vsid_word, &may_read, &may_write);
    i64 perm = may_write ? 0 : DENY_WRITE;
    if (!may_read)
        perm |= DENY_READ | DENY_FETCH;
    if (no_execute(dword1, vsid_word))
        perm |= DENY_FETCH;
    if (dword1 & 0x20)                         /* WIMG I: cache-inhibited */
        perm |= ATTR_INHIBITED;
    return perm;
}

/* A fetch denied while reads are allowed is no-execute (N, G); the rest is PP */
static i64 denial64(i64 perm, bool fetch) {
    if (fetch && !(perm & DENY_READ))
        return FAULT_NO_EXECUTE;
    return FAULT_PROTECTION;
}

/* Search the 64-bit HTAB for `ea`: its SLB entry, the primary PTEG, the secondary.
 * Returns found and permitted; sets the stall and the TLB entry's permission word. */
static bool walk_hashed64(i64 *st, i64 ea, bool write, bool fetch, i64 *stall, i64 *perm) {
    st[H_WALKS] += 1;
    if (UNLIKELY(st[H_SAMPLE_EVENTS]))
        event(st, EVENT_WALK);
    *stall = 0;
    *perm = 0;
    i64 k = slb_find(st, ea);
    if (k < 0)
        return hash64_fault(st, FAULT_SEGMENT, -1);
    i64 vsid_word = slb_vsid_word(st, k);
    if (fetch && (vsid_word & SLB_VSID_N))         /* checked before the search (QEMU) */
        return hash64_fault(st, FAULT_NO_EXECUTE, k);
    i64 vsid = (vsid_word >> 12) & (VSID_LIMIT - 1);
    *stall = st[H_WALK_CYCLES];
    for (int secondary = 0; secondary < 2; secondary++) {
        i64 h = secondary ? hash64_secondary_hash(vsid, ea) : hash64_primary_hash(vsid, ea);
        i64 group = hash64_pteg_address(st[H_SDR1], h);
        i64 want = hash64_hpte_dword0(vsid, ea, secondary);
        for (i64 j = 0; j < HPTES_PER_GROUP; j++) {
            i64 hpte = group + HPTE_BYTES * j;
            *stall += data_access(st, hpte, HPTE_BYTES, false);
            if ((load_be64(st, hpte) & HPTE_V_COMPARE) == want) {
                *perm = permissions64(load_be64(st, hpte + 8), vsid_word);
                if (*perm & needs(write, fetch))
                    return hash64_fault(st, denial64(*perm, fetch), k);
                st[secondary ? H_SECONDARY_HITS : H_PRIMARY_HITS] += 1;
                return true;
            }
        }
    }
    return hash64_fault(st, FAULT_NO_HPTE, k);
}

/* ------------------------------------------------- ARMv7 short descriptors (ARM ARM B3.5) */

/* The descriptor at `address` as the table walker reads it, and the stall. Through the
 * L1 D it is a load; otherwise it reads the level below, which holds memory's copy: a
 * descriptor stored but still dirty in the L1 D is seen as it was before (the shadow). */
static i64 descriptor(i64 *st, i64 address, i64 *stall) {
    i64 l1d = st[H_L1D];
    if (st[H_WALK_THROUGH_L1] || l1d < 0) {
        i64 word = load_le32(st, address);
        *stall = data_access(st, address, 4, false);
        return word;
    }
    *stall = cache_access(st, st[H_FIRST_LEVEL], address, false);     /* (memory if no L2) */
    i64 r = REC(l1d);
    i64 line = address >> st[r + L_SHIFT];
    i64 way = find(st, r, line);
    if (way >= 0 && st[r + L_SHADOW]) {
        i64 slot = (line & (st[r + L_SETS] - 1)) * st[r + L_WAYS] + way;
        if (st[st[r + L_DIRTY] + slot]) {
            i64 bytes = (i64)1 << st[r + L_SHIFT];
            i64 words = bytes >> 3 > 1 ? bytes >> 3 : 1;
            i64 offset = address & (bytes - 1);
            i64 word = st[st[r + L_SHADOW] + slot * words + (offset >> 3)];
            return (word >> (8 * (offset & 4))) & 0xFFFFFFFF;
        }
    }
    return load_le32(st, address);
}

static bool short_fault(i64 *st, i64 status, i64 l1_addr, i64 l2_addr) {
    if (st[H_PAGE_FAULTS] == 0) {
        st[H_FAULT_STATUS] = status;
        st[H_FAULT_L1_ADDR] = l1_addr;
        st[H_FAULT_L2_ADDR] = l2_addr;
    }
    return false;
}

/* The ARMv7 table walk for `va`: found and permitted; sets the stall and the entry's
 * permission word for the TLB */
static bool walk_short(i64 *st, i64 va, bool write, bool fetch, i64 *stall, i64 *perm) {
    st[H_WALKS] += 1;
    if (UNLIKELY(st[H_SAMPLE_EVENTS]))
        event(st, EVENT_WALK);
    i64 l1_addr = (st[H_SDR1] & 0xFFFFC000) | ((va >> 20) << 2);
    i64 first = descriptor(st, l1_addr, stall);
    i64 kind = first & 3;
    *perm = 0;
    if (kind == 2) {                                     /* section (or supersection) */
        *perm = IS_SECTION | ((first & 0x8000) ? DENY_WRITE : 0) |
                ((first & 0x10) ? DENY_FETCH : 0) |
                ((first & 0x8) ? 0 : ATTR_INHIBITED);     /* C clear: not cacheable */
        if (*perm & needs(write, fetch))
            return short_fault(st, FSR_PERMISSION_SECTION, l1_addr, -1);
        st[H_PRIMARY_HITS] += 1;
        return true;
    }
    if (kind != 1)
        return short_fault(st, FSR_TRANSLATION_SECTION, l1_addr, -1);
    i64 l2_addr = (first & 0xFFFFFC00) | (((va >> 12) & 0xFF) << 2);
    i64 more;
    i64 second = descriptor(st, l2_addr, &more);
    *stall += more;
    kind = second & 3;
    if (kind == 0)
        return short_fault(st, FSR_TRANSLATION_PAGE, l1_addr, l2_addr);
    i64 xn = kind >= 2 ? second & 1 : (second >> 15) & 1;
    *perm = ((second & 0x200) ? DENY_WRITE : 0) | (xn ? DENY_FETCH : 0) |
            ((second & 0x8) ? 0 : ATTR_INHIBITED);        /* C clear: not cacheable */
    if (*perm & needs(write, fetch))
        return short_fault(st, FSR_PERMISSION_PAGE, l1_addr, l2_addr);
    st[H_SECONDARY_HITS] += 1;
    return true;
}

/* ------------------------------------------------------------------ translation */

/* The permission word's index of `ea`'s entry at a TLB level (-1 if absent) */
static i64 permissions(const i64 *st, i64 level, i64 ea) {
    i64 r = REC(level);
    i64 page = ea >> st[r + L_SHIFT];
    i64 way = find(st, r, page);
    if (way < 0)
        return -1;
    return st[r + L_DIRTY] + (page & (st[r + L_SETS] - 1)) * st[r + L_WAYS] + way;
}

static void page_fault(i64 *st, i64 ea, bool write, bool fetch) {
    if (st[H_PAGE_FAULTS] == 0) {
        st[H_FAULT_EA] = ea;
        st[H_FAULT_WRITE] = write;
        st[H_FAULT_FETCH] = fetch;
    }
    st[H_PAGE_FAULTS] += 1;
}

/* The TLB holds the page but forbids this access: a permission fault, from the entry */
static void denied(i64 *st, i64 ea, bool write, bool fetch, i64 perm) {
    if (st[H_MMU] == MODE_HASHED64)
        hash64_fault(st, denial64(perm, fetch), -1);
    else
        short_fault(st, (perm & IS_SECTION) ? FSR_PERMISSION_SECTION : FSR_PERMISSION_PAGE,
                    -1, -1);
    page_fault(st, ea, write, fetch);
}

/* A failed walk loads nothing: empty the entries the lookup just allocated */
static void forget(i64 *st, i64 ea, bool fetch) {
    i64 level = fetch ? st[H_ITLB] : st[H_DTLB];
    while (level != MEMORY) {
        i64 r = REC(level);
        i64 page = ea >> st[r + L_SHIFT];
        i64 way = find(st, r, page);
        if (way >= 0)
            drop_line(st, level, page, way);
        level = st[r + L_NEXT];
    }
}

/* translate beyond a first-level hit: the TLBs below, then the walker */
static i64 tlb_miss(i64 *st, i64 level, i64 ea, bool write, bool fetch) {
    i64 first = level;
    st[H_XLATE_ATTR] = 0;
    while (level != MEMORY) {
        i64 r = REC(level);
        if (!level_request(st, level, ea, false)) {
            if (level == first)
                return 0;
            i64 perm = st[permissions(st, level, ea)];   /* a hit below: its entry goes up */
            st[permissions(st, first, ea)] = perm;
            st[H_XLATE_ATTR] = perm;
            if (perm & needs(write, fetch))
                denied(st, ea, write, fetch, perm);
            return st[r + L_LATENCY];
        }
        level = st[r + L_NEXT];
    }
    i64 perm = 0, stall = 0;
    bool found;
    if (st[H_MMU] == MODE_ARM_SHORT)
        found = walk_short(st, ea, write, fetch, &stall, &perm);
    else if (st[H_MMU] == MODE_HASHED64)
        found = walk_hashed64(st, ea, write, fetch, &stall, &perm);
    else
        found = walk_hashed32(st, ea, &stall, &perm);
    st[H_XLATE_ATTR] = perm;
    if (found) {
        for (level = first; level != MEMORY; level = st[REC(level) + L_NEXT]) {
            i64 at = permissions(st, level, ea);
            if (at >= 0)
                st[at] = perm;
        }
    } else {
        page_fault(st, ea, write, fetch);
        forget(st, ea, fetch);
    }
    return stall;
}

/* One translation of `ea` through the TLB(s) and, on a miss, the walker. Returns stall
 * cycles; a failed walk (or an access the entry forbids) records a page fault. */
HOT i64 translate(i64 *st, i64 ea, bool write, bool fetch) {
    if (st[H_MMU] >= MODE_SOFT603 && st[H_MMU] <= MODE_SOFT405) {
        st[H_XLATE_ATTR] = 0;                  /* cacheable, unless the 603's DTLB maps */
        return softtlb_lookup(st, ea, fetch);  /* it inhibited; the CPU translated */
    }
    i64 level = fetch ? st[H_ITLB] : st[H_DTLB];
    if (level < 0) {
        st[H_XLATE_ATTR] = 0;
        return 0;
    }
    i64 r = REC(level);
    i64 page = ea >> st[r + L_SHIFT];
    i64 s = page & (st[r + L_SETS] - 1);
    i64 way = hit(st, r, page, s);
    if (way >= 0) {                           /* the common case, inline: a first-level hit */
        st[r + L_ACCESSES] += 1;
        st[r + L_HITS] += 1;
        i64 perm = st[st[r + L_DIRTY] + s * st[r + L_WAYS] + way];
        st[H_XLATE_ATTR] = perm;
        if (perm & needs(write, fetch))
            denied(st, ea, write, fetch, perm);
        return 0;
    }
    return tlb_miss(st, level, ea, write, fetch);
}

/* ---- translation memos (X_FETCH, X_LOAD, X_STORE: state.h): the block hook translates
 * every block, and a copy's loads and its stores each stay on one page for hundreds of
 * accesses. An access on the page of its kind's last translation, whose first-level TLB
 * entry still holds that page (its tag, where the memo says), is a first-level hit: it is
 * counted, the entry used (touched, unless it is already its set's most recent, as hit
 * does) and its permission word read afresh, without the look-up. A tag is changed by
 * whatever changes the entry, so nothing else needs to forget the memo. Not for
 * software-loaded TLBs. */
HOT i64 memo_permission(const i64 *st, i64 memo, i64 ea, i64 deny) {
    const i64 *x = st + memo;
    i64 page1 = (ea >> x[XM_SHIFT]) + 1;
    if (page1 != x[XM_PAGE] || page1 == 0 || st[x[XM_TAG_AT]] != page1)
        return -1;
    i64 perm = st[x[XM_PERM_AT]];
    return perm & deny ? -1 : perm;            /* a fault: translate reports it */
}

/* The memo's entry used (memo_permission found it, and `perm`) */
HOT void use_memo(i64 *st, i64 memo, i64 perm) {
    const i64 *x = st + memo;
    i64 r = x[XM_REC];
    if (st[x[XM_MRU_AT]] != x[XM_MRU_WORD])
        touch(st, r, x[XM_SET], x[XM_MRU_WORD] & WAY_MASK, x[XM_PAGE]);
    st[r + L_ACCESSES] += 1;
    st[r + L_HITS] += 1;
    st[H_XLATE_ATTR] = perm;
}

HOT bool translated_as_before(i64 *st, i64 memo, i64 ea, i64 deny) {
    i64 perm = memo_permission(st, memo, ea, deny);
    if (perm < 0)
        return false;
    use_memo(st, memo, perm);
    return true;
}

/* A translation of `ea` through the first-level TLB `level` succeeded: its entry (now its
 * set's most recent) goes into the memo */
static void note_translation(i64 *st, i64 memo, i64 level, i64 ea) {
    if (level < 0 || (st[H_MMU] >= MODE_SOFT603 && st[H_MMU] <= MODE_SOFT405))
        return;
    i64 r = REC(level);
    i64 page = ea >> st[r + L_SHIFT];
    i64 s = page & (st[r + L_SETS] - 1);
    i64 mru = st[r + L_MRU] + s;
    if ((st[mru] >> MRU_WAY_BITS) != page + 1 || page + 1 == 0)
        return;
    i64 slot = s * st[r + L_WAYS] + (st[mru] & WAY_MASK);
    i64 *x = st + memo;
    x[XM_PAGE] = page + 1;
    x[XM_SHIFT] = st[r + L_SHIFT];
    x[XM_TAG_AT] = st[r + L_TAGS] + slot;
    x[XM_MRU_AT] = mru;
    x[XM_MRU_WORD] = st[mru];
    x[XM_PERM_AT] = st[r + L_DIRTY] + slot;
    x[XM_REC] = r;
    x[XM_SET] = s;
}

/* ------------------------------------------------------------------ invalidation */

/* The first I-side and D-side TLB levels of `core` (-1: none), where its segments are */
static void core_tlbs(const i64 *st, i64 core, i64 *itlb, i64 *dtlb, i64 *segments) {
    i64 table = st[H_CORES];
    if (table == 0) {
        *itlb = st[H_ITLB];
        *dtlb = st[H_DTLB];
        *segments = st[H_SEGMENTS];
        return;
    }
    i64 at = table + 1 + CORE_RECORD * core;
    *itlb = st[at + T_ITLB];
    *dtlb = st[at + T_DTLB];
    *segments = st[at + T_SEGMENTS];
}

/* Every TLB level of `core`, once each (a unified TLB ends both sides' chains); at most 4 */
static int tlb_levels(const i64 *st, i64 core, i64 out[4]) {
    i64 sides[2], segments;
    core_tlbs(st, core, &sides[0], &sides[1], &segments);
    int n = 0;
    for (int side = 0; side < 2; side++) {
        for (i64 level = sides[side]; level >= 0; level = st[REC(level) + L_NEXT]) {
            bool seen = false;
            for (int k = 0; k < n; k++)
                seen |= out[k] == level;
            if (!seen && n < 4)
                out[n++] = level;
        }
    }
    return n;
}

/* The cores a TLB invalidation reaches: all when it is broadcast, else the running one */
static void cores_reached(const i64 *st, bool broadcast, i64 *first, i64 *end) {
    if (broadcast && st[H_CORES]) {
        *first = 0;
        *end = st[st[H_CORES]];
    } else {
        *first = st[H_CORE];
        *end = st[H_CORE] + 1;
    }
}

/* tlbie RB on `core` (64-bit): every valid SLB entry whose VSID agrees with RB's VSID bits
 * 0-19 has the page's entries invalidated (see emu.mmu.tlbie64) */
static void tlbie64(i64 *st, i64 rb, i64 core) {
    i64 vsid_bits = (rb >> 28) & 0xFFFFF;
    i64 itlb, dtlb, base;
    core_tlbs(st, core, &itlb, &dtlb, &base);
    i64 levels[4];
    int n = tlb_levels(st, core, levels);
    for (i64 k = 0; k < st[H_SLB_ENTRIES]; k++) {
        i64 esid_word = st[base + 2 * k];
        if ((esid_word & SLB_ESID_V) && ((st[base + 2 * k + 1] >> 12) & 0xFFFFF) == vsid_bits) {
            i64 ea = (esid_word & SLB_ESID_MASK) | (rb & 0x0FFFF000);
            for (int j = 0; j < n; j++)
                maintain_level(st, levels[j], ea, OP_INVALIDATE);
        }
    }
}

/* tlbie: the entries for `ea`'s page in every TLB level of this core (`broadcast`: of
 * every core); on the 64-bit hashed MMU the operand is a virtual address */
static void invalidate_page(i64 *st, i64 ea, bool broadcast) {
    bool hashed64 = st[H_MMU] == MODE_HASHED64 || st[H_SLB_ENTRIES] > 0;
    i64 first, end;
    cores_reached(st, broadcast, &first, &end);
    for (i64 core = first; core < end; core++) {
        if (hashed64) {
            tlbie64(st, ea, core);
            continue;
        }
        i64 levels[4];
        int n = tlb_levels(st, core, levels);
        for (int j = 0; j < n; j++)
            maintain_level(st, levels[j], ea, OP_INVALIDATE);
    }
}

/* tlbia (or a full flush): every TLB entry of this core (`broadcast`: of every core) */
static void invalidate_all(i64 *st, bool broadcast) {
    i64 first, end;
    cores_reached(st, broadcast, &first, &end);
    for (i64 core = first; core < end; core++) {
        i64 levels[4];
        int n = tlb_levels(st, core, levels);
        for (int j = 0; j < n; j++)
            invalidate_level(st, levels[j]);
    }
}

/* ---------------------------------------------------- the 64-bit MMU's SLB instructions */

/* Drop the model's TLB entries in a segment (`esid_word`'s; with `only_unmapped`, in every
 * segment no valid SLB entry maps any more) */
static void drop_segment(i64 *st, i64 esid_word, bool only_unmapped) {
    i64 segment = esid_word & SLB_ESID_MASK;
    i64 levels[4];
    int n = tlb_levels(st, st[H_CORE], levels);
    for (int j = 0; j < n; j++) {
        i64 level = levels[j];
        i64 r = REC(level);
        i64 ways = st[r + L_WAYS];
        for (i64 slot = 0; slot < st[r + L_SETS] * ways; slot++) {
            i64 tag = st[st[r + L_TAGS] + slot];
            if (tag == 0)
                continue;
            i64 ea = (i64)((u64)(tag - 1) << st[r + L_SHIFT]);
            bool gone = only_unmapped ? slb_find(st, ea) < 0
                                      : (ea & SLB_ESID_MASK) == segment;
            if (gone) {
                drop_line(st, level, tag - 1, slot % ways);
                st[r + L_INVALIDATIONS] += 1;
            }
        }
    }
}

/* slbmte RS, RB: SLB entry RB[52:63] = (RB's ESID | V, RS). Returns false (and changes
 * nothing) for what the model refuses (emu.hash64.slbmte_problem says why) */
static bool slb_store(i64 *st, i64 rs, i64 rb) {
    if (st[H_MMU] != MODE_HASHED64)
        return true;
    i64 k = rb & SLB_INDEX_MASK;
    if (k >= st[H_SLB_ENTRIES] || (rb & 0x07FFF000) || ((rs >> 62) & 3) || (rs & SLB_VSID_L))
        return false;
    i64 at = st[H_SEGMENTS] + 2 * k;
    i64 esid_word = rb & ~(i64)SLB_INDEX_MASK;
    if (st[at] != esid_word || st[at + 1] != rs) {
        if (st[at] & SLB_ESID_V)
            drop_segment(st, st[at], false);
        if (esid_word & SLB_ESID_V)
            drop_segment(st, esid_word, false);
    }
    st[at] = esid_word;
    st[at + 1] = rs;
    return true;
}

/* slbie RB: the SLB entry of RB's ESID made invalid, and its segment's TLB entries */
static void slb_invalidate(i64 *st, i64 rb) {
    if (st[H_MMU] != MODE_HASHED64)
        return;
    i64 k = slb_find(st, rb);
    if (k >= 0) {
        i64 at = st[H_SEGMENTS] + 2 * k;
        st[at] &= ~SLB_ESID_V;
        drop_segment(st, st[at], false);
    }
}

/* slbia: every SLB entry but entry 0 invalid (Book III; QEMU helper_slbia) */
static void slb_invalidate_all(i64 *st) {
    if (st[H_MMU] != MODE_HASHED64)
        return;
    for (i64 k = 1; k < st[H_SLB_ENTRIES]; k++)
        st[st[H_SEGMENTS] + 2 * k] &= ~SLB_ESID_V;
    drop_segment(st, 0, true);
}

/* ------------------------------------------------------------ what Python calls */

EXPORT i64 emu_translate(i64 *st, i64 ea, i64 write, i64 fetch) {
    return translate(st, ea, write != 0, fetch != 0);
}
EXPORT void emu_invalidate_page(i64 *st, i64 ea, i64 broadcast) {
    invalidate_page(st, ea, broadcast != 0);
}
EXPORT void emu_invalidate_all(i64 *st, i64 broadcast) { invalidate_all(st, broadcast != 0); }
EXPORT i64 emu_slb_store(i64 *st, i64 rs, i64 rb) { return slb_store(st, rs, rb); }
EXPORT void emu_slb_invalidate(i64 *st, i64 rb) { slb_invalidate(st, rb); }
EXPORT void emu_slb_invalidate_all(i64 *st) { slb_invalidate_all(st); }
EXPORT i64 emu_descriptor(i64 *st, i64 address, i64 *stall) {
    return descriptor(st, address, stall);
}
EXPORT i64 emu_walk_hashed32(i64 *st, i64 ea, i64 *stall) {
    i64 attr;
    return walk_hashed32(st, ea, stall, &attr);
}
EXPORT i64 emu_primary_hash(i64 vsid, i64 ea) { return primary_hash(vsid, ea); }
EXPORT i64 emu_pteg_address(i64 sdr1, i64 hash_value) { return pteg_address(sdr1, hash_value); }
EXPORT i64 emu_pte_word0(i64 vsid, i64 ea, i64 secondary) {
    return pte_word0(vsid, ea, secondary != 0);
}
