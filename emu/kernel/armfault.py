"""The generic fault path of an ARM Linux 2.6.36 kernel as guest code (routines/arm/fault_v7.S),
a mixin of the ARMv7 backend (emu.kernel.arm): the data abort's entry and exit,
do_page_fault, find_vma, handle_mm_fault, filemap_fault, find_get_page's radix tree,
__do_fault and page_add_file_rmap, on the structures they read, kept in guest RAM here
(mm_struct, vm_area_struct and their rb-tree, file, address_space, inode, the per-CPU
counters, the zone's page sets, fsr_info); and zap_pte_range, one guest call per PTE page
(routines/arm/zap_v7.S: the loop, its pte_clear by set_pte_ext, page_remove_rmap,
free_page_and_swap_cache) on the struct pages and the per-CPU mmu_gather; and fork's
copy_pte_range, one guest call per PTE page (routines/arm/copy_v7.S: copy_one_pte's
write-protect and copy by set_pte_ext, get_page, page_dup_rmap, the rss counts), only for
the areas with an anon_vma, as 2.6.36's copy_page_range (the generic VM keeps which areas
have one: emu.kernel.mm.VMA.anon_vma).

A minor fault on a cached page-cache page runs from find_get_page to the PTE lock's
release in one guest call (routines/arm/filefault_v7.S __do_fault_file: find_get_page,
lock_page, __do_fault_map, spin_lock, set_pte_ext, spin_unlock; the generic VM's
``_file_fault_in_one``), each function charged to its own row; a page-cache miss, an early
copy-on-write or an I-cache sync to do take the step-by-step calls.

The generic VM (emu.kernel.fault) stays the one that decides: it finds the VMA, walks and
allocates the tables, reads the PTE and picks the path; the guest code runs the same
decisions on the guest's copy of the structures, and a disagreement is a KernelError. An
anonymous fault runs do_anonymous_page's bookkeeping and page_add_new_anon_rmap as guest code
too (routines/arm/anon_v7.S: the per-CPU pagevec of lru_cache_add, the task's rss counter,
the area's anon_vma), and so does an early copy-on-write's page_add_new_anon_rmap; a
write-protect fault runs do_wp_page's bookkeeping as guest code (routines/arm/wp_v7.S:
vm_normal_page, reuse_swap_page and page_move_anon_rmap, the reuse's PTE; for a copy
page_cache_get, the rss counters, mk_pte, page_add_new_anon_rmap, page_remove_rmap of the
old page and its two releases) where it was the fixed wp_fault. What stays outside the
guest: the young/dirty path's bookkeeping, a page-cache miss's read and anon_vma_prepare's
slow path (an area's first anonymous page: the model makes its anon_vma, uncharged; so
does a child's area, anon_vma_fork's). A full pagevec is drained as guest code
(routines/arm/lru_v7.S: ____pagevec_lru_add under zone->lru_lock, release_pages), counted
as lru_add_drains. Before anon_v7.S the
fixed anon_fault and wp_fault were 600, 1,200 and 2,280 cycles of Yun 2011's lat_proc fork's,
exec's and shell's 104,651, 347,950 and 752,203 an iteration (one copy, the stock kernel,
0.57, 0.34, 0.30%), none of lat_pagefault's.
"""
from __future__ import annotations

from struct import Struct

from ..run import profiler
from .errors import KernelError, SegmentationFault
from .percpu import cpu
from .pgtable import PAGE_SHIFT, TASK_SIZE, VM_EXEC, VM_READ, VM_WRITE

THREAD_BLOCK = 256                  # thread_info + task fields + the pt_regs frame (fault_v7.S)
FLT_VMA, FLT_PGOFF = 64, 68
TSK_MM = 36
MM_BLOCK, MM_RB, MM_MMAP_CACHE, MM_PGD, SEM_WAIT_LIST = 64, 4, 8, 12, 24
MM_RSS = 32                         # rss_stat.count[MM_FILEPAGES, MM_ANONPAGES, MM_SWAPENTS]
VMA_BLOCK, VM_START, VM_END, VM_PAGE_PROT, VM_FLAGS, VM_RB = 96, 4, 8, 16, 20, 24
VM_OPS, VM_PGOFF, VM_FILE, VM_ANON_VMA = 64, 68, 72, 76
ANON_VMA_BLOCK = 64                 # struct anon_vma (the model's: only its address is read)
LRU_PVEC_ANON, PAGEVEC_SIZE = 448, 14   # the per-CPU lru_add_pvecs[LRU_ACTIVE_ANON] (anon_v7.S)
PVEC_PAGES, STRUCT_PAGE_BYTES = 8, 32   # pagevec: nr, cold, pages[]; sizeof(struct page)
RB_RIGHT, RB_LEFT = 4, 8
FILE_BLOCK, MAPPING_BLOCK = 64, 64
AS_HOST, AS_HEIGHT, AS_RNODE, I_SIZE = 0, 4, 12, 32
NODE_BYTES, NODE_SLOTS, RADIX_BITS = 296, 16, 6      # radix_tree_node, 2.6.36, 32-bit
PAGE_COUNT, PAGE_MAPCOUNT, PAGE_MAPPING, PG_UPTODATE = 4, 8, 16, 3
PER_CPU_AREA, PAGESET_AT, PCP_STAT_THRESHOLD = 512, 256, 36
MMU_GATHER_AT, TLB_FULLMM, TLB_RANGE_START = 128, 4, 8     # the per-CPU mmu_gathers (zap_v7.S)
TLB_ZAP_WORK, TLB_FOUND_N, TLB_FOUND_SUM = 16, 28, 32
#: the functions zap_pte_range calls, each charged to its ledger row as a sampling profiler
#: sees them (None: the processor's set_pte_ext, PK1's or not); the rest of the call,
#: mark_page_accessed and its set_bit with it, is zap_pte (zap_pte_range inlined in unmap_vmas)
ZAP_SYMBOLS = {"cpu_v7_set_pte_ext": (None,),
               "page_remove_rmap": ("page_remove_rmap", "__dec_zone_page_state", "atomic_add"),
               "free_page_and_swap_cache": ("free_page_and_swap_cache",)}
