/* The instructions of a software-loaded TLB (603: tlbld, tlbli, tlbie; 405: tlbwe, tlbia;
 * both: rfi), hooked natively: they keep the model's TLB a mirror of the CPU's and record
 * the CPU's entries (emu/softtlb.py explains the design). The SPRs they need (SRR1, RPA,
 * ICMP/DCMP, PID) are read from the CPU state Unicorn saves (uc_context_save), at the
 * offset emu.softtlb found at start-up. A refused instruction (emu.softtlb names each
 * case) records its error and stops the run; Python raises it. */
#include "state.h"

typedef int (*context_fn)(uc_engine *uc, void *context);
static context_fn uc_context_save, uc_context_restore;

EXPORT void emu_set_unicorn_context(void *save, void *restore, void *ctl) {
    uc_context_save = (context_fn)save;
    uc_context_restore = (context_fn)restore;
    uc_ctl = (ctl_fn)ctl;
}

static i64 *soft_records(const i64 *st) { return (i64 *)(intptr_t)st[H_SOFTTLB]; }

static uint32_t *saved_spr(const i64 *t, i64 n) {
    return (uint32_t *)((char *)(intptr_t)t[SW_CONTEXT] + t[SW_SPR_BASE] + 4 * n);
}

/* The CPU state now, for saved_spr */
static void save_cpu(uc_engine *uc, const i64 *t) { uc_context_save(uc, (void *)(intptr_t)t[SW_CONTEXT]); }

/* QEMU's own translations of a replaced page would go on hitting: flush them */
static void flush_translations(uc_engine *uc, const i64 *t) { uc_ctl(uc, (int)t[SW_FLUSH_CONTROL]); }

static void refuse(uc_engine *uc, i64 *st, i64 *t, i64 code, i64 pc, i64 a, i64 b, i64 c) {
    t[SW_ERROR] = code;
    t[SW_ERROR_PC] = pc;
    t[SW_ERROR_A] = a;
    t[SW_ERROR_B] = b;
    t[SW_ERROR_C] = c;
    st[H_HOST_STOP] = 1;
    model_stop(uc, st);
}

/* The 603's record of a way: page + 1, compare word, RPA word */
static i64 *entry603(i64 *t, bool fetch, i64 ea, i64 way) {
    i64 cls = (ea >> 12) % t[SW_CLASSES];
    return t + SW_E603 + 4 * ((((i64)fetch * t[SW_CLASSES]) + cls) * 2 + way);
}

/* QEMU 5.0's tlbld / tlbli invalidate every way's entry for the same page whatever its
 * VSID (ppc6xx_tlb_store); the 603 keeps them (its entries are VSID-tagged). After such a
 * load (noted by soft_tlb_load), the dropped entry's valid bit is set again in QEMU's own
 * array, found at start-up (emu.softtlb.SoftTLB.locate_tlb6), if it is still as it was */
static void restore_other_way(i64 *t) {
    if (t[SW_TLB6]) {
        uint8_t *tlb6 = *(uint8_t **)((char *)(intptr_t)t[SW_CONTEXT] + t[SW_TLB6]);
        uint32_t *entry = (uint32_t *)(tlb6 + 12 * (t[SW_RESTORE] - 1));   /* pte0 pte1 EPN */
        if (entry[0] == ((uint32_t)t[SW_RESTORE_PTE0] & ~(uint32_t)PTE_VALID) &&
                entry[2] == (uint32_t)t[SW_RESTORE_EPN])
            entry[0] = (uint32_t)t[SW_RESTORE_PTE0];
    }
    t[SW_RESTORE] = 0;
}

/* rfi: translation (and the privilege, for the BATs) as SRR1 says; QEMU 5.0 copies SRR1 bit 14 (the 603's WAY) into
 * MSR[TGPR]: clear it first, or the shadow registers would stay swapped in */
static void soft_rfi(uc_engine *uc, i64 *st, i64 *t, i64 address) {
    if (t[SW_KIND] == SW_KIND_405 && t[SW_PENDING]) {
        refuse(uc, st, t, SW_ERR_PENDING, address, t[SW_PENDING], 0, 0);
        return;
    }
    save_cpu(uc, t);
    uint32_t srr1 = *saved_spr(t, SPR_SRR1);
    if (t[SW_KIND] == SW_KIND_603 && (srr1 & MSR_TGPR)) {
        srr1 &= ~(uint32_t)MSR_TGPR;
        *saved_spr(t, SPR_SRR1) = srr1;
        uc_context_restore(uc, (void *)(intptr_t)t[SW_CONTEXT]);
    }
    st[H_XLATE] = srr1 & (MSR_IR | MSR_DR | MSR_PR);
    if (t[SW_RESTORE])
        restore_other_way(t);
}

