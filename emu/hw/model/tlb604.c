/* The 604's MMU for guest code (emu/hw/tlb604.py documents the design and its sources):
 * Unicorn runs in its virtual-TLB mode and asks tlb604_fill for each page it has no
 * translation of; the fill runs what the 604 does: BAT2 (the kernel's block), else the
 * segment register, the ITLB or DTLB (classes of 2 ways, LRU, tagged by VSID and page) and,
 * on a miss, the hardware table search of the primary then the secondary PTE group, each PTE
 * read through the L1 D model. Unicorn's own translation cache is kept no larger than the
 * model's TLBs: whenever a model entry is replaced or invalidated, it is flushed, so that
 * the next access to the page comes back here. */
#include "state.h"

typedef struct { u64 paddr; int32_t perms; } tlb604_entry;
enum { UC_MEM_WRITE_ACCESS = 17, UC_MEM_FETCH_ACCESS = 18 };
enum { PROT_READ = 1, PROT_WRITE = 2, PROT_EXEC = 4 };

static i64 *tlb604_record(const i64 *st) { return (i64 *)(intptr_t)st[H_TLB604]; }

/* The entry words of way `way` of `ea`'s class in the ITLB (fetch) or DTLB */
static i64 *tlb604_slot(i64 *t, bool fetch, i64 ea, i64 way) {
    i64 cls = (ea >> 12) & (t[T6_CLASSES] - 1);
    i64 k = ((fetch ? 0 : t[T6_CLASSES]) + cls) * t[T6_WAYS] + way;
    return t + T6_ENTRIES + T6_ENTRY_WORDS * k;
}

static i64 tlb604_tag(i64 vsid, i64 ea) { return ((vsid << 20) | ((ea >> 12) & 0xFFFFF)) + 1; }

/* Unicorn's translations are dropped (all of them: it has no per-page flush here) */
static void tlb604_flush_unicorn(uc_engine *uc, i64 *t) {
    t[T6_FLUSHES] += 1;
    uc_ctl(uc, (int)t[T6_FLUSH_CONTROL]);
}

/* tlbie: both ways of the class, in both TLBs (as the 603 does; module notes) */
static void tlb604_invalidate_class(i64 *t, i64 ea) {
    for (int side = 0; side < 2; side++)
        for (i64 way = 0; way < t[T6_WAYS]; way++)
            tlb604_slot(t, side == 0, ea, way)[0] = 0;
}

/* The table search (604 UM 5.4.5, Figures 5-9 and 5-10): each PTE of the primary group,
 * then of the secondary, read through the L1 D model, compared in order. Charges its
 * cycles; word 1 of the PTE found in *word1. */
static bool tlb604_search(i64 *st, i64 *t, i64 vsid, i64 ea, i64 *word1) {
    i64 cycles = t[T6_WALK_CYCLES];
    bool found = false;
    t[T6_SEARCHES] += 1;
    for (int secondary = 0; secondary < 2 && !found; secondary++) {
        i64 h = secondary ? secondary_hash(vsid, ea) : primary_hash(vsid, ea);
        i64 group = pteg_address(t[T6_SDR1], h);
        i64 want = pte_word0(vsid, ea, secondary);
        for (i64 k = 0; k < PTES_PER_GROUP && !found; k++) {
            i64 pte = group + 8 * k;
            cycles += t[T6_PTE_CYCLES] + data_access(st, pte, 8, false);
            t[T6_PTE_READS] += 1;
            if (load_be32(st, pte) == want) {
                *word1 = load_be32(st, pte + 4);
                t[secondary ? T6_SECONDARY : T6_PRIMARY] += 1;
                found = true;
            }
        }
    }
    if (!found)
        t[T6_HASH_MISSES] += 1;
    t[T6_SEARCH_CYCLES] += cycles;
    st[H_CYCLES] += cycles;
    return found;
}

/* The entry for (vsid, ea): a hit moves the class's LRU; a miss searches and loads the PTE
 * into an invalid way, else the least recently used. NULL if the search found nothing. */