#: the function copy_pte_range calls (copy_v7.S; get_page and page_dup_rmap are inline)
COPY_SYMBOLS = {"cpu_v7_set_pte_ext": (None,)}
#: the functions __do_fault_file calls (a minor fault on a cached page in one guest call),
#: each charged to the row its own call was charged to when the model made them one by one;
#: the rest (__do_fault_file, __do_fault_map, i_size_read, page_add_file_rmap and its
#: atomic_add) is __do_fault's. The PTE lock's calls only on several CPUs (spinlock.S)
FILE_FAULT_SYMBOLS = {"find_get_page": ("find_get_page", "page_cache_get_speculative"),
                      "lock_page": ("lock_page", "trylock_page", "_test_and_set_bit_le"),
                      "cpu_v7_set_pte_ext": (None,)}
FILE_FAULT_SYMBOLS_SMP = {**FILE_FAULT_SYMBOLS, "spin_lock": ("spin_lock",),
                          "spin_unlock": ("spin_unlock",)}
FLT_FOUND, FLT_WAITS, FLT_MK_PTE = 80, 84, 88       # __do_fault_file's results
ZAP_BLOCK_SIZE = 1024 << PAGE_SHIFT  # mm/memory.c, !CONFIG_PREEMPT: unmap_vmas' zap_work
ZONE_BLOCK, ZONE_PAGESET = 512, 40
ZONE_LRU, NR_LRU_LISTS = 68, 5      # zone->lru[] after lru_lock (lru_v7.S)
FSR_INFO, FSR_ENTRY = 32, 16
FSR_PAGE_TRANSLATION, FSR_PAGE_PERMISSION, FSR_WRITE = 0x7, 0xF, 1 << 11
GLOBALS = 64
#: cacheid (arch/arm/kernel/setup.c cacheid_init, 2.6.36) on ARMv7: CACHEID_VIPT_NONALIASING,
#: plus CACHEID_ASID_TAGGED only when CTR's L1Ip field says an ASID-tagged VIVT I-cache; the
#: Cortex-A9's I-cache is virtually indexed and physically tagged (TRM DDI0388 7.1; its CTR,
#: 0x83338003, has L1Ip = 0b10), so flush_cache_page flushes nothing (wp_v7.S)
CACHEID = 1 << 1
VM_MAY = 0x10 | 0x20 | 0x40          # VM_MAYREAD | VM_MAYWRITE | VM_MAYEXEC
NR_CPUS = 4                         # an MPCore's most cores: the per-CPU areas the kernel sets up


def _words(*values):
    # one struct.pack, not a join of each word's bytes: about 15,000 calls a four-core run
    # (its Struct made once per number of words, not its format parsed at each)
    pack = _PACKS.get(len(values))
    if pack is None:
        pack = _PACKS[len(values)] = Struct(f"<{len(values)}I").pack
    return pack(*[v & 0xFFFFFFFF for v in values])


_PACKS = {}                 # number of words -> the pack of that many little-endian words


def stat_threshold(present_pages, cpus):
    """mm/vmstat.c calculate_threshold (2.6.36): 2 * fls(cpus) * (1 + fls(zone MB / 128)),
    at most 125."""
    mem = present_pages >> (27 - PAGE_SHIFT)
    return min(125, 2 * cpus.bit_length() * (1 + mem.bit_length()))


def linux_vm_flags(flags):
    """The VMA's flags as the guest reads them (VM_READ 1, VM_WRITE 2, VM_EXEC 4, VM_SHARED
    8: the generic VM's are Linux's), with VM_MAYREAD, VM_MAYWRITE and VM_MAYEXEC (0x10,
    0x20, 0x40, include/linux/mm.h 75-77 of 2.6.36), which do_mmap_pgoff gives every area
    (mm/mmap.c 1016; it takes VM_MAYWRITE away only from a shared mapping of a file opened
    read-only, which the model has none of): is_cow_mapping reads VM_MAYWRITE."""
    return (flags & (VM_READ | VM_WRITE | VM_EXEC | 0x8)) | VM_MAY


