"""Page faults and user accesses (mm/memory.c's fault paths: do_page_fault, handle_mm_fault,
do_anonymous_page, do_no_page, do_wp_page), a mixin of the Kernel (emu.kernel.vm)."""
from __future__ import annotations

from .errors import KernelError, SegmentationFault
from .pgtable import (PAGE_SIZE, PROT, VM_EXEC, VM_WRITE, _PAGE_ACCESSED, _PAGE_BASE,
                      _PAGE_DIRTY, _PAGE_EXEC, _PAGE_PRESENT, _PAGE_RW, _PAGE_USER,
                      with_hashpte)


class PageFaults:
    """The Kernel's fault paths and user accesses."""

    # ------------------------------------------------------------ page faults

    def _vm_pte_bits(self, vma, writable):
        bits = _PAGE_BASE | _PAGE_USER
        if vma.flags & VM_EXEC:
            bits |= _PAGE_EXEC
        if writable:
            bits |= _PAGE_RW
        return bits

    def _file_pte_bits(self, vma, writable, write):
        """A file fault's PTE bits (__do_fault): the VMA's, dirty when the fault writes."""
        return self._vm_pte_bits(vma, writable) | (_PAGE_DIRTY if write else 0)

    def page_fault(self, process, address, access="r"):
        """do_page_fault + handle_mm_fault for a user access ('r', 'w' or 'x')."""
        mm = process.mm
        guest = self.arch.runs_fault_path       # the backend runs the generic path as guest code
        if not guest:
            self.ledger.fixed("fault_entry")
        self.ledger.count("faults")
        vma = mm.find_vma(address)
        if vma is None:
            raise SegmentationFault(address, "no VMA maps it")
        needed = PROT[access]
        if not vma.flags & needed:
            raise SegmentationFault(address, f"{vma} does not allow {access!r}")
        # handle_mm_fault: the table walk under mm->page_table_lock (2.6.36: only to
        # allocate a PTE page); the handlers drop it to allocate, clear, copy or read a
        # page and take it again to set the PTE
        ptep = mm.ptep(address)
        walk_locked = self.arch.walk_takes_ptl or ptep is None
        with self.locked(*((mm.page_table_lock,) if walk_locked else ())):
            if walk_locked:                 # walked again under the lock (other CPUs ran)
                ptep = self._pte_alloc(mm, address)
            pte = self._read_pte(ptep)
        if guest:
            self.arch.fault_enter(self, process, vma, address, access, pte)
        self._handle_pte_fault(process, vma, address, access, ptep, pte)
        if guest:
            self.arch.fault_exit(self, process)

    def _handle_pte_fault(self, process, vma, address, access, ptep, pte):
        mm, write = process.mm, access == "w"
        if not pte & _PAGE_PRESENT:
            if vma.file is None:
                self._do_anonymous_page(mm, vma, address, ptep, write)
            else:
                self._do_no_page(mm, vma, address, ptep, write, process)
        elif write and not pte & _PAGE_RW:
            self._do_wp_page(mm, vma, address, ptep, pte)
        elif access == "x" and not pte & _PAGE_EXEC:
            with self.locked(mm.page_table_lock):
                self.policy.exec_fault(self, vma, self._page_of(pte))
                self._write_pte(ptep, pte | _PAGE_EXEC)
                self.arch.flush_tlb_page_nohash(mm, address)    # 4xx fault.c: _tlbie
            self.ledger.count("exec_faults")
        else:                                   # the PTE allowed it: just make it young
            with self.locked(mm.page_table_lock):
                new = pte | _PAGE_ACCESSED | (_PAGE_DIRTY if write else 0)
                self._write_pte(ptep, new)
                self.arch.flush_tlb_page_nohash(mm, address)    # ptep_set_access_flags
                self.update_mmu_cache(mm, vma, address, ptep)

    def _do_anonymous_page(self, mm, vma, address, ptep, write):
        guest = self.arch.runs_fault_path       # its bookkeeping as guest code
        if guest:
            self.arch.anon_fault_head(self, mm, vma, address, write)
        else:
            self.ledger.fixed("anon_fault")
        if not write:                           # map the shared zero page, read only
            self.ledger.count("zero_page_maps")
            with self.locked(mm.page_table_lock):
                self._set_pte(mm, address, ptep, self.zero_page.address |
                              self._vm_pte_bits(vma, False))
                self.update_mmu_cache(mm, vma, address, ptep)
            return
        vma.anon_vma = True                     # anon_vma_prepare (2.6.36 mm/memory.c 2857)
        page = self._prezeroed_page()
        if page is None:
            page = self._alloc_page("anon")
            self.arch.clear_page(page.address)      # clear_user_page
            self.ledger.count("zeroed_pages")
        self._kernel_wrote(page)
        page.mapcount = 1
        self.policy.mapping_page(self, page, "anonymous")
        with self.locked(mm.page_table_lock):
            if guest:
                self.arch.anon_fault_map(self, mm, vma, address, ptep, page)
            self._set_pte(mm, address, ptep, page.address | self._vm_pte_bits(vma, True) |
                          _PAGE_DIRTY)
            self.update_mmu_cache(mm, vma, address, ptep)

    def _prezeroed_page(self):
        """A page cleared in advance (Dougan 1999: the idle task's, which get_free_page()
        hands out; emu.kernel.idle supplies them through ``prezeroed_pages``), or None: the
        fault clears one itself. Kernels without an idle task have no supply."""
        if self.prezeroed_pages is None:
            return None
        page = self.prezeroed_pages()
        if page is not None:
            page.kind = "anon"
            self.ledger.count("prezeroed_pages_used")
        return page

    def _find_or_read_page(self, file, index):
        """filemap_nopage / filemap_fault: find_get_page, else page_cache_read and
        ``retry_find`` (I/O free, see above). Two CPUs may both miss and both read: the one
        whose insert comes second loses (see _page_cache_read) and finds the winner's."""
        if index >= file.pages:
            raise KernelError(f"page {index} is beyond the end of {file.name} "
                              f"({file.pages} pages)")
        page = self._find_get_page(file, index)
        if page is None:
            # Linux's winner also goes back to find_get_page (retry_find); the model's takes
            # the page it added, as before (the second lookup is not charged)
            page = self._page_cache_read(file, index) or self._find_get_page(file, index)
            if page is None:
                raise KernelError(f"page {index} of {file.name}: lost the race to add it "
                                  "but the page cache has none")
        page.count += 1                             # our reference
        return page

    def _find_get_page(self, file, index):
        """find_get_page: the page cache's page or None (its reference taken by the caller)."""
        if self.arch.runs_fault_path:               # the radix tree and the get in guest code
            page = self.page_cache.lookup(file, index)
            return self.arch.find_get_page(self, file, index, page)
        if self.arch.lockless_page_cache:           # 2.6.27 on: RCU, a speculative get
            self.ledger.fixed("page_cache_lookup")
            page = self.page_cache.lookup(file, index)
            if page is not None:
                self.arch.page_cache_get(self, page)
            return page
        with self.locked(self.page_lock(file)):     # 2.6.0: under the mapping's page_lock
            self.ledger.fixed("page_cache_lookup")
            return self.page_cache.lookup(file, index)

    def _page_cache_read(self, file, index):
        """page_cache_read: allocate a page, add it (add_to_page_cache: the radix-tree insert,
        which looks for the slot under the mapping's lock: page_lock in 2.6.0, tree_lock in
        2.6.36), then read it. The page, or None if another CPU added one first (the
        insert's -EEXIST): ours is freed (page_cache_release; the failed insert is not
        charged) and the caller finds theirs (mm/filemap.c of 2.6.0 and 2.6.36,
        page_cache_read: "losing race to add is OK")."""
        page = self._alloc_page("pagecache")
        with self.locked(self.page_lock(file)):
            won = self.page_cache.lookup(file, index) is None
            if won:
                page.mapping, page.index = file, index
                self.page_cache.add(file, index, page)
                self.ledger.fixed("page_cache_read")
        if not won:
            self.ledger.count("page_cache_races_lost")
            self._put_page(page)
            return None
        self.machine.write(page.address, file.content(index))
        self._kernel_wrote(page)
        self.ledger.count("page_cache_reads")
        return page

    def fill_page_cache(self, file):
        """``file``'s pages as a read() or write() of a program outside the model leaves
        them in the page cache (cpp reading a source file, writing its dependency file):
        each page missing is allocated, added and filled, a page the kernel wrote
        (flush_dcache_page: PG_arch_1 clear). Nothing is charged: that read()'s or
        write()'s cost is the file I/O's (emu.kernel.fileio), not the VM's."""
        for index in range(file.pages):
            if self.page_cache.lookup(file, index) is not None:
                continue
            page = self.allocator.alloc("pagecache")        # uncharged: see above
            page.mapping, page.index = file, index
            self.page_cache.add(file, index, page)
            self.machine.write(page.address, file.content(index))
            self._kernel_wrote(page)

    def truncate_file(self, file):
        """A deleted file's pages leave the page cache: truncate_inode_pages(mapping, 0) at
        the last iput of an unlinked inode (2.5.66 fs/inode.c generic_delete_inode,
        mm/truncate.c: per page truncate_complete_page, remove_from_page_cache,
        page_cache_release), each page freed when no one else holds it. The file must be
        mapped by no one (rm's case: every process that mapped it has unmapped it)."""
        for index in range(file.pages):
            page = self.page_cache.lookup(file, index)
            if page is None:
                continue
            if page.mapcount:
                raise KernelError(f"page {index} of {file.name} is still mapped")
            self.ledger.fixed("truncate_page")
            self.page_cache.remove(file, index)
            page.mapping = None
            self.ledger.count("pages_truncated")
            self._put_page(page)

    def _do_no_page(self, mm, vma, address, ptep, write, process=None):
        if not self.arch.runs_fault_path:
            self.ledger.fixed("file_fault")
        elif self._file_fault_in_one(mm, vma, address, ptep, write, process):
            return
        index = vma.file_index(address)
        page = self._find_or_read_page(vma.file, index)
        locked = page                   # ->fault returns it locked; __do_fault unlocks it
        self.arch.lock_page(self, locked)
        writable = bool(vma.flags & VM_WRITE) and vma.shared
        cow = write and not vma.shared
        if self.arch.runs_fault_path:
            self.arch.file_fault_mapped(self, process, vma.file, index, page, cow)
        if cow:                                     # early copy-on-write of a private page
            vma.anon_vma = True                     # anon_vma_prepare (mm/memory.c 2954)
            new = self._alloc_page("anon")
            self.arch.copy_page(new.address, page.address)      # copy_user_page
            self._kernel_wrote(new)
            self.ledger.count("cow_copies")
            self._put_page(page)
            page, writable = new, True
        page.mapcount += 1
        # the 2.4 kernels called flush_page_to_ram twice on this path: in filemap_nopage
        # (mm/filemap.c, on the page it returns: the page-cache page or its early copy) and
        # in do_no_page (mm/memory.c) (read in 2.4.0). 2.5.66, Table 2's kernel, still had
        # both calls (read in 2.5.66: mm/filemap.c filemap_nopage and filemap_getpage,
        # mm/memory.c break_cow, do_swap_page, do_anonymous_page and do_no_page; its
        # include/asm-ppc/pgtable.h defines the hook empty, so the paper's original kernel
        # restored it); Hugh Dickins's patch removing flush_page_to_ram, made against
        # 2.5.66-mm3 (LKML, 3 April 2003; in 2.5.68), deletes them from both functions
        self.policy.mapping_page(self, page, "filemap_nopage")
        self.policy.mapping_page(self, page, "file" if page.kind == "pagecache" else "cow")
        bits = self._file_pte_bits(vma, writable, write)
        with self.locked(mm.page_table_lock):
            if cow and self.arch.runs_fault_path:    # page_add_new_anon_rmap, guest code
                self.arch.anon_cow_map(self, mm, vma, address, page)
            self._set_pte(mm, address, ptep, page.address | bits)
            self.update_mmu_cache(mm, vma, address, ptep)
        self.arch.unlock_page(self, locked)

    def _file_fault_in_one(self, mm, vma, address, ptep, write, process):
        """_do_no_page's common case as one guest call where the backend can
        (``arch.maps_file_fault_in_one``): the page cached, no early copy-on-write, and
        nothing for the I-cache policy to do (policy.maps_without_work). The same steps as
        below, in the same order; the generic VM's state after them. False: not this case
        (the step-by-step path runs)."""
        if not getattr(self.arch, "maps_file_fault_in_one", False) or \
                (write and not vma.shared):
            return False
        file, index = vma.file, vma.file_index(address)
        page = self.page_cache.lookup(file, index) if index < file.pages else None
        if page is None or not self.policy.maps_without_work(vma, page):
            return False
        writable = bool(vma.flags & VM_WRITE) and vma.shared
        old = self._read_pte(ptep)
        value = with_hashpte(old, page.address | self._file_pte_bits(vma, writable, write))
        self.arch.kernel_reference(ptep, True)
        ptl = mm.page_table_lock if self.smp else 0
        waits = self.arch.file_fault_in_one(self, process, file, index, page,
                                            self.arch.native_pte(value), ptl)
        page.count += 1                             # find_get_page's reference
        self.ledger.count("page_locks")
        self.ledger.count("page_lock_waits", waits)
        page.mapcount += 1
        self.arch.pte_was_set(ptep)
        self._replaced(mm, address, old)
        self.update_mmu_cache(mm, vma, address, ptep)
        self.arch.unlock_page(self, page)
        return True

    def _do_wp_page(self, mm, vma, address, ptep, pte):
        guest = self.arch.runs_fault_path       # its bookkeeping as guest code (ARM)
        if not guest:
            self.ledger.fixed("wp_fault")
        old = self._page_of(pte)
        anon = not old.reserved and old.kind == "anon"
        reuse = anon and old.count == 1         # the only user: writable in place, no copy
        struct = self.arch.wp_fault_head(self, mm, vma, ptep, old) if guest else None
        if anon:
            # 2.6.x do_wp_page: an anonymous page is locked around reuse_swap_page
            self.arch.lock_page(self, old)
            if guest:
                self.arch.wp_reuse_test(self, mm, vma, struct, reuse)
            self.arch.unlock_page(self, old)
        if reuse:
            self.ledger.count("wp_reuse")
            with self.locked(mm.page_table_lock):
                if guest:
                    self.arch.wp_reuse_pte(self, mm, vma, ptep, old)
                self._set_pte(mm, address, ptep,
                              pte | _PAGE_RW | _PAGE_DIRTY | _PAGE_ACCESSED)
                self.flush_tlb_page(mm, address)
                self.update_mmu_cache(mm, vma, address, ptep)
            return
        if guest:
            self.arch.wp_copy_head(self, mm, vma, ptep, struct)
        vma.anon_vma = True                     # anon_vma_prepare (2.6.36 mm/memory.c 2242)
        new = self._alloc_page("anon")
        if old.reserved:
            self.arch.clear_page(new.address)
            self.ledger.count("zeroed_pages")
        else:
            self.arch.copy_page(new.address, old.address)
            self.ledger.count("cow_copies")
        self._kernel_wrote(new)
        new.mapcount = 1
        self.policy.mapping_page(self, new, "cow")
        with self.locked(mm.page_table_lock):
            if guest:
                self._wp_guest_map(mm, vma, address, ptep, new, struct)
            else:
                self._set_pte(mm, address, ptep, new.address |
                              self._vm_pte_bits(vma, True) | _PAGE_DIRTY)
                self.flush_tlb_page(mm, address)            # ptep_establish
            self.update_mmu_cache(mm, vma, address, ptep)
            if guest and not old.reserved:      # page_remove_rmap, the two releases
                self.arch.wp_drop_old(self, mm, struct, old.count - 1)
        if not old.reserved:
            old.mapcount -= 1
            self._put_page(old)

    def _wp_guest_map(self, mm, vma, address, ptep, new, struct):
        """2.6.36's order under the PTE lock: the new PTE made, ptep_clear_flush (the PTE
        cleared, then flush_tlb_page), page_add_new_anon_rmap, set_pte_at."""
        fresh = self.arch.wp_copy_map(self, mm, vma, address, ptep, new, struct)
        self._write_pte(ptep, 0)
        self.flush_tlb_page(mm, address)
        self.arch.wp_copy_rmap(self, mm, vma, address, fresh, new)
        self._set_pte(mm, address, ptep, new.address | self._vm_pte_bits(vma, True) |
                      _PAGE_DIRTY)

    # ------------------------------------------------------------ user accesses

    def touch(self, process, address, access="r"):
        """A user load ('r'), store ('w') or instruction fetch ('x') at ``address``: fault
        if the Linux PTE does not allow it, then make sure the hardware translates it."""
        self.switch_to(process)
        mm = process.mm
        write = access == "w"
        if self.arch.tlb_decides:
            self._touch_tlb_first(process, address, access)
            return
        for _ in range(3):
            pte = mm.pte(address)
            allowed = (pte & _PAGE_PRESENT and (not write or pte & _PAGE_RW) and
                       (access != "x" or not self.policy.needs_exec_permission or
                        pte & _PAGE_EXEC))
            if not allowed:
                self.page_fault(process, address, access)
                continue
            if self.arch.translates(mm, address, write):
                return
            self.ledger.count("tlb_misses")
            if not self.arch.tlb_miss(mm, address, write):
                self.page_fault(process, address, access)
        if not self.arch.translates(mm, address, write):
            raise KernelError(f"{address:#x} still untranslated after three faults")

    def _touch_tlb_first(self, process, address, access):
        """A software-loaded TLB: the access looks in the TLB; a miss runs the guest miss
        handler, which loads an entry from the Linux PTE or, finding none, enters the fault
        path; an entry that forbids the access (no WR for a store, no EX for a fetch) is a
        storage interrupt: the fault path. Then the access is retried, as the hardware
        retries the instruction. E.g. a first fetch under lazy_exec: miss (no PTE), fault,
        miss (entry loaded without EX), exec fault (flush, _tlbie), miss, hit."""
        mm = process.mm
        for _ in range(8):
            verdict = self.arch.probe(mm, address, access)
            if verdict == "hit":
                if not self._exec_refused_what_if(mm, address, access):
                    return
            elif verdict == "miss":
                self.ledger.count("tlb_misses")
                if self.arch.tlb_miss_for(mm, address, access):
                    continue
            elif self.arch.storage_interrupt(mm, address, access):
                continue
            self.page_fault(process, address, access)
        raise KernelError(f"{access!r} access at {address:#x} still not translated after "
                          "eight TLB misses and faults")

    def _exec_refused_what_if(self, mm, address, access):
        """A policy that needs an execute permission the hardware lacks (see policy_note):
        the model refuses a fetch from a PTE without _PAGE_EXEC, as ``touch`` does."""
        return (access == "x" and self.policy.needs_exec_permission and
                not self.arch.has_exec_permission and not mm.pte(address) & _PAGE_EXEC)

    def touch_pages(self, process, start, pages, access="r"):
        for k in range(pages):
            self.touch(process, start + k * PAGE_SIZE, access)
