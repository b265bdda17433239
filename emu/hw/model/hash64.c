/* The 64-bit PowerPC hashed page table (POWER4): its format, as the walker reads it.
 * emu/hash64.py documents the format and its sources; these are its native functions. */
#include "state.h"

static i64 hash64_primary_hash(i64 vsid, i64 ea) {
    return (vsid & HASH_BITS_MASK) ^ ((ea >> 12) & 0xFFFF);
}

static i64 hash64_secondary_hash(i64 vsid, i64 ea) {
    return ~hash64_primary_hash(vsid, ea) & HASH_BITS_MASK;
}

/* htab_hash_mask: PTEG-index bits a table of 2^(18 + HTABSIZE) bytes has */
static i64 hash64_mask(i64 sdr1) {
    return ((i64)1 << (11 + (sdr1 & HTABSIZE_MASK))) - 1;
}

static i64 hash64_pteg_address(i64 sdr1, i64 hash_value) {
    return (sdr1 & HTABORG_MASK) + (hash_value & hash64_mask(sdr1)) * PTEG64_BYTES;
}

/* The compare doubleword of a valid 4 KB HPTE: AVPN (VSID || EA bits 23-27), H, V */
static i64 hash64_hpte_dword0(i64 vsid, i64 ea, bool secondary) {
    return (i64)((u64)vsid << 12) | (((ea >> 23) & 0x1F) << 7) |
           (secondary ? HPTE_V_SECONDARY : 0) | HPTE_V_VALID;
}

/* The SLB entry translating `ea`'s segment, or -1 (a segment fault) */
static i64 slb_find(const i64 *st, i64 ea) {
    i64 want = (ea & SLB_ESID_MASK) | SLB_ESID_V;
    i64 base = st[H_SEGMENTS];
    for (i64 k = 0; k < st[H_SLB_ENTRIES]; k++)
        if (st[base + 2 * k] == want)
            return k;
    return -1;
}

static i64 slb_vsid_word(const i64 *st, i64 k) { return st[st[H_SEGMENTS] + 2 * k + 1]; }

/* A big-endian doubleword of guest RAM, read by the model; 0 (an invalid HPTE) outside */
static i64 load_be64(const i64 *st, i64 address) {
    if (address < 0 || address + 8 > st[H_RAM_SIZE])
        return 0;
    const uint8_t *ram = (const uint8_t *)(intptr_t)st[H_RAM_PTR] + address;
    u64 value = 0;
    for (int k = 0; k < 8; k++)
        value = (value << 8) | ram[k];
    return (i64)value;
}

/* (may read, may write) by PP0 || PP and the key (Ks: the guest is privileged) */
static void pp_rights(i64 dword1, i64 vsid_word, bool *may_read, bool *may_write) {
    i64 pp = (dword1 & HPTE_R_PP) | ((dword1 >> 61) & 4);
    if (vsid_word & SLB_VSID_KS) {
        *may_read = pp == 1 || pp == 2 || pp == 3;
        *may_write = pp == 2;
    } else {
        *may_read = pp <= 3 || pp == 6;
        *may_write = pp <= 2;
    }
}

/* N or G in the HPTE, or N in the SLB entry: no instruction fetch */
static bool no_execute(i64 dword1, i64 vsid_word) {
    return (dword1 & (HPTE_R_N | HPTE_R_G)) != 0 || (vsid_word & SLB_VSID_N) != 0;
}

EXPORT i64 emu_slb_find(i64 *st, i64 ea) { return slb_find(st, ea); }
EXPORT i64 emu_load_be64(i64 *st, i64 address) { return load_be64(st, address); }
EXPORT i64 emu_hash64_pteg_address(i64 sdr1, i64 hash_value) {
    return hash64_pteg_address(sdr1, hash_value);
}
EXPORT i64 emu_hash64_hpte_dword0(i64 vsid, i64 ea, i64 secondary) {
    return hash64_hpte_dword0(vsid, ea, secondary != 0);
}
EXPORT i64 emu_hash64_primary_hash(i64 vsid, i64 ea) { return hash64_primary_hash(vsid, ea); }
EXPORT i64 emu_pp_rights(i64 dword1, i64 vsid_word) {
    bool r, w;
    pp_rights(dword1, vsid_word, &r, &w);
    return (r ? 1 : 0) | (w ? 2 : 0);
}
EXPORT i64 emu_no_execute(i64 dword1, i64 vsid_word) { return no_execute(dword1, vsid_word); }