class FaultPath:
    """The ARMv7 backend's fault path in guest code (see the module notes)."""

    runs_fault_path = True
    copy_needs_anon_vma = True      # 2.6.36's copy_page_range (mm/memory.c 838-847)
    walk_takes_ptl = False          # 2.6.36 walks without page_table_lock (only __pte_alloc)

    def _fault_globals(self, kernel):
        """The globals block and what it points at, made at the first fault."""
        if getattr(self, "_globals", None) is not None:
            return self._globals
        m = self.machine
        cpus = max(1, len(m.cpus))                 # num_online_cpus
        possible = max(NR_CPUS, cpus)               # the per-CPU areas: every possible CPU
        g = m.alloc(GLOBALS, align=32)
        offsets = m.alloc(4 * possible, align=32)
        percpu = m.alloc(PER_CPU_AREA * possible, align=64)
        m.write(offsets, _words(*(k * PER_CPU_AREA for k in range(possible))))
        perf = m.alloc(64, align=32)
        fsr = m.alloc(FSR_INFO * FSR_ENTRY, align=32)
        fault = m.address_of("do_page_fault")
        for kind in (FSR_PAGE_TRANSLATION, FSR_PAGE_PERMISSION):
            m.write(fsr + kind * FSR_ENTRY, _words(fault))
        stacks = m.alloc(36 * possible, align=32)
        zones = m.alloc(ZONE_BLOCK, align=64)
        m.write(zones + ZONE_PAGESET, _words(percpu + PAGESET_AT))
        for k in range(NR_LRU_LISTS):               # the LRU lists' heads, empty
            head = zones + ZONE_LRU + 8 * k
            m.write(head, _words(head, head))
        threshold = stat_threshold(kernel.allocator.frames, cpus)
        for k in range(cpus):
            m.write(percpu + k * PER_CPU_AREA + PAGESET_AT + PCP_STAT_THRESHOLD,
                    bytes([threshold]))
        vm_stat = m.alloc(128, align=32)
        self._mem_map(kernel)
        m.write(g, _words(offsets, percpu, perf, fsr, 0, stacks, self.mem_map,
                          self.mem_map_pfn, zones, vm_stat, kernel.zero_page.pfn,
                          self.mem_map_pfn + kernel.allocator.frames - 1, CACHEID))
        self._percpu = percpu
        self.vm_ops = m.alloc(32, align=32)
        m.write(self.vm_ops + 8, _words(m.address_of("filemap_fault")))
        self._globals = g
        self._threads, self._mms, self._files = {}, {}, {}
        self._zapping = {}              # per CPU: the mm, VMA and blocks zap_start set up
        self._zap_symbol_ranges = {}    # set_pte routine -> _zap_parts' ranges
        self._free = {"thread": [], "mm": [], "vma": [], "anon_vma": []}
        self._pvec_pages = {}           # per CPU: the pages in the guest's pagevec, in order
        return g

    def _block(self, kind, size):
        """A block of ``kind`` from its free list (the slab hands back the object freed
        last, its lines often still cached), else new."""
        free = self._free[kind]
        return free.pop() if free else self.machine.alloc(size, align=64)

    def free_fault_blocks(self, mm):
        """exit_mmap / free_task: the address space's blocks go back to their free lists."""
        state = self._mms.pop(mm, None) if getattr(self, "_globals", None) else None
        if state is None:
            return
        self._free["mm"].append(state["block"])
        for block in state["vmas"].values():
            self._drop_anon_vma(block)
        self._free["vma"].extend(state["vmas"].values())
        thread = self._threads.pop(mm, None)
        if thread is not None:
            self._free["thread"].append(thread)

    # ------------------------------------------------------------ the structures

    def _thread(self, process):
        """The process's thread block (made at its first fault), its CPU set to this one."""
        return self._thread_of(process.mm)

    def _thread_of(self, mm):
        block = self._threads.get(mm)
        if block is None:
            block = self._threads[mm] = self._block("thread", THREAD_BLOCK)
            self.machine.write(block, bytes(64))
        self.machine.write(block + 8, _words(cpu()))
        self.machine.write(block + TSK_MM, _words(self._mm_block(mm)))
        return block

    def _mm_block(self, mm):
        state = self._mm_state(mm)
        self._sync_vmas(mm, state)
        return state["block"]

    def _mm_state(self, mm):
        """The mm's block (its VMAs' blocks made at the next _mm_block): mm_struct's
        fields the guest reads, and rss_stat's counts (MM_RSS: zero in a new mm)."""
        state = self._mms.get(mm)
        if state is None:
            block = self._block("mm", MM_BLOCK)
            head = block + SEM_WAIT_LIST
            self.machine.write(block, _words(0, 0, 0, mm.pgd.address, 0, 0, head, head,
                                             0, 0, 0))
            state = self._mms[mm] = {"block": block, "vmas": {}, "key": None}
        return state

    def _sync_vmas(self, mm, state):
        """The guest's VMAs of ``mm`` and their rb-tree (a balanced tree of the sorted VMAs,
        as the red-black tree keeps it within a factor of two) when the list changed; a
        VMA gone gives its block back and, if cached, clears mmap_cache (as unmap does)."""
        key = tuple((id(v), v.start, v.end, v.flags) for v in mm.vmas)
        if key == state["key"]:
            return
        state["key"] = key
        old, blocks = state["vmas"], {}
        for vma in mm.vmas:
            blocks[vma] = old.pop(vma, None) or self._new_vma_block(vma)
        for block in old.values():
            self._drop_anon_vma(block)
        self._free["vma"].extend(old.values())
        state["vmas"] = blocks
        block = state["block"]
        for vma, at in blocks.items():
            self._write_vma(mm, vma, at, block)
        self.machine.write(block + MM_RB, _words(self._rb_tree(mm.vmas, blocks)))
        cached = self.machine.read_word(block + MM_MMAP_CACHE)
        if cached and cached not in blocks.values():
            self.machine.write(block + MM_MMAP_CACHE, _words(0))

    def _new_vma_block(self, vma):
        """A VMA's block, its anon_vma the model's (uncharged) where the generic VM's area
        has one (a child's, anon_vma_fork's; a split's half, anon_vma_clone's), else NULL
        (a new area's)."""
        block = self._block("vma", VMA_BLOCK)
        anon_vma = self._block("anon_vma", ANON_VMA_BLOCK) if vma.anon_vma else 0
        self.machine.write(block + VM_ANON_VMA, _words(anon_vma))
        return block

    def _drop_anon_vma(self, block):
        """The area goes: its anon_vma back to the free list (unlink_anon_vmas, uncharged)."""
        anon_vma = self.machine.read_word(block + VM_ANON_VMA)
        if anon_vma:
            self._free["anon_vma"].append(anon_vma)
            self.machine.write(block + VM_ANON_VMA, _words(0))

    def _write_vma(self, mm, vma, at, mm_block):
        file = self._file_block(vma.file) if vma.file is not None else 0
        self.machine.write(at, _words(mm_block, vma.start, vma.end))
        self.machine.write(at + VM_FLAGS, _words(linux_vm_flags(vma.flags)))
        self.machine.write(at + VM_OPS, _words(self.vm_ops if file else 0, vma.pgoff, file))

    def _rb_tree(self, vmas, blocks):
        """Link the VMAs' rb nodes as a balanced tree; the root node's address (0: none)."""
        def link(lo, hi):
            if lo >= hi:
                return 0
            mid = (lo + hi) // 2
            node = blocks[vmas[mid]] + VM_RB
            self.machine.write(node + RB_RIGHT, _words(link(mid + 1, hi), link(lo, mid)))
            return node
        return link(0, len(vmas))

    def _file_block(self, file):
        """The file, its address_space (with the page tree's root) and inode."""
        state = self._files.get(file)
        if state is None:
            m = self.machine
            f, mapping = m.alloc(FILE_BLOCK, align=32), m.alloc(MAPPING_BLOCK, align=32)
            m.write(f, _words(mapping))
            m.write(mapping + AS_HOST, _words(mapping))     # the inode: its fields below
            size = file.pages << PAGE_SHIFT
            m.write(mapping + I_SIZE, _words(size, size >> 32, 0))
            height = 1
            while file.pages > 1 << (RADIX_BITS * height):
                height += 1
            root = self._radix_node(height)
            m.write(mapping + AS_HEIGHT, _words(height, 0, root | 1))   # indirect pointer
            state = self._files[file] = {"file": f, "mapping": mapping, "root": root,
                                         "height": height, "slots": {}}
        return state["file"]

    def _radix_node(self, height):
        node = self.machine.alloc(NODE_BYTES, align=8)
        self.machine.write(node, _words(height))
        return node

    def _page_cache_slot(self, kernel, file, index, page):
        """add_to_page_cache's radix-tree insert (not charged here) and the struct page's
        mapping and PG_uptodate, done once per page."""
        self._file_block(file)
        state = self._files[file]
        struct = self._struct_page(kernel, page)
        if state["slots"].get(index) == struct:
            return
        if kernel.page_cache.lookup(file, index) is not page:
            raise KernelError(f"page {index} of {file.name} is not the page cache's")
        node, height = state["root"], state["height"]
        while height > 1:
            slot = node + NODE_SLOTS + ((index >> (RADIX_BITS * (height - 1))) & 63) * 4
            child = self.machine.read_word(slot)
            if not child:
                child = self._radix_node(height - 1)
                self.machine.write(slot, _words(child))
            node, height = child, height - 1
        # the page cache's reference: the guest count starts at 1 and only grows (the puts
        # are the generic VM's), so the speculative get never finds it freed
        if self.machine.read_word(struct + PAGE_COUNT) == 0:
            self.machine.write(struct + PAGE_COUNT, _words(1))
        self.machine.write(node + NODE_SLOTS + (index & 63) * 4, _words(struct))
        self._page_cache_fields(struct, state)
        state["slots"][index] = struct

    def _page_cache_fields(self, struct, state):
        """A page-cache page's struct page: PG_uptodate and its mapping."""
        flags = self.machine.read_word(struct)
        self.machine.write(struct, _words(flags | 1 << PG_UPTODATE))
        self.machine.write(struct + PAGE_MAPPING, _words(state["mapping"]))

    # ------------------------------------------------------------ the path

    def _run(self, entry, *args, charge):
        return self.call(entry, *args, charge=charge)

    def fault_enter(self, kernel, process, vma, address, access, pte):
        """do_page_fault_enter: the abort's entry to handle_pte_fault (and for a file
        fault filemap_fault's head). Checks that the guest found ``vma`` and took the path
        the generic VM takes."""
        g = self._fault_globals(kernel)
        thread = self._thread(process)
        _, second = self.walk(process.mm, address)
        fsr = FSR_PAGE_PERMISSION if second is not None and second & 2 else \
            FSR_PAGE_TRANSLATION
        if access == "w":
            fsr |= FSR_WRITE
        said = self._run("do_page_fault_enter", address, fsr, thread, g,
                         charge="do_page_fault") & 0xFFFFFFFF
        found = self.machine.read_word(thread + FLT_VMA)
        if found != self._mms[process.mm]["vmas"].get(vma):
            raise KernelError(f"the guest's find_vma found {found:#x} for {address:#x}, "
                              f"not {vma}'s block")
        file_fault = pte == 0 and vma.file is not None
        if said == 2:
            raise SegmentationFault(address, "SIGBUS: beyond the file's end")
        if said != int(file_fault):
            raise KernelError(f"the guest's fault path said {said:#x} at {address:#x}, the "
                              f"generic VM {'a file fault' if file_fault else 'another path'}")

    def fault_exit(self, kernel, process):
        """do_page_fault_exit: min_flt, up_read, the way back to user mode."""
        self._run("do_page_fault_exit", self._threads[process.mm], self._globals,
                  charge="do_page_fault")

    def find_get_page(self, kernel, file, index, page):
        """find_get_page as guest code: the radix-tree walk, the speculative reference.
        ``page``: the page the page cache holds, or None (the walk finds nothing). Returns
        the page the walk found: ``page``, or one another CPU added during the walk (a
        lockless lookup may find it, as 2.6.36's under RCU)."""
        self._fault_globals(kernel)
        self._file_block(file)
        expected = 0
        if page is not None:
            self._page_cache_slot(kernel, file, index, page)
            expected = self._struct_page(kernel, page)
        got = self._run("find_get_page", self._files[file]["mapping"], index,
                        charge="find_get_page")
        if got == expected:
            return page
        now = kernel.page_cache.lookup(file, index)
        if page is None and now is not None and got == self._struct_page(kernel, now):
            return now
        raise KernelError(f"the guest's find_get_page gave {got:#x} for page {index} of "
                          f"{file.name}, the page cache {expected:#x}")

    def file_fault_mapped(self, kernel, process, file, index, page, cow):
        """The rest of filemap_fault after lock_page and __do_fault up to set_pte_at
        (pte_same, mk_pte, page_add_file_rmap unless ``cow``), on the locked page-cache
        page ``page``; its _mapcount is the generic VM's mapcount less one beforehand."""
        self._page_cache_slot(kernel, file, index, page)
        struct = self._struct_page(kernel, page)
        self.machine.write(struct + PAGE_MAPCOUNT, _words(page.mapcount - 1))
        pte = self._run("__do_fault_map", struct, self._threads[process.mm], self._globals,
                        0 if cow else 1, charge="__do_fault") & 0xFFFFFFFF
        if pte == 0xFFFFFFFF or pte >> PAGE_SHIFT != page.pfn:
            raise KernelError(f"the guest's __do_fault refused page {index} of {file.name} "
                              f"or made a PTE of another frame ({pte:#x})")

    maps_file_fault_in_one = True       # file_fault_in_one: see there

    def file_fault_in_one(self, kernel, process, file, index, page, native, ptl):
        """A minor fault on the cached page-cache ``page`` (page ``index`` of ``file``)
        from find_get_page to pte_unmap_unlock as ONE guest call (__do_fault_file:
        find_get_page, lock_page, __do_fault_map, spin_lock of the PTE lock ``ptl`` (0: one
        CPU, none), set_pte_ext of ``native``, spin_unlock), where the model made six calls;
        each step charged to its own row as before (FILE_FAULT_SYMBOLS). Checks the guest
        found ``page`` and made a PTE of its frame. Returns lock_page's waits."""
        g = self._fault_globals(kernel)
        self._file_block(file)
        self._page_cache_slot(kernel, file, index, page)
        struct = self._struct_page(kernel, page)
        self.machine.write(struct + PAGE_MAPCOUNT, _words(page.mapcount - 1))
        thread = self._threads[process.mm]
        set_pte = "cpu_v7_set_pte_ext_pk1" if self.applied("PK1") else "cpu_v7_set_pte_ext"
        m = self.machine
        spin = (m.address_of("spin_lock"), m.address_of("spin_unlock")) if ptl else (0, 0)
        symbols = FILE_FAULT_SYMBOLS_SMP if ptl else FILE_FAULT_SYMBOLS
        refused = self._split_call("__do_fault_file", "__do_fault", symbols, set_pte,
                                   self._files[file]["mapping"], index, thread, g, ptl,
                                   native, m.address_of(set_pte), *spin, called_once=True)
        found, waits, pte = (m.read_word(thread + at) for at in (FLT_FOUND, FLT_WAITS,
                                                                  FLT_MK_PTE))
        if found != struct:
            raise KernelError(f"the guest's find_get_page gave {found:#x} for page {index} "
                              f"of {file.name}, the page cache {struct:#x}")
        if refused or pte >> PAGE_SHIFT != page.pfn:
            raise KernelError(f"the guest's __do_fault refused page {index} of {file.name} "
                              f"or made a PTE of another frame ({pte:#x})")
        return waits

    # ------------------------------------------------------------ anonymous pages

    def _anon_blocks(self, kernel, mm, vma):
        """The globals, current's thread block and the VMA's block of an anonymous fault."""
        g = self._fault_globals(kernel)
        return g, self._thread_of(mm), self._mms[mm]["vmas"][vma]

    def anon_fault_head(self, kernel, mm, vma, address, write):
        """do_anonymous_page up to the allocation as guest code (anon_v7.S): a read checks
        the zero page's PTE the guest makes; a write runs anon_vma_prepare's test, whose
        slow path (the area's first anonymous page: a new anon_vma) is the model's,
        uncharged."""
        g, _, block = self._anon_blocks(kernel, mm, vma)
        got = self._run("anon_fault_head", address, int(write), block, g,
                        charge="do_anonymous_page") & 0xFFFFFFFF
        if not write:
            if got >> PAGE_SHIFT != kernel.zero_page.pfn:
                raise KernelError(f"the guest's do_anonymous_page made {got:#x} for a read at "
                                  f"{address:#x}, not the zero page's PTE")
        elif got == 0:
            self.machine.write(block + VM_ANON_VMA,
                               _words(self._block("anon_vma", ANON_VMA_BLOCK)))

    def anon_fault_map(self, kernel, mm, vma, address, ptep, page):
        """The rest of do_anonymous_page for the new, zeroed ``page`` up to set_pte_at, under
        the PTE lock (anon_v7.S: __SetPageUptodate, mk_pte, pte_none, inc_mm_counter_fast,
        page_add_new_anon_rmap); checks the PTE the guest made."""
        g, thread, block = self._anon_blocks(kernel, mm, vma)
        struct = self._new_struct_page(kernel, page)
        pte = self._run("anon_fault_map", struct, thread, g, block, address, ptep,
                        charge="do_anonymous_page") & 0xFFFFFFFF
        if pte == 0xFFFFFFFF or pte >> PAGE_SHIFT != page.pfn:
            raise KernelError(f"the guest's do_anonymous_page refused {address:#x} or made a "
                              f"PTE of another frame ({pte:#x})")
        self._lru_add(kernel, thread, page)

    def anon_cow_map(self, kernel, mm, vma, address, page):
        """__do_fault's early copy-on-write of ``page`` (the copy): __SetPageUptodate,
        inc_mm_counter_fast and page_add_new_anon_rmap as guest code (anon_v7.S), charged
        to __do_fault; anon_vma_prepare's slow path as in anon_fault_head."""
        g, thread, block = self._anon_blocks(kernel, mm, vma)
        if not self.machine.read_word(block + VM_ANON_VMA):
            self.machine.write(block + VM_ANON_VMA,
                               _words(self._block("anon_vma", ANON_VMA_BLOCK)))
        struct = self._new_struct_page(kernel, page)
        self._run("anon_cow_map", struct, thread, g, block, address, charge="__do_fault")
        self._lru_add(kernel, thread, page)

    def _new_struct_page(self, kernel, page):
        """A page fresh from the allocator, as prep_new_page leaves its struct page: no
        flags, one reference, no mapping (_mapcount -1)."""
        struct = self._struct_page(kernel, page)
        self.machine.write(struct, _words(0, 1, -1, 0, 0, 0))
        return struct

    def _lru_add(self, kernel, thread, page):
        """After the guest's lru_cache_add of ``page``: ____pagevec_lru_add of a full pagevec
        (every PAGEVEC_SIZE-th page) as guest code (lru_v7.S, under zone->lru_lock),
        counted. The kernel's pagevec holds a reference the generic VM does not count: a
        page the generic VM freed meanwhile (its frame perhaps handed out again) is stood in
        for by a spare struct page, so that the drain's stores and puts go to no page that
        is no longer the one added. Checks the guest's pagevec is empty after."""
        pvec = self._percpu + cpu() * PER_CPU_AREA + LRU_PVEC_ANON
        added = self._pvec_pages.setdefault(cpu(), [])
        added.append(page)
        if self.machine.read_word(pvec) != len(added):
            raise KernelError(f"the guest's pagevec holds {self.machine.read_word(pvec)} "
                              f"pages, the model added {len(added)}")
        if len(added) < PAGEVEC_SIZE:
            return
        gone = [k for k, p in enumerate(added) if kernel.allocator.pages.get(p.pfn) is not p]
        if gone:
            spare = self._spare_struct_page()
            self.machine.write(spare, _words(0, len(gone) + 1, -1))
            for k in gone:
                self.machine.write(pvec + PVEC_PAGES + 4 * k, _words(spare))
            self.ledger.count("lru_add_spares", len(gone))
        left = self._run("____pagevec_lru_add", pvec, thread, self._globals,
                         charge="____pagevec_lru_add")
        if left or self.machine.read_word(pvec):
            raise KernelError(f"the guest's ____pagevec_lru_add left {left} pages")
        added.clear()
        self.ledger.count("lru_add_drains")

    def _spare_struct_page(self):
        if getattr(self, "_spare", None) is None:
            self._spare = self.machine.alloc(STRUCT_PAGE_BYTES, align=32)
        return self._spare

    # ------------------------------------------------------------ unmapping

    def _mmu_gather(self):
        """This CPU's mmu_gathers (arch/arm/include/asm/tlb.h, a per-CPU variable)."""
        return self._percpu + cpu() * PER_CPU_AREA + MMU_GATHER_AT

    def zap_start(self, kernel, mm, vma, fullmm):
        """tlb_gather_mmu's fullmm and tlb_start_vma's empty range, and unmap_vmas' zap_work
        (the per-VMA C, in the VMA's fixed cost)."""
        self._fault_globals(kernel)
        tlb = self._mmu_gather()
        # tlb_start_vma's empty range starts at TASK_SIZE (arch/arm/include/asm/tlb.h 88-95):
        # the model's one user-space top, its 2G/2G split's (emu.kernel.arm); every user
        # address is below it, so the first PTE zapped sets range_start either way
        self.machine.write(tlb + TLB_FULLMM, _words(int(fullmm), TASK_SIZE, 0, ZAP_BLOCK_SIZE))
        self._zapping[cpu()] = (mm, vma, tlb, None)     # the blocks at the first PTE

    def zap_ptes(self, kernel, mm, vma, start, end, entries, released):
        """zap_pte_range over one PTE page's part [start, end) as ONE guest call (zap_v7.S
        zap_pte_range: the loop, with its calls of set_pte_ext, mark_page_accessed,
        page_remove_rmap and free_page_and_swap_cache); a second call where *zap_work ran
        out first (unmap_vmas resets it). Each struct page first takes the generic VM's
        counts (the references and the mappings before this one goes) and its mapping (the
        file's, or PAGE_MAPPING_ANON); the guest must find the same struct pages (their
        number and the sum of their addresses). The cycles are charged by symbol, as a
        sampling profiler sees them (ZAP_SYMBOLS)."""
        g = self._fault_globals(kernel)
        owner, owner_vma, tlb, blocks = self._zapping[cpu()]
        if (owner, owner_vma) != (mm, vma):
            raise KernelError(f"zap_pte_range of {vma} without its zap_start")
        if blocks is None:
            blocks = self._thread_of(mm), self._mms[mm]["vmas"][vma]
            self._zapping[cpu()] = (mm, vma, tlb, blocks)
        thread, vma_block = blocks
        expected, written = [], set()
        for _, _, _, page in entries:
            if page.reserved:
                continue
            struct = self._struct_page(kernel, page)
            expected.append(struct)
            if struct in written:           # mapped twice here: the guest's counts go on
                continue
            written.add(struct)
            self._write_page_counts(struct, page)
        set_pte = "cpu_v7_set_pte_ext_pk1" if self.applied("PK1") else "cpu_v7_set_pte_ext"
        found, total, ptep, address = 0, 0, mm.ptep(start), start
        while True:
            address = self._zap_call(ptep, address, end, vma_block, thread, g, tlb, set_pte)
            found += self.machine.read_word(tlb + TLB_FOUND_N)
            total += self.machine.read_word(tlb + TLB_FOUND_SUM)
            if address >= end:
                break
            self.machine.write(tlb + TLB_ZAP_WORK, _words(ZAP_BLOCK_SIZE))   # unmap_vmas
            ptep = mm.ptep(address)
        if (found, total & 0xFFFFFFFF) != (len(expected), sum(expected) & 0xFFFFFFFF):
            raise KernelError(f"the guest's zap_pte_range found {found} struct pages in "
                              f"[{start:#x}, {end:#x}), the generic VM {len(expected)} (or "
                              "other ones)")
        self.ledger.count("set_pte", len(entries))
        if not self.applied("PK1"):
            self.ledger.count("lines_cleaned:set_pte", len(entries))
        for address, ptep, pte, page in entries:
            kernel._zap_cleared(mm, address, ptep, pte, page, released, cleared=True)

    def _zap_call(self, ptep, address, end, vma_block, thread, g, tlb, set_pte):
        """One guest zap_pte_range, charged as zap_pte (the chapter's unmap_vmas, where
        zap_pte_range is inlined) less the cycles of the functions it calls, each charged
        to its own row; returns the address where it stopped."""
        return self._split_call("zap_pte_range", "zap_pte", ZAP_SYMBOLS, set_pte, ptep,
                                address, end, vma_block, thread, g, tlb,
                                self.machine.address_of(set_pte))

    def _split_call(self, entry, row, symbols, set_pte, *args, called_once=False):
        """One guest call of ``entry``, charged to ``row`` less the cycles of the functions
        it calls (``symbols``: {row: their symbols}), each charged to its own row, as a
        sampling profiler sees them; returns the call's r0. A row's calls are the times its
        first symbol's first instruction ran, or with ``called_once`` one (each function
        called at most once: spin_lock's first instruction is its loop's, run again while
        the lock is held elsewhere)."""
        rows, spans = self._symbol_parts(symbols, set_pte)
        with self.machine.mmu.translation_off(), \
                profiler.own_counts(self.machine, cpu(), spans) as counted:
            run = self.machine.call(entry, *args)
        self.ledger.guest(row, run)
        for part, (calls, instructions, cycles) in zip(rows, counted.sums()):
            if calls and called_once:
                calls = 1
            if calls:
                self.ledger.move(row, part, cycles, calls=calls, instructions=instructions)
        return run.return_value & 0xFFFFFFFF

    def _symbol_parts(self, symbols, set_pte):
        """The ledger rows of the functions a loop calls (``symbols``: {row: its symbols,
        the first one the row's entry; None: ``set_pte``}) and the CodeSpans of each row's
        symbols, in the same order."""
        key = (id(symbols), set_pte)
        parts = self._zap_symbol_ranges.get(key)
        if parts is None:
            table = {s.name: (s.start, s.end) for s in
                     profiler.symbol_table(self.machine.programs)}
            groups = [[table[name if name else set_pte] for name in names]
                      for names in symbols.values()]
            parts = (tuple(symbols), profiler.CodeSpans(self.machine, groups))
            self._zap_symbol_ranges[key] = parts
        return parts

    # ------------------------------------------------------------ fork's copy

    def copy_ptes(self, kernel, dst, src, vma, start, end):
        """copy_pte_range over one PTE page's part [start, end) of the parent's ``vma`` as
        ONE guest call (copy_v7.S: the loop with copy_one_pte inlined, its set_pte_ext
        calls, get_page, page_dup_rmap, the rss counts and add_mm_rss_vec), the child's PTE
        page allocated first (pte_alloc_map_lock). Each struct page first takes the generic
        VM's counts and mapping; the guest must find the same struct pages (their number and
        the sum of their addresses), then the generic VM takes the references and mappings.
        The cycles are charged to copy_pte (copy_page_range in the chapter's profile) less
        set_pte_ext's, charged to cpu_v7_set_pte_ext."""
        g = self._fault_globals(kernel)
        dst_ptep = kernel._pte_alloc(dst, start)
        entries = [(ptep, kernel._page_of(pte))
                   for _, ptep, pte in kernel._present_ptes(src, start, end)]
        expected, written = [], set()
        for _, page in entries:
            if page.reserved:
                continue
            struct = self._struct_page(kernel, page)
            expected.append(struct)
            if struct not in written:
                written.add(struct)
                self._write_page_counts(struct, page)
        thread = self._thread_of(src)
        vma_block = self._mms[src]["vmas"][vma]
        check = self._mmu_gather() + TLB_FOUND_N
        set_pte = "cpu_v7_set_pte_ext_pk1" if self.applied("PK1") else "cpu_v7_set_pte_ext"
        stopped = self._split_call("copy_pte_range", "copy_pte", COPY_SYMBOLS, set_pte,
                                   dst_ptep, src.ptep(start), start, end, vma_block, thread,
                                   g, self._mm_state(dst)["block"], self.machine.address_of(
                                       set_pte), check)
        found, total = self.machine.read_word(check), self.machine.read_word(check + 4)
        if stopped != end or (found, total) != (len(expected),
                                                sum(expected) & 0xFFFFFFFF):
            raise KernelError(f"the guest's copy_pte_range stopped at {stopped:#x} and found "
                              f"{found} struct pages in [{start:#x}, {end:#x}), the generic "
                              f"VM {len(expected)} (or other ones)")
        writes = len(entries) * (1 if vma.shared else 2)    # is_cow_mapping: the parent's too
        self.ledger.count("set_pte", writes)
        if not self.applied("PK1"):
            self.ledger.count("lines_cleaned:set_pte", writes)
        for _, page in entries:
            if not page.reserved:
                page.count += 1
                page.mapcount += 1

    def _write_page_counts(self, struct, page):
        """A struct page takes the generic VM's counts (its references, its mappings less
        one) and mapping (the file's, or PAGE_MAPPING_ANON)."""
        mapping = 1
        if page.kind == "pagecache":
            self._file_block(page.mapping)
            mapping = self._files[page.mapping]["mapping"]
        self.machine.write(struct + 4, _words(page.count, page.mapcount - 1))
        self.machine.write(struct + PAGE_MAPPING, _words(mapping))

    # ------------------------------------------------------------ do_wp_page

    def _wp_old_struct(self, kernel, page):
        """The old page's struct page with the generic VM's counts (its references and its
        mappings less one) and mapping (a file's; an anonymous page keeps its anon_vma, or
        PAGE_MAPPING_ANON alone where it has none yet)."""
        struct = self._struct_page(kernel, page)
        mapping = self.machine.read_word(struct + PAGE_MAPPING)
        if page.kind == "pagecache":
            self._file_block(page.mapping)
            mapping = self._files[page.mapping]["mapping"]
        elif not mapping & 1:
            mapping = 1
        self.machine.write(struct + PAGE_COUNT, _words(page.count, page.mapcount - 1))
        self.machine.write(struct + PAGE_MAPPING, _words(mapping))
        return struct

    def _ensure_anon_vma(self, block):
        """The area's anon_vma, made by the model (uncharged) where the guest's has none:
        anon_vma_prepare's slow path, or anon_vma_fork's for a child's area."""
        if not self.machine.read_word(block + VM_ANON_VMA):
            self.machine.write(block + VM_ANON_VMA,
                               _words(self._block("anon_vma", ANON_VMA_BLOCK)))

    def wp_fault_head(self, kernel, mm, vma, ptep, old):
        """do_wp_page's vm_normal_page and PageAnon test as guest code (wp_v7.S) on the
        PTE at ``ptep`` of the page ``old``; checks the guest found the generic VM's page
        and path. Returns the old page's struct page (0: the zero page)."""
        g, _, block = self._anon_blocks(kernel, mm, vma)
        struct = 0 if old.reserved else self._wp_old_struct(kernel, old)
        got = self._run("wp_page_head", self.machine.read_word(ptep), block, g,
                        charge="do_wp_page") & 0xFFFFFFFF
        anon = not old.reserved and old.kind == "anon"
        if got != struct | int(anon):
            raise KernelError(f"the guest's do_wp_page found {got:#x} for the page at "
                              f"{ptep:#x}, the generic VM {struct:#x} (anonymous: {anon})")
        return struct

    def wp_reuse_test(self, kernel, mm, vma, struct, reuse):
        """reuse_swap_page and page_move_anon_rmap as guest code, under the page lock;
        checks the guest's decision (page_mapcount <= 1) is the generic VM's (``reuse``)."""
        _, _, block = self._anon_blocks(kernel, mm, vma)
        self._ensure_anon_vma(block)
        got = self._run("wp_reuse_test", struct, block, charge="reuse_swap_page")
        if bool(got) != reuse:
            raise KernelError(f"the guest's reuse_swap_page said {got} for struct page "
                              f"{struct:#x}, the generic VM {'reuse' if reuse else 'copy'}")

    def wp_reuse_pte(self, kernel, mm, vma, ptep, page):
        """The reuse's new PTE (flush_cache_page, pte_mkyoung, pte_mkdirty, maybe_mkwrite,
        ptep_set_access_flags' test) as guest code; checks it maps ``page``."""
        g, _, block = self._anon_blocks(kernel, mm, vma)
        pte = self._run("wp_reuse_pte", self.machine.read_word(ptep), block, ptep, g,
                        charge="do_wp_page") & 0xFFFFFFFF
        if pte >> PAGE_SHIFT != page.pfn:
            raise KernelError(f"the guest's do_wp_page reuse made {pte:#x} at {ptep:#x}, not "
                              f"a changed PTE of frame {page.pfn:#x}")

    def wp_copy_head(self, kernel, mm, vma, ptep, struct):
        """The copy's page_cache_get of the old page, anon_vma_prepare's test and
        is_zero_pfn as guest code; anon_vma_prepare's slow path is the model's."""
        g, _, block = self._anon_blocks(kernel, mm, vma)
        self._run("wp_copy_head", struct, block, self.machine.read_word(ptep), g,
                  charge="do_wp_page")
        self._ensure_anon_vma(block)

    def wp_copy_map(self, kernel, mm, vma, address, ptep, new, struct):
        """After the copy (or the zeroed page) under the PTE lock: __SetPageUptodate,
        pte_same, the rss counters, flush_cache_page and mk_pte as guest code, on the new
        page's fresh struct page; checks the PTE maps ``new``. Returns the new struct."""
        g, thread, block = self._anon_blocks(kernel, mm, vma)
        fresh = self._new_struct_page(kernel, new)
        pte = self._run("wp_copy_map", fresh, thread, g, block, address, ptep,
                        self.machine.read_word(ptep), struct, charge="do_wp_page") & 0xFFFFFFFF
        if pte == 0xFFFFFFFF or pte >> PAGE_SHIFT != new.pfn:
            raise KernelError(f"the guest's do_wp_page refused {address:#x} or made a PTE of "
                              f"another frame ({pte:#x})")
        return fresh

    def wp_copy_rmap(self, kernel, mm, vma, address, fresh, page):
        """page_add_new_anon_rmap of the copy ``page`` (its struct page ``fresh``) as guest
        code (after ptep_clear_flush)."""
        g, thread, block = self._anon_blocks(kernel, mm, vma)
        self._run("wp_copy_rmap", fresh, thread, g, block, address, charge="do_wp_page")
        self._lru_add(kernel, thread, page)

    def wp_drop_old(self, kernel, mm, struct, left_expected):
        """page_remove_rmap of the old page and its two page_cache_release as guest code,
        under the PTE lock; checks the references left are the generic VM's after its put
        (``left_expected``)."""
        g = self._fault_globals(kernel)
        self._run("page_remove_rmap", struct, self._thread_of(mm), g,
                  charge="page_remove_rmap")
        left = self._run("wp_put_old", struct, charge="put_page") & 0xFFFFFFFF
        if left != left_expected:
            raise KernelError(f"the guest's do_wp_page left struct page {struct:#x} "
                              f"{left} references, the generic VM {left_expected}")
