/* The native model in one translation unit (so that the compiler inlines across files),
 * built by setup.py as the extension module emu._model and loaded by emu.native. */
#include <Python.h>
#include "state.h"
#include "cache.c"
#include "hash64.c"
#include "softtlb.c"
#include "mmu.c"
#include "hooks.c"

#ifndef EMU_SOURCE_HASH
#define EMU_SOURCE_HASH "unknown"
#endif

/* A hash of the sources this library was built from: emu.native finds it in the file (before
 * loading it) and rebuilds a stale library */
static const char source_hash[] = "emu-source-hash:" EMU_SOURCE_HASH;
EXPORT const char *emu_source_hash(void) { return source_hash + 16; }

/* Every constant of state.h by name, for tests/test_native.py to check against Python */
typedef struct { const char *name; i64 value; } constant;
#define C(name) {#name, (i64)(name)},
static const constant constants[] = {
    C(H_SWALLOW) C(H_NONTEMPORAL) C(H_L1I) C(H_L1D) C(H_INSNS) C(H_CYCLES) C(H_LIMIT) C(H_STALE)
    C(H_CODE_BASE) C(H_CODE_LEN) C(H_ICOUNT) C(H_ICOST) C(H_STRICT) C(H_FIXED_WIDTH)
    C(H_DEFAULT_COST) C(H_FIRST_LEVEL) C(H_COHERENT_I) C(H_QUEUE) C(H_QUEUE_N) C(H_MEM_LAT)
    C(H_MEM_READS) C(H_MEM_WRITES) C(H_SIZE) C(H_NLEVELS) C(H_STOPPED) C(H_STALE_PC)
    C(H_STALE_ADDR) C(H_STALE_BLOCK) C(H_RNG) C(H_SPECIALS) C(H_NSPECIALS) C(H_WC) C(H_WC_N)
    C(H_WC_LINE) C(H_WC_FLUSHES) C(H_WC_PARTIAL) C(H_NT_STORES) C(H_REG_WIDTH_MASK) C(H_SCRATCH)
    C(H_UNCOUNTED) C(H_PROFILE_PERIOD) C(H_NEXT_SAMPLE) C(H_PC_REG) C(H_SAMPLES) C(H_INSN_HITS)
    C(H_INSN_CYCLES) C(H_MMU) C(H_ITLB) C(H_DTLB) C(H_SDR1) C(H_SEGMENTS) C(H_RAM_PTR)
    C(H_RAM_SIZE) C(H_WALKS) C(H_PRIMARY_HITS) C(H_SECONDARY_HITS) C(H_PAGE_FAULTS)
    C(H_FAULT_EA) C(H_FAULT_WRITE) C(H_FAULT_FETCH) C(H_WALK_CYCLES) C(H_FAULT_PC) C(H_XLATE)
    C(H_CORES) C(H_CORE) C(H_TRANSFERS) C(H_SNOOP_INVALIDATIONS) C(H_SERIAL_OPS)
    C(H_SERIAL_WAIT) C(H_WALK_THROUGH_L1) C(H_FAULT_STATUS) C(H_FAULT_L1_ADDR)
    C(H_FAULT_L2_ADDR) C(H_ALIGN_SIZE) C(H_ALIGN_MASK) C(H_ALIGN_CYCLES) C(H_SPLIT_MASK)
    C(H_SPLIT_CYCLES) C(H_ALIGN_EXCEPTIONS) C(H_SPLITS) C(H_SQ) C(H_SQ_SLICES) C(H_SQ_ENTRIES)
    C(H_SQ_SERVICE) C(H_SQ_SHIFT) C(H_SQ_STORES) C(H_SQ_STALLS) C(H_SQ_STALL_CYCLES)
    C(H_BLOCK_END_COST) C(H_SLB_ENTRIES) C(H_ACCESS_EXTRAS) C(H_OUTER_BASE)
    C(H_OUTER_SYNC_CYCLES) C(H_OUTER_LINE_CYCLES) C(H_OUTER_SYNCS) C(H_OUTER_LINE_OPS)
    C(H_OUTER_WAIT) C(H_BLOCK_START) C(H_BLOCK_SIZE) C(HEADER) C(T_L1I) C(T_L1D) C(T_ITLB)
    C(T_DTLB) C(T_SEGMENTS) C(CORE_RECORD) C(RESOURCES) C(RESOURCE_SERIAL)
    C(RESOURCE_OUTER_CACHE) C(L_SETS) C(L_WAYS) C(L_SHIFT) C(L_MRU) C(L_TAGS) C(L_DIRTY)
    C(L_ACCESSES) C(L_HITS) C(L_STALE) C(L_REPL) C(L_PLRU) C(L_STAMP) C(L_CLOCK) C(L_LATENCY)
    C(L_WRITE_BACK) C(L_NEXT) C(L_WRITE_ALLOCATE) C(L_MISSES) C(L_WRITEBACKS) C(L_INVALIDATIONS)
    C(L_EVICTIONS) C(L_IS_ICACHE) C(L_SHADOW) C(LEVEL_RECORD) C(REPL_LRU) C(REPL_PLRU)
    C(REPL_FIFO) C(REPL_RANDOM) C(OP_CLEAN) C(OP_FLUSH) C(OP_INVALIDATE) C(OP_ZERO) C(OP_TOUCH)
    C(OP_ICACHE_INVALIDATE) C(OP_ICACHE_INVALIDATE_ALL) C(OP_ALLOCATE) C(OP_TOUCH_OUTER)
    C(SCOPE_L1) C(SCOPE_ALL) C(OP_NONTEMPORAL) C(OP_DRAIN_WC) C(OP_TLB_INVALIDATE)
    C(OP_TLB_INVALIDATE_ALL) C(OP_MTMSR) C(OP_TLB_LOAD_D) C(OP_TLB_LOAD_I) C(OP_TLB_WRITE)
    C(OP_RFI) C(OP_SLB_STORE) C(OP_SLB_INVALIDATE) C(OP_SLB_INVALIDATE_ALL) C(OP_SERIALISE)
    C(TLB_BROADCAST) C(SERIAL) C(MODE_OFF) C(MODE_HASHED32) C(MODE_SOFT603) C(MODE_SOFT405)
    C(MODE_ARM_SHORT) C(MODE_HASHED64) C(DENY_WRITE) C(DENY_FETCH) C(IS_SECTION) C(DENY_READ)
    C(FSR_TRANSLATION_SECTION) C(FSR_TRANSLATION_PAGE) C(FSR_PERMISSION_SECTION)
    C(FSR_PERMISSION_PAGE) C(S_REGISTER) C(S_BLOCK_START) C(S_BLOCK_END) C(S_DIVERGED)
    C(S_SLB_PC) C(S_SLB_RS) C(S_SLB_RB) C(FAULT_SEGMENT) C(FAULT_NO_HPTE) C(FAULT_NO_EXECUTE)
    C(FAULT_PROTECTION) C(MEMORY) C(MRU_WAY_BITS) C(WAY_MASK) C(PTE_VALID) C(PTE_SECONDARY)
    C(PTES_PER_GROUP) C(HPTE_BYTES) C(HPTES_PER_GROUP) C(PTEG64_BYTES) C(HTABORG_MASK)
    C(HTABSIZE_MASK) C(HASH_BITS_MASK) C(VSID_LIMIT) C(HPTE_V_VALID) C(HPTE_V_SECONDARY)
    C(HPTE_V_SW) C(HPTE_V_COMPARE) C(HPTE_R_PP) C(HPTE_R_N) C(HPTE_R_G) C(SLB_ESID_V)
    C(SLB_ESID_MASK) C(SLB_VSID_KS) C(SLB_VSID_N) C(SLB_VSID_L) C(SLB_INDEX_MASK) C(MSR_IR)
    C(MSR_DR) C(OUTER_CACHE_SYNC) C(OUTER_DUMMY_SYNC)
    {NULL, 0}
};

EXPORT const char *emu_constant_name(i64 k) { return constants[k].name; }
EXPORT i64 emu_constant_value(i64 k) { return constants[k].value; }

/* An importable (empty) module, so that the import system finds the library's file */
static struct PyModuleDef module = {PyModuleDef_HEAD_INIT, "_model",
                                    "The native cache, MMU and hook model (see emu.native)",
                                    -1, NULL};
PyMODINIT_FUNC PyInit__model(void) { return PyModule_Create(&module); }
