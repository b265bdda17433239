"""I-cache coherence policies: when the kernel runs flush_dcache_icache on a user page.

The PowerPC I-cache does not snoop, so a page mapped into a process must not leave stale
instructions in the I-cache (Mackerras 2003 section 2). Three policies:

* ``eager``: the 2.4-era ``flush_page_to_ram`` hook, called at each place the generic VM
  maps a page into a process: do_no_page (page-cache pages and early copy-on-write copies),
  do_anonymous_page for a write (the fresh zeroed page), the copy of a copy-on-write fault
  (break_cow), and the argument pages exec installs (put_dirty_page). Every call flushes.
  (The model's list of call sites follows Mackerras 2003 section 2.1 and the 2.4
  mm/memory.c; the exec argument page is the model's reading of 2.4 fs/exec.c.)
* ``lazy``: PG_arch_1 (section 2.2, David Miller's suggestion): ``flush_dcache_page`` (the
  kernel wrote the page: page-cache fill, clear_user_page, copy_user_page, argument pages)
  clears the bit; ``update_mmu_cache`` (a fault installed a PTE) flushes only if the bit is
  clear and not a reserved page (the zero page), then sets it. A page-cache page of a
  program is flushed once, not at every exec.
* ``lazy_exec``: the PPC405 variant (section 2.3): update_mmu_cache does not flush; if
  PG_arch_1 is clear it maps the page without execute permission; the first instruction
  fetch from it faults, and do_page_fault flushes, sets PG_arch_1 and the permission.
  Pages only read or written are never flushed. The 750's hashed MMU has no execute bit:
  on that backend the model enforces the permission in its simulated user accesses, a
  what-if the chapter must label as such. On the 405 backend (``emu.kernel.ppc405``) it is
  the hardware's: the guest TLB miss handler copies _PAGE_EXEC into the entry's EX bit and
  a fetch from an entry without EX is the instruction storage interrupt.
  (Linux 2.6.12's 4xx code, read for comparison, differs from the paper's description:
  _PAGE_EXEC is 0 on 40x, so every new PTE lacks _PAGE_HWEXEC and every first fetch per
  PTE takes the exec fault, while update_mmu_cache (arch/ppc/mm/init.c) still flushes a
  page whose PG_arch_1 is clear. The model follows the paper, section 2.3.)
* ``sync_exec``: ARM Linux on a Cortex-A9 (a PIPT D-cache and a non-aliasing VIPT
  I-cache; __sync_icache_dcache, arch/arm/mm/flush.c, 2.6.37+, which Yun 2011 section 4.3
  names as what keeps copied text pages coherent): PG_arch_1 is PG_dcache_clean;
  flush_dcache_page clears it; a page mapped into an executable VMA whose bit is clear is
  synced (the backend's flush_dcache_icache) and the bit set; pages of other VMAs are never
  flushed. The kernel does it in set_pte_at for every present user exec PTE (invalidating
  the I-cache even for a clean page); the model does it where the generic VM maps a page
  after a fault (update_mmu_cache) and only for pages whose bit is clear.
* ``pagecache``: the ppc64 kernel of early 2.5, the one Blanchard 2002's builds ran
  (arch/ppc64/mm/init.c of that time, read in the BitKeeper history's token-level copy,
  github dmgerman/history-token, commit 88b42425): ``flush_icache_page`` (do_no_page)
  flushes a page-cache page (page->mapping set) that is not reserved and whose PG_arch_1 is
  clear, then sets the bit; ``copy_user_page`` flushes every copy it makes
  (``__flush_dcache_icache(vto)``, the bit neither read nor set); ``clear_user_page`` only
  clears, so a fresh anonymous page is never flushed; ``flush_page_to_ram`` and
  ``update_mmu_cache`` do nothing for the I-cache. (A copy-on-write of the zero page is a
  clear in the kernel; the model's ``cow`` call site does not tell it from a copy, so it
  flushes it too: rare in a compile, counted as ``flushed:cow``.) Later ppc64 kernels
  flushed in update_mmu_cache (``lazy``) and, with CPU_FTR_NOEXECUTE, in hash_page
  (``lazy_exec``).
"""
from __future__ import annotations

from .pgtable import _PAGE_EXEC, VM_EXEC


class Policy:
    name = "abstract"
    needs_exec_permission = False

    def kernel_wrote(self, kernel, page):
        """flush_dcache_page: the kernel modified the page."""

    def mapping_page(self, kernel, page, why):
        """A flush_page_to_ram call site (a page is being mapped into a process)."""

    def update_mmu_cache(self, kernel, vma, page, pte):
        """A fault installed ``pte``; returns the PTE to keep."""
        return pte

    def exec_fault(self, kernel, vma, page):
        """An instruction fetch hit a PTE without execute permission."""

    def maps_without_work(self, vma, page):
        """Whether a fault mapping the page-cache ``page`` into ``vma`` (no copy) leaves
        this policy nothing to do: mapping_page and update_mmu_cache neither flush nor
        change the PTE (a backend may then run the fault in one guest call). Unknown
        policies say no."""
        return False


class Eager(Policy):
    name = "eager"

    def mapping_page(self, kernel, page, why):
        kernel.flush_icache_page(page, why)


class Lazy(Policy):
    name = "lazy"

    def kernel_wrote(self, kernel, page):
        page.arch_1 = False

    def update_mmu_cache(self, kernel, vma, page, pte):
        if not page.reserved and not page.arch_1:
            kernel.flush_icache_page(page, "update_mmu_cache")
            page.arch_1 = True
        return pte

    def maps_without_work(self, vma, page):
        return page.reserved or page.arch_1


class LazyExec(Lazy):
    name = "lazy_exec"
    needs_exec_permission = True

    def update_mmu_cache(self, kernel, vma, page, pte):
        if page.reserved or page.arch_1:
            return pte | _PAGE_EXEC if vma.flags & VM_EXEC else pte
        return pte & ~_PAGE_EXEC

    def exec_fault(self, kernel, vma, page):
        if not page.arch_1:
            kernel.flush_icache_page(page, "exec_fault")
            page.arch_1 = True

    def maps_without_work(self, vma, page):
        return False                                # update_mmu_cache changes the PTE


class SyncExec(Lazy):
    name = "sync_exec"

    def update_mmu_cache(self, kernel, vma, page, pte):
        if vma.flags & VM_EXEC:
            return super().update_mmu_cache(kernel, vma, page, pte)
        return pte

    def maps_without_work(self, vma, page):
        return not vma.flags & VM_EXEC or super().maps_without_work(vma, page)


class PageCache(Lazy):
    name = "pagecache"

    def update_mmu_cache(self, kernel, vma, page, pte):
        return pte

    def mapping_page(self, kernel, page, why):
        if why == "cow":                            # copy_user_page: every copy
            kernel.flush_icache_page(page, why)
        elif why == "file" and page.kind == "pagecache" and not page.reserved \
                and not page.arch_1:                # flush_icache_page: once per write
            kernel.flush_icache_page(page, why)
            page.arch_1 = True


POLICIES = {p.name: p for p in (Eager, Lazy, LazyExec, SyncExec, PageCache)}


def get(name):
    if isinstance(name, Policy):
        return name
    if name not in POLICIES:
        raise ValueError(f"unknown I-cache flush policy {name!r} (known: "
                         f"{', '.join(POLICIES)})")
    return POLICIES[name]()
