"""Fixed cycle costs of the generic (C) parts of the Linux VM, which the model does not run.

Everything architecture-specific (clearing, copying and flushing pages, filling and flushing
the hash table) is guest assembly whose cycles are measured. The generic C paths around it
(the fault handler's bookkeeping, the page allocator, fork's copy of the task, ...) are not
emulated: each is charged a fixed number of cycles from this one table, so that a reader can
see and change every assumption in one place.

Sources. One entry is a measurement: ``syscall`` is LMBench's "null call" on the 400 MHz
PowerBook G3 of Mackerras 2003 (Table 2: 0.35 us = 140 cycles), i.e. the whole round trip of
the cheapest system call. Every other entry is an **estimate**: a rough count of the
instructions on the named kernel path (Linux 2.5/2.6 era, mm/memory.c, mm/mmap.c,
kernel/fork.c, kernel/exit.c, fs/exec.c, arch/ppc/mm/fault.c), times ``CPI``, itself an
assumed average for kernel C code on an in-order two-issue core that misses little (the
model charges no cache misses to these paths). None of these numbers was adjusted to match a
published result; they were written down before any workload was run, and they should be
replaced by measurements (e.g. by running the C paths compiled for PowerPC) when available.
"""
from __future__ import annotations

from ..hw import estimates

CPI = 1.5    # assumed cycles per instruction of generic kernel C code (estimate)
#: CPI's plausible range (emu.hw.estimates moves it as ``kernel:costs.CPI``) and why
CPI_RANGE = (1.0, 2.5, "the two-issue 750 and four-issue 604 sustain about one instruction "
             "a cycle on well-scheduled code with every access a hit, the floor here since "
             "the model charges no misses to these paths; 2.5 allows branchy C with its "
             "taken-branch bubbles, dependent loads (2 cycles' load-use) and the serialising "
             "SPR moves of kernel paths, about what the 750's and 604's manuals' latencies "
             "give for pointer-chasing code")
#: Every instruction count below is a count by reading the path's C, not a measurement:
#: its plausible range is half to twice the count (emu.hw.estimates: ``kernel:costs.NAME``)
COUNT_RANGE = (0.5, 2.0, "an instruction count by reading the C path, not a measurement or "
               "a compiled listing: half to twice the count (an inlined helper or a checked "
               "error path more or less, a loop's trip count misjudged)")