/* tlbld / tlbli: ea's page into the way SRR1[WAY] names, tagged with ICMP/DCMP */
static void soft_tlb_load(uc_engine *uc, i64 *st, i64 *t, i64 address, bool fetch, i64 ea) {
    save_cpu(uc, t);
    i64 srr1 = *saved_spr(t, SPR_SRR1), rpa = *saved_spr(t, SPR_RPA);
    i64 cmp = *saved_spr(t, fetch ? SPR_ICMP : SPR_DCMP);
    if (t[SW_IDENTITY] && (rpa >> 12) != (ea >> 12)) {
        refuse(uc, st, t, SW_ERR_IDENTITY_603, address, ea, rpa, fetch);
        return;
    }
    i64 way = (srr1 >> 17) & 1;
    i64 *other = entry603(t, fetch, ea, 1 - way);
    if (t[SW_TLB6] && other[0] == (ea >> 12) + 1 && other[1] != cmp) {
        i64 cls = (ea >> 12) % t[SW_CLASSES];       /* QEMU's index: class, way, side */
        t[SW_RESTORE] = cls + t[SW_CLASSES] * (1 - way) + (fetch ? 2 * t[SW_CLASSES] : 0) + 1;
        t[SW_RESTORE_PTE0] = other[1];
        t[SW_RESTORE_EPN] = ea & ~(i64)0xFFF;
    }
    i64 *e = entry603(t, fetch, ea, way);
    e[0] = (ea >> 12) + 1;
    e[1] = cmp;
    e[2] = rpa;
    t[SW_MRU603 + (i64)fetch * t[SW_CLASSES] + (ea >> 12) % t[SW_CLASSES]] = way;
    i64 old = softtlb_load_way(st, fetch, ea, way);
    if (!fetch && ((rpa & RPA_WIMG_I) || t[SW_INHIBITED603]))
        count_inhibited603(t);
    if (old && old - 1 != ea >> 12)
        flush_translations(uc, t);
}

/* tlbie on the 603: both ways of ea's class, in the ITLB and the DTLB */
static void soft_tlbie603(i64 *t, i64 ea) {
    for (int fetch = 0; fetch < 2; fetch++)
        for (i64 way = 0; way < 2; way++)
            entry603(t, fetch, ea, way)[0] = 0;
    if (t[SW_INHIBITED603])
        count_inhibited603(t);
}

/* tlbwe RS, RA, WS on the 405: the data word (WS = 1) or the tag word of entry RA */
static void soft_tlbwe(uc_engine *uc, i64 *st, i64 *t, i64 address, i64 value, i64 index,
                       bool data) {
    index &= 63;
    if (data) {
        if (t[SW_VALID405 + index])       /* QEMU 5.0 clears V: a tag word must follow */
            t[SW_PENDING] |= (i64)1 << index;
        t[SW_DATA405 + index] = value;
        return;
    }
    bool valid = (value & 0x40) != 0;
    i64 size_code = (value >> 7) & 7;
    if (valid && size_code != 1) {
        refuse(uc, st, t, SW_ERR_PAGE_SIZE, address, size_code, index, 0);
        return;
    }
    if (valid && t[SW_IDENTITY] && (t[SW_DATA405 + index] >> 12) != (value >> 12)) {
        refuse(uc, st, t, SW_ERR_IDENTITY_405, address, value, t[SW_DATA405 + index], index);
        return;
    }
    t[SW_PENDING] &= ~((i64)1 << index);
    i64 old = valid ? softtlb_load_way(st, false, value, index) : softtlb_drop_way(st, index);
    if (old && old - 1 != value >> 12)
        flush_translations(uc, t);
    save_cpu(uc, t);
    t[SW_VALID405 + index] = valid;
    t[SW_TAG405 + index] = value;
    t[SW_TID405 + index] = *saved_spr(t, SPR_PID405) & 0xFF;      /* TID <- PID */
}

/* tlbia on the 405: every entry invalid */
static void soft_tlbia405(i64 *t) {
    for (i64 k = 0; k < 64; k++)
        t[SW_VALID405 + k] = 0;
    t[SW_PENDING] = 0;
}

/* tlbsx as Python asks it (emu.softtlb.SoftTLB.search405): the valid entry for ea's page
 * whose TID is pid or 0; -1 none, -2 several */
EXPORT i64 emu_softtlb_search405(i64 *st, i64 ea, i64 pid) {
    i64 *t = soft_records(st), found = -1;
    for (i64 k = 0; k < 64; k++) {
        if (!t[SW_VALID405 + k] || (t[SW_TAG405 + k] >> 12) != (ea >> 12))
            continue;
        i64 tid = t[SW_TID405 + k];
        if (tid != (pid & 0xFF) && tid != 0)
            continue;
        if (found >= 0)
            return -2;
        found = k;
    }
    return found;
}
