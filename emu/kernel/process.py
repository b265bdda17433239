"""Processes: fork, vfork, exec, exit and wait (kernel/fork.c, fs/exec.c, kernel/exit.c), a
mixin of the Kernel (emu.kernel.vm)."""
from __future__ import annotations

from .errors import KernelError
from .mm import MM, VMA, Process
from .pgtable import (PAGE_SHIFT, PAGE_SIZE, STACK_TOP, TASK_SIZE, _PAGE_ACCESSED, _PAGE_BASE,
                      _PAGE_DIRTY, _PAGE_EXEC, _PAGE_HASHPTE, _PAGE_RW, _PAGE_USER)


class Processes:
    """The Kernel's process life cycle."""

    # ------------------------------------------------------------ processes

    def _new_process(self, name, mm, parent=None):
        process = Process(self.next_pid, name, mm, parent)
        self.next_pid += 1
        if parent is not None:
            parent.children.append(process)
        self.processes.append(process)
        return process

    def spawn(self, image, args_pages=1):
        """A process running ``image`` from scratch (as init would exec it): setup only."""
        mm = MM(self)
        process = self._new_process(image.name, mm)
        self._map_image(process, image, args_pages)
        return process

    def fork(self, parent):
        """do_fork: copy the task (fixed cost) and the address space (dup_mmap)."""
        self.switch_to(parent)
        self.ledger.fixed("syscall")
        self.ledger.fixed("fork" if self.scheduler is None else "fork_task")
        self.ledger.fixed("mm_alloc")
        self.ledger.count("forks")
        old = parent.mm
        mm = MM(self)
        child = self._new_process(parent.name, mm, parent)
        for vma in old.vmas:
            self.ledger.fixed("dup_vma")
            mm.insert_vma(VMA(vma.start, vma.end, vma.flags, vma.file, vma.pgoff, vma.name,
                              anon_vma=vma.anon_vma))                    # anon_vma_fork
            if self.arch.copy_needs_anon_vma and not vma.anon_vma:
                # 2.6.36 mm/memory.c 838-847: no PTE copied where a fault fills it in (the
                # model's areas have none of VM_HUGETLB, VM_NONLINEAR, VM_PFNMAP,
                # VM_INSERTPAGE); the child faults these pages in as it touches them
                self.ledger.count("copy_skipped_vmas")
                continue
            with self.locked(mm.page_table_lock, old.page_table_lock):   # copy_page_range
                self._copy_page_range(mm, old, vma)
        self.flush_tlb_mm(old)
        if self.scheduler is not None:              # do_fork's wake_up_process, last
            self.scheduler.forked(parent, child)
        return child

    def vfork(self, parent):
        """do_fork with CLONE_VFORK | CLONE_VM, as GNU make and gcc's driver start their
        children (job.c, libiberty pexecute.c): the task is copied (fixed cost), the
        address space is shared (no page-table copy, no write-protect, no flush); the
        parent waits until the child execs or exits."""
        if self.scheduler is not None:      # its sleep on the vfork semaphore is not written
            raise KernelError("vfork is not modelled under a guest scheduler "
                              "(emu.kernel.sched22): fork's path only")
        self.switch_to(parent)
        self.ledger.fixed("syscall")
        self.ledger.fixed("fork")
        self.ledger.count("vforks")
        parent.mm.users += 1
        return self._new_process(parent.name, parent.mm, parent)

    def _mmput(self, mm):
        """mmput: the address space goes with its last user (a vfork child shares it)."""
        mm.users -= 1
        if mm.users == 0:
            self._exit_mmap(mm)

    def _copy_page_range(self, dst, src, vma):
        """copy_page_range down to copy_pte_range, which runs once per PTE page: the backend
        copies each PTE page's part of ``vma`` that has a PTE page (Arch.copy_ptes)."""
        span = self.arch.pte_page_shift
        lo = vma.start
        while lo < vma.end:
            hi = min(vma.end, ((lo >> span) + 1) << span)
            if src.ptep(lo) is not None:
                self.arch.copy_ptes(self, dst, src, vma, lo, hi)
            lo = hi

    def _copy_one_pte(self, dst, src, vma, address, src_ptep, pte):
        """copy_one_pte of a present PTE as the generic VM does it: the fixed copy_pte, the
        parent's PTE write-protected where it was writable, the child's made old (and clean
        for a shared area), the page's references and mappings."""
        self.ledger.fixed("copy_pte")
        dst_ptep = self._pte_alloc(dst, address)
        if not vma.shared and pte & _PAGE_RW:   # ptep_set_wrprotect in the parent
            pte &= ~_PAGE_RW
            self._write_pte(src_ptep, pte)
            if pte & _PAGE_HASHPTE:
                self._pte_changed(src, address)
        child = pte & ~(_PAGE_HASHPTE | _PAGE_ACCESSED)     # pte_mkold; no HPTE
        if vma.shared:
            child &= ~_PAGE_DIRTY
        self._write_pte(dst_ptep, child)
        page = self._page_of(pte)
        if not page.reserved:
            page.count += 1
            page.mapcount += 1

    def _exit_mmap(self, mm):
        """exit_mmap: zap every VMA, flush, free the pages, the page tables, the pgd."""
        released = []
        with self.locked(mm.page_table_lock):        # unmap_vmas, tlb_finish_mmu
            for vma in mm.vmas:
                self._zap_range(mm, vma, vma.start, vma.end, released, fullmm=True)
            self._unmap_flush(mm)
        for page in released:
            self._put_page(page)
        self._free_page_tables(mm.pgd.address, 0, 0)
        self.arch.pgd_free(self, mm.pgd)
        self.arch.destroy_context(mm)
        mm.vmas = []
        mm.users = 0

    def _free_page_tables(self, table, depth, base):
        """free_pgtables below one directory page (user space only): the PTE pages, and on
        a three-level tree the pmd pages, depth first."""
        levels = self.arch.table_levels
        shift, bits = levels[depth]
        # the directory's entries in one read (nothing below writes a directory page)
        count = min(1 << bits, -(-(TASK_SIZE - base) >> shift))
        entries = self.machine.read_words(table, count, self.arch.dir_bytes)
        for index, entry in enumerate(entries):
            if not entry or (depth == 0 and index in self.arch.kernel_tables):
                continue
            below = self.arch.dir_table(depth, entry)
            if depth + 1 < len(levels):
                self._free_page_tables(below, depth + 1, base + (index << shift))
                self.ledger.fixed("free_pmd_page")
            else:
                self.ledger.fixed("free_pte_page")
            self._put_page(self.allocator.page(below >> PAGE_SHIFT))

    def exit(self, process):
        """do_exit: the task's resources (fixed) and its address space (exit_mmap)."""
        if process.exited:
            raise KernelError(f"{process} has already exited")
        self.switch_to(process)
        self.ledger.fixed("syscall")
        self.ledger.fixed("exit" if self.scheduler is None else "exit_task")
        self._mmput(process.mm)
        process.exited = True
        self.ledger.count("exits")
        if self.scheduler is not None:      # exit_notify's wake-up, then schedule()
            self.scheduler.exited(process)

    def wait(self, parent, child):
        """wait4 in the parent: reap the child (it must have exited)."""
        if child not in parent.children:
            raise KernelError(f"{child} is not a child of {parent}")
        if not child.exited:
            raise KernelError(f"{child} has not exited")
        self.switch_to(parent)
        self.ledger.fixed("syscall")
        self.ledger.fixed("wait" if self.scheduler is None else "wait_reap")
        parent.children.remove(child)
        self.processes.remove(child)
        if self.scheduler is not None:      # release: its task union freed
            self.scheduler.reaped(child)

    def exec(self, process, image, args_pages=1):
        """do_execve: a new address space for ``image``; the old one goes (exit_mmap)."""
        self.switch_to(process)
        self.ledger.fixed("syscall")
        self.ledger.fixed("exec")
        self.ledger.fixed("mm_alloc")
        self.ledger.count("execs")
        old = process.mm
        process.mm = MM(self)
        process.name = image.name
        self.arch.switch_mm(process.mm)             # activate_mm (no schedule: same task)
        self._mmput(old)
        self._map_image(process, image, args_pages)

    def _map_image(self, process, image, args_pages):
        """The ELF loader's mappings (text, data, bss, stack with the argument pages), the
        shared libraries' (as ld.so would map them), then the program's first run:
        the pages ``image`` says it touches."""
        for part in image.mappings():
            self.mmap(process, part["length"], part["prot"], file=part.get("file"),
                      offset=part.get("offset", 0), address=part["address"],
                      name=part["name"], growsdown=part.get("growsdown", False))
        mm = process.mm
        for k in range(args_pages):                 # copy_strings + put_dirty_page
            self.ledger.fixed("copy_strings")
            address = STACK_TOP - (k + 1) * PAGE_SIZE
            page = self._alloc_page("anon")
            self.machine.write(page.address, bytes(PAGE_SIZE))
            self._kernel_wrote(page)
            page.mapcount = 1
            # 2.6.36: get_arg_page's get_user_pages faults it in (do_anonymous_page's
            # anon_vma_prepare: fs/exec.c 173, mm/memory.c 2857)
            mm.find_vma(address).anon_vma = True
            self.policy.mapping_page(self, page, "exec_args")
            ptep = self._pte_alloc(mm, address)
            self._set_pte(mm, address, ptep, page.address | _PAGE_BASE | _PAGE_USER |
                          _PAGE_RW | _PAGE_DIRTY | _PAGE_EXEC)
        for address, pages, access in image.touches():
            self.touch_pages(process, address, pages, access)
            if self.user_work is not None:
                self.user_work(image, pages)