static i64 *tlb604_translate(uc_engine *uc, i64 *st, i64 *t, bool fetch, i64 vsid, i64 ea) {
    i64 tag = tlb604_tag(vsid, ea);
    i64 *victim = NULL;
    for (i64 way = 0; way < t[T6_WAYS]; way++) {
        i64 *e = tlb604_slot(t, fetch, ea, way);
        if (e[0] == tag) {
            e[2] = ++t[T6_CLOCK];
            return e;
        }
        if (victim == NULL || (victim[0] != 0 && (e[0] == 0 || e[2] < victim[2])))
            victim = e;
    }
    t[fetch ? T6_ITLB_MISSES : T6_DTLB_MISSES] += 1;
    i64 word1 = 0;
    if (!tlb604_search(st, t, vsid, ea, &word1))
        return NULL;
    if (victim[0] != 0) {                 /* Unicorn may still hold the replaced page */
        t[T6_EVICTIONS] += 1;
        tlb604_flush_unicorn(uc, t);
    }
    victim[0] = tag;
    victim[1] = word1;
    victim[2] = ++t[T6_CLOCK];
    return victim;
}

/* PP with the segment's key (OEA Table 7-10): key 0 reads all, writes PP 0-2; key 1 reads
 * PP 1-3, writes PP 2 */
static int tlb604_perms(i64 word1, bool key) {
    i64 pp = word1 & 3;
    bool read = key ? pp != 0 : true;
    bool write = key ? pp == 2 : pp != 3;
    return (read ? PROT_READ | PROT_EXEC : 0) | (write ? PROT_WRITE : 0);
}

static bool tlb604_fault(i64 *t, i64 kind, i64 ea, int access) {
    if (t[T6_FAULT_KIND] != T6_FAULT_NONE)
        return false;                     /* the first refusal is the run's fault */
    t[T6_FAULT_KIND] = kind;
    t[T6_FAULT_EA] = ea;
    t[T6_FAULT_ACCESS] = access;
    if (kind == T6_FAULT_PROTECTION)
        t[T6_PROTECTION] += 1;
    return false;
}

EXPORT bool tlb604_fill(uc_engine *uc, u64 vaddr, int access, tlb604_entry *result,
                        void *user_data) {
    i64 *t = user_data;
    i64 *st = (i64 *)(intptr_t)t[T6_ST];
    i64 ea = (i64)(vaddr & 0xFFFFFFFFu);
    bool fetch = access == UC_MEM_FETCH_ACCESS, write = access == UC_MEM_WRITE_ACCESS;
    i64 msr = guest_register(uc, st, t[T6_MSR_REG]);
    /* Unicorn translates `until` (the host stop) as a fetch before a run and again when a
     * run stops at a fault: its own probe, not the guest's, told apart by the guest's PC
     * lying in another page (a fetch of the guest's is for the page its PC is in) */
    if (fetch && ((guest_pc(uc, st) ^ ea) >> 12) != 0)
        return false;
    result->paddr = (u64)(ea & ~(i64)0xFFF);
    result->perms = PROT_READ | PROT_WRITE | PROT_EXEC;
    if (!(msr & (fetch ? MSR_IR : MSR_DR)))
        return true;                      /* real mode */
    bool user = (msr & MSR_PR) != 0;
    if (!user && ea < t[T6_BAT_SIZE]) {   /* mapin_ram's BAT2: supervisor only, EA = physical */
        t[T6_BAT_FILLS] += 1;
        return true;
    }
    i64 sr = t[T6_SEGMENTS + ((ea >> 28) & 0xF)];
    i64 *e = tlb604_translate(uc, st, t, fetch, sr & 0xFFFFFF, ea);
    if (e == NULL)
        return tlb604_fault(t, T6_FAULT_NO_HPTE, ea, access);
    int perms = tlb604_perms(e[1], (sr >> (user ? 29 : 30)) & 1);
    if (!(perms & (fetch ? PROT_EXEC : write ? PROT_WRITE : PROT_READ)))
        return tlb604_fault(t, T6_FAULT_PROTECTION, ea, access);
    result->paddr = (u64)(e[1] & 0xFFFFF000);
    result->perms = perms;
    return true;
}
