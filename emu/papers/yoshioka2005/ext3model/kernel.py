"""The Kernel: the guest kernel's memory, its program loaded, and the parts (memory, file system,
journal, commit, writeback, runs, tick, prefill, check) it is made of.
"""
from __future__ import annotations

from ....isa.assemble import assemble
from ....run.machine import Machine
from ....run.parallel import CORE_STACK
from .. import usercopy
from .check import KernelCheck
from . import config
from .checkpoint import KernelCheckpoint
from .commit import KernelCommit
from .filesystem import KernelFileSystem
from .journal import KernelJournal
from .kupdate import KernelKupdate
from .memory import KernelMemory
from .pacing import HIGHMEM, IRQ_CPU, MAIL_WRITERS, request_pages
from .prefill import KernelPrefill
from .program import source
from .runs import KernelRuns
from .sleep import KernelSleep
from .structures import (DATA_PER_GROUP, FRAME_BYTES, GROUP_NO, INODE_TABLE_BLOCKS, META_SLOTS,
                         KERNEL_STACK, PAGE, PAGE_CACHE_BYTES, PAGE_STRUCT, PCPU_SIZE, TI, XTIME,
                         _words)
from .tick import KernelTick
from .writeback import KernelWriteback


class Kernel(KernelMemory, KernelFileSystem, KernelJournal, KernelCommit, KernelWriteback,
             KernelRuns, KernelTick, KernelPrefill, KernelCheck, KernelKupdate, KernelCheckpoint,
             KernelSleep):
    """Linux 2.6.12's write path on an emulated Xeon MP: ``cpus`` iozone children, each
    writing its own ext3 file through one journal and one zone.

    ``kernel``: "2.6.12" or "patched" (Yoshioka's __copy_from_user_ll). ``page_cache_bytes``
    and ``frame_bytes``: the zone's pages, and the distinct frames behind them, per CPU.
    ``max_records``: the most records a CPU's file will take over the Kernel's life (sizes
    its indirect blocks and its block groups). ``fpu_owner``: the iozone task's FPU state
    is live in the registers, so the patched copy's kernel_fpu_begin saves it.
    ``used_blocks``: blocks each file has already taken in its first group (to reach the
    next group sooner). ``highmem``: the page cache's pages are highmem, so kmap_atomic
    writes a fixmap PTE and flushes its TLB entry around each copy (routines/x86/
    highmem_2612.S; HIGHMEM, the default); False: lowmem pages, no PTE. ``preempt``:
    CONFIG_PREEMPT, 0 or 1 (None: the estimate config.PREEMPT, 0 nominal).
    ``writer_chunks``: paced writes write back as 2.6.12.1's throttled writers do, a chunk
    now and then in the writer's own write() (KernelWriteback.chunk_period); False: the
    per-page stand-in, pdflush writing one page back in each pause."""

    def __init__(self, kernel="2.6.12", cpus=1, page_cache_bytes=PAGE_CACHE_BYTES,
                 frame_bytes=FRAME_BYTES, max_records=40_000, profile="pentium4",
                 fpu_owner=False, used_blocks=0, cores=None, irq_cpu=IRQ_CPU, ticks=True,
                 highmem=HIGHMEM, preempt=None, writer_chunks=False):
        if not 1 <= cpus <= 8:
            raise ValueError(f"cpus must be from 1 to 8 (NR_CPUS), not {cpus}")
        cores = cpus if cores is None else cores
        if not cpus <= cores <= 8:
            raise ValueError(f"cores must be from cpus ({cpus}) to 8, not {cores}")
        frames = frame_bytes // PAGE
        if frame_bytes % PAGE or frames < 64 or frames & (frames - 1):
            raise ValueError("frame_bytes must be a power-of-two number of pages, at least 64")
        if page_cache_bytes % frame_bytes:
            raise ValueError("page_cache_bytes must be a multiple of frame_bytes")
        if not 0 <= used_blocks < DATA_PER_GROUP:
            raise ValueError(f"used_blocks must be from 0 to {DATA_PER_GROUP - 1}")
        if irq_cpu is not None and not 0 <= irq_cpu < cpus:
            raise ValueError(f"irq_cpu must be a CPU from 0 to {cpus - 1}, or None")
        self.irq_cpu = irq_cpu
        self.preempt = config.preempt() if preempt is None else preempt
        self.highmem = highmem              # the page cache's pages highmem: kmap_atomic's PTE
        self.writer_chunks = writer_chunks  # paced writes: the writers' chunks, not pdflush's page
        self.ticking = ticks                # paced writes: the timer tick (deliver_ticks)
        self.metadata_mapped = False        # kupdate_pass: in the block device's cache
        self.kernel, self.cpus, self.max_records = kernel, cpus, max_records
        self.used_blocks = used_blocks
        self.pool_pages = page_cache_bytes // PAGE * cpus
        self.frame_count = frames * cpus
        self.groups_per_file = -(-(max_records + used_blocks) // DATA_PER_GROUP)
        if GROUP_NO + 1 + cpus * self.groups_per_file > 128:
            raise ValueError("the files need more block groups than one descriptor block "
                             "describes: fewer max_records or CPUs")
        self.request_pages = request_pages()
        ram = (24 << 20) + self.frame_count * PAGE + self.pool_pages * 320 + \
            cpus * self._io_ring_bytes() + self._slab_list_bytes()
        ram = -(-ram // (1 << 20)) * (1 << 20)
        self.machine = m = Machine(profile, cores=cores, ram_size=ram)
        self.program = m.load(assemble(source(kernel, self.preempt), "x86", m.code_start,
                                       f"the {kernel} kernel's write path"))
        self.sym = m.symbols
        self.disk_delay = -(-self.request_pages // MAIL_WRITERS)   # writes, after dispatch
        self._inflight = [[] for _ in range(cpus)]    # per CPU: (due write, request)
        self.disk_requests = [0] * cpus                # requests each CPU's disk ended,
        self.disk_cycles = [0] * cpus                  # and the driver's and interrupts' cycles
        self._next_meta_bit = INODE_TABLE_BLOCKS + 2
        self._meta = []                         # (block, bh) of the cached metadata
        self._build(fpu_owner)

    @property
    def core_ti(self):
        """Where each core's own stack has its thread_info: the calls the model makes on a
        core's stack and not a task's (kjournald's turns, the disk's dispatch) are the
        kernel on that CPU, whose smp_processor_id() (thread_info.cpu, at the bottom of the
        8 KB-aligned stack the call's esp is in) picks its per-CPU data: its slab arrays,
        its kmap slots. (Left at 0, every core's calls took CPU 0's, beside CPU 0's own.)"""
        return [(self.machine.stack_top - k * CORE_STACK - 4) & -KERNEL_STACK
                for k in range(len(self.machine.cpus))]

    def _alloc(self, size, align=64):
        return self.machine.alloc(size, align=align)

    def _poke(self, address, data):
        self.machine.write(address, data)

    def _word(self, address, value):
        self._poke(address, _words(value))

    def _read(self, address, size=4):
        return self.machine.read_word(address, size)

    def _build(self, fpu_owner):
        m, cpus = self.machine, self.cpus
        self.pcpu = [self._alloc(PCPU_SIZE) for _ in range(cpus)]
        self._poke(self.sym["__per_cpu_offset"], _words(*self.pcpu))
        self._build_caches()
        self.zone = self._build_zone(self.pool_pages, self.frame_count)
        self.zone_normal = self._build_zone(0, 0)
        self._word(self.sym["page_zone_highmem"], self.zone)
        self._word(self.sym["page_zone_normal"], self.zone_normal)
        self._poke(self.sym["xtime"], _words(XTIME, 0))
        self._build_writeback_state()
        self.meta_page_structs = self._alloc(META_SLOTS * PAGE_STRUCT)
        self._build_journal()
        self._build_block_device()
        self._build_groups()
        self.files = [self._build_file(k) for k in range(cpus)]
        self._finish_block_device()
        self.ctx = [self._build_task(k, self.files[k]) for k in range(cpus)]
        self.pdflush = [self._build_kthread(k) for k in range(cpus)]    # writeback's task
        self.idle_ti = [self._alloc(64) for _ in range(cpus)]     # each CPU's idle task's
        for k, ti in enumerate(self.idle_ti):
            self._poke(ti, _words(0, 0, 0, 0, k, 0))
        for k, ti in enumerate(self.core_ti):   # no task: current faults, as it should
            self._word(ti + TI["CPU"], k)
        self._build_commit_state()              # last, not to move what comes before
        self.commit_pending = False             # paced_writes: lock the running transaction
        self.lockdown = {}                      # down in kjournald's next pause
        self.halted_cycles = [0] * cpus       # paced_writes: cycles each CPU was halted,
        self.halts = [0] * cpus                # how many times it halted, and the pages
        self.written_back = [0] * cpus         # writeback wrote in its pauses, and the
        self.writeback_cycles = [0] * cpus     # cycles it took
        self.commit_lag = 0                    # paced_writes: kjournald's data loop keeps
        self.commit_turns = [0] * cpus         # the list this many writes per CPU long (0:
        self.commit_cycles = [0] * cpus        # no commit); its turns and cycles per CPU
        self.meta_every = 0                    # paced_writes: a metadata buffer logged every
        self.meta_shared = 0                   # of meta_per_commit: every commit's
        self.meta_per_commit = 0               # this many writes per CPU (0: none), of a
        self.meta_logged = 0                   # commit of this many; logged so far, and
        self.meta_cycles = [0] * cpus          # the cycles per CPU
        self.meta_turns = [0] * cpus
        self._wb_next = {}                     # CPU -> the next index writeback looks at
        self.chunks = [0] * cpus               # paced writes with writer_chunks: each CPU's
        self.chunk_pages = [0] * cpus          # chunks, the pages they wrote back, their
        self.chunk_cycles = [0] * cpus         # cycles, and the most write requests the
        self.most_queued = 0                   # queue's list counted (after one, or as a
        self.sleeps = [0] * cpus               # writer slept); each CPU's writer's sleeps
        self.sleep_cycles = [0] * cpus         # in get_request_wait, and their cycles
        self._halting = [None] * cpus          # (sleep.py) a CPU's halt: (start, end),
        self._sleeping = [False] * cpus        # its writer asleep, its writes not all done
        self._writing = [False] * cpus
        self.ipi_wakes = [0] * cpus            # its halts another CPU's wake-up ended
        self.kjournald_sleeps = [0] * cpus     # kjournald's sleeps on a full queue there
        self._kjournald_busy = None            # the CPU whose pause kjournald's call is in
        self._build_tick()                     # after all the rest: it moves nothing
        self._build_highmem()                  # after the tick: it moves nothing
        self._build_journal_superblock()       # after the highmem: it moves nothing
        if fpu_owner and self.kernel == "patched":
            usercopy.set_fpu_owner(m, True)
