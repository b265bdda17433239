"""The paced runs' estimates (the writers' stagger, the dirty fraction, the machine's memory,
a request's pages) and the disk's pace, with the result of Kernel.paced_writes.
"""
from __future__ import annotations

from ....hw import estimates
from .config import PREEMPT
from .tick import tick_cycles


#: the CPU whose pause starts a commit (Kernel.commit_pending): kjournald is one thread;
#: the model's is on CPU 0, where the disk's interrupts come (IRQ_CPU)
KJOURNALD_CPU = 0


#: paced writes: how far apart the writers' due times are, as a fraction of a period spread
#: evenly over them (CPU k's first write due at k / cpus x stagger periods). An estimate:
#: the mail does not say in what order its disk completed the four writers' requests
STAGGER = ("yoshioka2005:pace.stagger", 1.0, 0.0, 1.0,
           ("the order in which the disk woke the four writers is not in the mail: from all "
            "at once (0, the writers due together) to evenly in turn (1, the model's)"))


#: kjournald commits every JBD_DEFAULT_MAX_COMMIT_AGE seconds (include/linux/jbd.h: 5; ext3's
#: default commit interval): paced writes run its data loop a turn per page written, on the
#: buffer at the head of the data list, which the list keeps half an interval's writes old
#: (Kernel.commit_lag: the mean age of the buffers a commit finds, written evenly over the
#: interval before it)
COMMIT_INTERVAL_S = 5


#: which CPU takes the disk's interrupt: 2.6.12's i386 default configuration
#: (arch/i386/defconfig: CONFIG_IRQBALANCE=y) runs kirqd (arch/i386/kernel/io_apic.c,
#: balanced_irq: every IRQ pushed to CPU 0 at its start, then moved, one CPU at a time, at
#: most every 5 s by do_irq_balance; pending_irq_balance_cpumask is cpumask_of_cpu(new_cpu));
#: without it the I/O APIC's entry targets every online CPU in lowest-priority mode
#: (mach-default: TARGET_CPUS cpu_online_map, INT_DELIVERY_MODE dest_LowestPrio), the
#: chipset choosing. Either way one CPU takes the disk's interrupts, not each writer's own:
#: the model's is CPU 0 (kirqd's starting point); None gives each CPU its own requests'
IRQ_CPU = 0


#: paced writes: pdflush writes back one page per write (as many as are written), the page
#: dirty_background_ratio (mm/page-writeback.c: 10% in 2.6.12) of the writer's page cache
#: behind its newest; under iozone the dirty pages sit between that and vm_dirty_ratio
#: (40%), where balance_dirty_pages makes the writer write back itself
DIRTY_FRACTION = ("yoshioka2005:pace.dirty_fraction", 0.10, 0.10, 0.40,
                  ("how far behind the writer writeback runs: dirty_background_ratio (10%, "
                   "pdflush's background writeout) to vm_dirty_ratio (40%, the writers "
                   "throttled in balance_dirty_pages) of the page cache"))


#: the mail's machine's memory (MB), which balance_dirty_pages' thresholds are shares of
#: (total_pages); the model's own memory is its page-cache zone, a stand-in for a large one
MEMORY_MB = ("yoshioka2005:machine.memory_mb", 4096, 1024, 16384,
             ("the mail does not give its machine's memory: 1 GB to 16 GB (iozone's four "
              "8000 MB files were sized past it); 4 GB, the most a non-PAE i386 kernel "
              "addresses"))


#: are the mail's page-cache pages highmem (kmap_atomic writes a fixmap PTE and flushes its
#: TLB entry around each copy, arch/i386/mm/highmem.c 28-48 of 2.6.12.1)? The mail gives
#: neither its memory nor its config; 2.6.12's arch/i386/defconfig (114) is
#: CONFIG_NOHIGHMEM, which uses at most 896 MB of memory, but the machine's memory the model
#: takes (MEMORY_MB: 1 to 16 GB, 4 GB nominal) is reachable only with CONFIG_HIGHMEM4G or
#: 64G, under which a file's pages (GFP_HIGHUSER) come from ZONE_HIGHMEM first: of 4 GB,
#: 3.1 GB are highmem. So the evidence the model already takes favours highmem pages;
#: Kernel(highmem=False) gives the other case (lowmem pages: no PTE, no invlpg)
HIGHMEM = True


#: the pages a write request holds when the disk's driver takes it: writeback's bios of one
#: file join the request at the queue's tail while the disk is busy (the disk sets the
#: pace), until the request reaches the queue's limits: max_sectors and the segments the
#: driver takes (each page a segment of its own)
REQUEST_PAGES = ("yoshioka2005:disk.request_pages", 128, 31, 128,
                 ("the mail does not name its disk's adapter: from 31 pages (the block "
                  "layer's default max_sectors, 255 sectors) to 128 (SCSI_DEFAULT_MAX_SECTORS, "
                  "1024 sectors, and MAX_PHYS_SEGMENTS, 128, include/scsi/scsi_host.h and "
                  "include/linux/blkdev.h), an adapter whose sg_tablesize is 128 or more"))


#: the disk's rate: the mail's, a page per writer per write period (its four writers'
#: pages in its elapsed time): a request of n pages is written n / MAIL_WRITERS periods
#: after the driver takes it
MAIL_WRITERS = 4


def request_pages():
    """REQUEST_PAGES as the model takes it."""
    return round(estimates.value(REQUEST_PAGES[0], REQUEST_PAGES[1]))


def disk_warm_writes():
    """Paced writes per CPU that bring the disk's queue to its stride: a request filled,
    and written (n + n / MAIL_WRITERS)."""
    pages = request_pages()
    return pages + -(-pages // MAIL_WRITERS)


class PacedRuns(list):
    """Kernel.paced_writes' result: each CPU's write Runs; ``busy``: each CPU's cycles not
    halted over the run (its writes, writeback in the pauses, the idle loop, the ticks);
    ``ticks`` and ``tick_cycles``: each CPU's timer ticks in the run and their cycles (each
    tick's whole call)."""
    busy: list
    ticks: list
    tick_cycles: list


def estimate_ranges():
    """[(name, nominal, low, high, why)] of this workload's estimates (emu.book.ranges)."""
    return [STAGGER, DIRTY_FRACTION, MEMORY_MB, REQUEST_PAGES, PREEMPT]