# name: (instructions (estimate) or None, cycles if measured, what it covers)
TABLE = {
    "syscall": (None, 140, "system call entry + dispatch + return: LMBench null call, "
                "0.35 us at 400 MHz (Mackerras 2003 Table 2, measured)"),
    "fault_entry": (120, None, "DSI/ISI exception entry and return, do_page_fault (find_vma, "
                    "access check), handle_mm_fault walking to the PTE (arch/ppc/mm/fault.c, "
                    "mm/memory.c)"),
    "hash_fault_entry": (30, None, "exception prologue and fast return around hash_page when "
                         "the Linux PTE allows the access (arch/ppc/kernel/head.S)"),
    "alloc_page": (80, None, "__alloc_pages fast path from the per-CPU free list"),
    "free_page": (50, None, "__free_pages to the per-CPU free list"),
    "page_cache_lookup": (40, None, "find_get_page: radix-tree lookup + get_page"),
    "page_cache_read": (300, None, "add_to_page_cache + readpage submission on a page-cache "
                        "miss (the I/O itself is not modelled: LMBench's files stay cached)"),
    "anon_fault": (80, None, "do_anonymous_page bookkeeping: rmap, LRU add, mk_pte, set_pte"),
    "file_fault": (100, None, "do_no_page + filemap_nopage bookkeeping: rmap, mk_pte, set_pte"),
    "wp_fault": (80, None, "do_wp_page bookkeeping: reuse test, rmap, ptep_establish"),
    "pte_alloc": (30, None, "pte_alloc_map / pmd_populate bookkeeping (page and clear_page "
                  "charged separately)"),
    "pgd_alloc": (30, None, "pgd_alloc bookkeeping (page and clear_page charged separately)"),
    "pmd_alloc": (30, None, "pmd_alloc bookkeeping on a three-level tree (ppc64; page and "
                  "clear_page charged separately)"),
    "copy_pte": (25, None, "copy_page_range per present PTE: copy_one_pte, get_page, "
                 "page_dup_rmap, wrprotect"),
    "zap_pte": (30, None, "zap_pte_range per present PTE: ptep_get_and_clear, "
                "page_remove_rmap, tlb_remove_page"),
    "free_pte_page": (20, None, "free_pgtables per PTE page (page freeing charged separately)"),
    "free_pmd_page": (20, None, "free_pgtables per pmd page on a three-level tree (ppc64; page "
                      "freeing charged separately)"),
    "vma_setup": (250, None, "one mmap/munmap VMA operation: get_unmapped_area, VMA "
                  "allocation, rb-tree link or unlink (mm/mmap.c)"),
    "dup_vma": (80, None, "dup_mmap per VMA: kmem_cache_alloc, copy, link"),
    "flush_range_pmd": (20, None, "flush_range (arch/ppc/mm/tlb.c) per PTE page: the C loop "
                        "around one flush_hash_pages call"),
    "batch_entry": (10, None, "recording one (mm, address) in the batched-flush list"),
    "fork": (2500, None, "do_fork / copy_process outside the page tables: dup_task_struct, "
             "copy_files, copy_fs, copy_sighand, copy_signal, sched_fork, wake_up_new_task"),
    "exit": (1500, None, "do_exit outside exit_mmap: exit_files, exit_fs, exit_sighand, "
             "exit_notify"),
    "wait": (800, None, "sys_wait4 + release_task in the parent"),
    # the same three on a kernel whose scheduler is guest code (emu.kernel.sched22: 2.2.0's
    # wake_up_process, wake_up_interruptible, the wait queue and schedule() run there,
    # routines/ppc32/proc_22.S): each less what became guest code (no double count)
    "fork_task": (2500 - 50, None, "fork less its wake-up of the child (wake_up_new_task, "
                  "2.2.0's wake_up_process: 50, as wake_up), which runs as guest code"),
    "exit_task": (1500 - 50, None, "exit less exit_notify's wake-up of the parent "
                  "(notify_parent's wake_up_interruptible: 50, as wake_up), guest code"),
    "wait_reap": (800 - 40, None, "wait less the wait queue (add_wait_queue, "
                  "remove_wait_queue) and the sleep's state store (40), guest code: the walks "
                  "of the children, the zombie's reaping (release)"),
    "exec": (4000, None, "do_execve outside the address space: open_exec (path lookup), "
             "prepare_binprm, search_binary_handler, load_elf_binary header parsing, "
             "setup_arg_pages, start_thread"),
    "copy_strings": (200, None, "copy_strings per argument page (the copy of a few strings)"),
    "context_switch": (150, None, "schedule + switch_to + switch_mm (16 segment registers); "
                       "not charged on a kernel whose scheduler is guest code "
                       "(emu.kernel.sched22: schedule22 and _switch22 run there)"),
    "schedule": (120, None, "2.2.0 schedule() on one CPU outside _switch (Blanchard 2002's "
                 "compile; emu.kernel.entry runs it as guest code, routines/ppc32/sched_22.S): "
                 "the bottom-half and task-queue checks, prev off the run queue, goodness "
                 "over the runnable tasks, get_mmu_context's test, the statistics"),
    "wake_up": (50, None, "2.2.0 wake_up_interruptible with one waiter: __wake_up's walk of "
                "the wait queue, wake_up_process (run-queue lock, state, add_to_runqueue, "
                "reschedule_idle's test)"),
    "mm_alloc": (150, None, "mm_alloc / mm_init / init_new_context / mmput"),
    # the file-system paths of a compile step (Mackerras 2003's build: emu.kernel.fileio's
    # step_fs_calls), read in Linux 2.5.66 (dmgerman/history-token 3007e2ef10)
    "path_component": (150, None, "link_path_walk per path component (fs/namei.c): "
                       "exec_permission_lite, the name's hash (partial_name_hash per "
                       "character), do_lookup's d_lookup on a dcache hit (fs/dcache.c: the "
                       "hash chain, the parent and name compares), follow_mount"),
    "open_file": (500, None, "sys_open outside the walk (fs/open.c): getname's copy of the "
                  "path, get_unused_fd, open_namei's last-component lookup and permission, "
                  "dentry_open (get_empty_filp, the file system's open), fd_install, putname"),
    "close_file": (200, None, "sys_close: filp_close, fput, __fput's dput, mntput and "
                   "file_free (fs/open.c, fs/file_table.c)"),
    "truncate_page": (120, None, "truncate_inode_pages per page-cache page of a file "
                      "deleted (mm/truncate.c; fs/inode.c's generic_delete_inode at the last "
                      "iput of an unlinked inode): its share of pagevec_lookup, "
                      "TestSetPageLocked, truncate_complete_page (block_invalidatepage's "
                      "discard of the page's buffers, clear_page_dirty, ClearPageUptodate, "
                      "ClearPageMappedToDisk, remove_from_page_cache: the radix-tree delete "
                      "under mapping->page_lock), unlock_page, pagevec_release's LRU removal "
                      "(the freeing charged separately)"),
    "stat_file": (150, None, "sys_fstat64 or sys_stat64 outside the walk (fs/stat.c): "
                  "vfs_getattr's generic_fillattr, cp_new_stat64's memset, field copies and "
                  "copy_to_user of the struct"),
}


def cycles(name, table=None):
    """Cycles charged for one pass through the generic path ``name``. The book's table's
    estimates (its instruction counts and ``CPI``) take their moved values inside
    ``emu.hw.estimates.moved`` and are recorded as read; a table of one's own is taken as
    it is."""
    own = table is not None and table is not TABLE
    instructions, measured, _ = (table if own else TABLE)[name]
    if measured is not None:
        return measured
    if own:
        return round(instructions * CPI)
    return round(estimates.value(f"kernel:costs.{name}", instructions) *
                 estimates.value("kernel:costs.CPI", CPI))


def ranges():
    """The table's estimates with their plausible ranges: [(name, nominal, low, high,
    why)], named as emu.hw.estimates moves them."""
    low, high, why = COUNT_RANGE
    out = [("kernel:costs.CPI", CPI, *CPI_RANGE)]
    for name, (instructions, measured, _) in TABLE.items():
        if measured is None:
            out.append((f"kernel:costs.{name}", instructions, round(instructions * low),
                        round(instructions * high), why))
    return out


def as_frame(table=None):
    """The table as a pandas DataFrame: instructions, cycles, measured?, what it covers."""
    import pandas as pd
    rows = []
    for name, (insns, measured, what) in (table or TABLE).items():
        rows.append({"path": name, "instructions (est.)": insns,
                     "cycles": cycles(name, table), "measured": measured is not None,
                     "covers": what})
    return pd.DataFrame(rows).set_index("path")
