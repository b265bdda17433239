"""Yoshioka 2005 on the model: iozone's write test through Linux 2.6.12's ext3 write path on
the emulated Xeon MP (emu.papers.yoshioka2005.ext3model), profiled as the paper profiled it with oprofile; the
copy alone by size, threshold and use of the data (copy_sweep); the paper's elapsed times
set against its own CPU profile (cpu_time).

    >>> from emu import yoshioka
    >>> before = yoshioka.write_profile("2.6.12")          # doctest: +SKIP
    >>> before.listing("l3_misses").head()                  # doctest: +SKIP

The paper's three counters and the model's events that stand for them (``COUNTERS``):

* GLOBAL_POWER_EVENTS, mask 0x01 (cycles the CPU is not stopped): the model's cycles.
* BSQ_CACHE_REFERENCE, mask 0x3f ("memory references"): reads that hit the 2nd or 3rd level
  cache, seen by the bus unit; a store that must fetch its line (a read for ownership, RFO)
  counts as a read (IA-32 Optimization Reference Manual, Appendix B, B-14). In the model:
  L2_read_hits + L3_read_hits. The L1 D is write-through, so every store reaches the L2; the
  model's L2 write hits (stores to lines the L2 holds, one per store) are left out, as the
  manual counts references once per 64-byte line, not per store; a store that misses the L2
  fetches its line from the L3 as a read, which the model counts at the L3, as the RFO.
* BSQ_CACHE_REFERENCE, mask 0x200 ("read 3rd level cache miss"): the model's L3_read_misses,
  the RFOs of stores that miss included. Prefetches are not counted by the hardware (CPUID
  0xf21 on, B-14); the model counts the misses its hardware prefetcher and prefetchnta
  take, on the instruction that set them off: the same lines the demand accesses would
  have missed, one event per line either way. The hardware counts a demand read miss once
  per 128-byte sector, an RFO miss once per 64-byte line (B-14); the model's lines are 64
  bytes throughout.

oprofile samples every 100,000 cycles and every 3,000 events; a run here is some 2,000 times
shorter than the paper's, so the events are sampled every one (exact counts) and the cycles
every 997 (a prime); the shares are what compares.
"""
from __future__ import annotations

from dataclasses import dataclass, field

import pandas as pd

from ...context import routine
from ...hw import estimates
from ...hw.profile import load
from ...isa.assemble import assemble
from ...present import data
from ...present.claims import EFFECT, QUANTITY, Claim
from ...run.machine import Machine
from ...run import reuse, sweep
from ...run.profiler import count_session, profile_session
from . import ext3model, oprofile, restsplit, usercopy, writebatch

CLOCK_HZ = 2_200_000_000            # the paper's P4 Xeon (2200.91 MHz, estimated by oprofile)
PAGES_WRITTEN = 4 * 8000 * 256      # iozone -s 8000MB -t 4: four files of 8000 MB, 4 KB pages
KERNELS = {"original": "2.6.12", "optimized": "patched"}    # the data's labels -> the book's


@dataclass(frozen=True)
class Counter:
    """One of the paper's oprofile counters and the model's event for it."""
    name: str               # as oprofile printed it
    mask: str
    count: int              # events per sample in the paper
    event: str              # the model's event (emu.run.profiler.event_mask)
    every: int              # the sampling period here


COUNTERS = {
    "cycles": Counter("GLOBAL_POWER_EVENTS", "0x01", 100000, "cycles", 997),
    "references": Counter("BSQ_CACHE_REFERENCE", "0x3f", 3000,
                          "L2_read_hits+L3_read_hits", 1),
    "l3_misses": Counter("BSQ_CACHE_REFERENCE", "0x200", 3000, "L3_read_misses", 1),
}
#: the mail's oprofile sessions, each a run of the model: a cycle table counts
#: GLOBAL_POWER_EVENTS alone (its report has one column of samples), a memory table both
#: BSQ_CACHE_REFERENCE counters at once (two columns in one report), so the shares of
#: references and of L3 misses it sets side by side come from the same writes
SESSIONS = (("cycles",), ("references", "l3_misses"))
#: the copy: the dispatcher and what it calls (kernel_fpu_begin and math_state_restore are
#: inline in the patch's _mmx_memcpy_nt and its trap handler; they are routines here)
COPY_SYMBOLS = ("__copy_from_user_ll", "_mmx_memcpy_nt", "__copy_user_zeroing_intel",
                "kernel_fpu_begin", "math_state_restore")
USER_SYMBOLS = ("iozone_write_test",)
#: kjournald's data loop and the routines only it calls (routines/x86/commit_2612.S); what it
#: shares with the write path (__journal_temp_unlink_buffer, kmem_cache_free, the locks) is
#: counted with the write path
COMMIT_SYMBOLS = ("journal_commit_transaction", "journal_remove_journal_head", "ll_rw_block",
                  "end_buffer_write_sync", "journal_brelse_array")
#: the rest of kjournald's commit: the metadata's log writes, descriptor and commit blocks,
#: the checkpoint lists (routines/x86/commit_meta_2612.S)
COMMIT_META_SYMBOLS = ("journal_write_metadata", "journal_submit_buffer",
                       "journal_end_buffer_io_sync", "journal_write_metadata_buffer",
                       "journal_file_buffer", "journal_unfile_buffer", "__journal_unfile_buffer",
                       "jbd_lock_state", "journal_next_log_block",
                       "journal_get_descriptor_buffer", "journal_commit_written",
                       "journal_commit_finish", "free_buffer_head", "journal_lock_down")
#: the block layer's routines (routines/x86/block_2612.S): a buffer's bio and request, the
#: anticipatory elevator's merge, and their completion
BLOCK_SYMBOLS = ("submit_bh", "bio_alloc", "bio_put", "bio_destructor", "submit_bio",
                 "generic_make_request", "__make_request", "get_request", "drive_stat_acct",
                 "disk_round_stats", "__end_that_request_first", "bio_endio",
                 "end_bio_bh_io_sync", "end_that_request_last", "as_merge", "elv_rq_merge_ok",
                 "as_hash_bucket", "as_add_arq_hash", "as_del_arq_hash", "as_merged_request",
                 "ll_back_merge_fn")
#: the disk's side (routines/x86/scsi_2612.S): the driver taking a request, the disk's
#: interrupt and the SCSI softirq that ends the request
DISK_SYMBOLS = ("disk_dispatch", "scsi_prep_fn", "scsi_dispatch_cmd", "disk_interrupt",
                "common_interrupt", "do_IRQ", "host_intr", "scsi_done", "do_softirq",
                "scsi_softirq", "scsi_finish_command", "scsi_io_completion")
#: the timer tick's own routines (routines/x86/tick_2612.S); what it shares with the rest
#: (do_softirq, the locks) is counted there
TICK_SYMBOLS = ("local_timer_tick", "apic_timer_interrupt", "smp_apic_timer_interrupt",
                "update_process_times", "account_system_time", "__rcu_pending",
                "run_posix_cpu_timers", "sched_clock", "scheduler_tick", "rebalance_tick",
                "load_balance", "find_busiest_group", "fbg_power_gain", "run_timer_softirq",
                "cascade", "__run_timers", "timer_irq0_interrupt", "update_wall_time")
#: the completion's routines the disk's interrupt reaches in writeback's files
#: (routines/x86/writeback_2612.S)
COMPLETION_SYMBOLS = ("end_buffer_async_write", "end_page_writeback")
#: what the chapter's model of the copy and the machine leaves out (the write path's own
#: omissions are ext3model.LEFT_OUT)
LEFT_OUT = (
    "the disk and its time: the paper's elapsed time is mostly waiting for it (the model "
    "paces the writes at the mail's rate, and its disk writes a request at that rate)",
    "three more processors on the shared bus, and their traffic (the profiles run one CPU)",
    "Hyper-Threading: whether the paper's four CPUs were two packages' logical processors",
    "the device-not-available trap's entry and exit around math_state_restore "
    "(fxsave and fxrstor themselves are estimates)",
    "the trace cache (a 16 KB instruction cache stands in for it) and NetBurst's pipeline: "
    "the cost model charges cycles per instruction, not micro-ops",
    "sector counting: the hardware counts a demand read miss per 128-byte sector, the model "
    "every miss per 64-byte line",
    "oprofile's sampling skid and its own interrupt: the model's counts are exact",
)


# ------------------------------------------------------------------ the write test

@dataclass
class WriteProfile:
    """One kernel's write test: a SampledRun per counter (a run of ``records`` writes per
    CPU for each of the mail's sessions, SESSIONS: the cycles, then the references and the
    L3 misses together), and the Kernel they ran on (``machine_kernel``: not sent back
    from a sweep's worker, where ``facts`` keeps what the chapter reads of it)."""
    kernel: str
    cpus: int
    records: int
    sampled: dict
    machine_kernel: object
    period: int = 0         # paced: a write every ``period`` cycles per CPU (0: back to back)
    facts: dict = field(default_factory=dict)       # kernel_facts(machine_kernel)
    once: dict = field(default_factory=dict)        # paced: commit_once_events, per counter

    def __getstate__(self):
        # a Machine does not cross processes; the profile's own numbers do
        return {**self.__dict__, "machine_kernel": None}

    def listing(self, metric):
        """Per symbol: app (vmlinux or iozone), samples, percent of all samples, and the
        events they stand for (cycles: the profiler's exact cycles); most first."""
        counter = COUNTERS[metric]
        df = self.sampled[metric].by_symbol()
        df = df[df["symbol"] != "(unknown)"].copy()
        if metric == "cycles":
            df["events"] = df["cycles"]
        else:
            df["events"] = df["samples"] * counter.every
        total = df["samples"].sum()
        df["percent"] = df["samples"] * 100.0 / total
        df["app"] = ["iozone" if s in USER_SYMBOLS else "vmlinux" for s in df["symbol"]]
        df = df.sort_values(["events", "symbol"], ascending=[False, True])
        return df[["symbol", "app", "samples", "percent", "events"]].reset_index(drop=True)

    def events(self, metric):
        """Events (or cycles) of the whole run, the commit's once-a-commit share with them
        (commit_share)."""
        return int(self.listing(metric)["events"].sum()) + self.commit_share(metric)

    def commit_share(self, metric):
        """The commit's once-a-commit events in the mail's run (``once``: commit_once_events)
        that fall to this run: one commit in each commit_writes() writes of every CPU, so
        ``records / commit_writes()`` of one (0 for a run without them: back to back)."""
        return self.once.get(metric, 0.0) * self.records / commit_writes()

    def copy_events(self, metric):
        """Events (or cycles) in the copy: COPY_SYMBOLS."""
        df = self.listing(metric)
        return int(df[df["symbol"].isin(COPY_SYMBOLS)]["events"].sum())

    def commit_events(self, metric):
        """Events (or cycles) in kjournald's data loop's own routines: COMMIT_SYMBOLS."""
        return self._symbol_events(metric, COMMIT_SYMBOLS)

    def commit_meta_events(self, metric):
        """Events (or cycles) in the rest of kjournald's commit: COMMIT_META_SYMBOLS."""
        return self._symbol_events(metric, COMMIT_META_SYMBOLS)

    def block_events(self, metric):
        """Events (or cycles) in the block layer's routines: BLOCK_SYMBOLS."""
        return self._symbol_events(metric, BLOCK_SYMBOLS)

    def disk_events(self, metric):
        """Events (or cycles) in the disk's side: DISK_SYMBOLS, and the completion's
        routines they reach in writeback (COMPLETION_SYMBOLS)."""
        return self._symbol_events(metric, DISK_SYMBOLS + COMPLETION_SYMBOLS)

    def tick_events(self, metric):
        """Events (or cycles) in the timer tick's own routines: TICK_SYMBOLS."""
        return self._symbol_events(metric, TICK_SYMBOLS)

    def tick_stats(self):
        """The timer ticks of the profiled runs (paced; back-to-back runs take none: zeros):
        ticks per run (all CPUs, the cycles counter's run), each tick's cycles (its whole
        call), and the L3 read misses in the tick's own routines (TICK_SYMBOLS, the
        l3_misses counter's run) per tick of that run."""
        def ticks(metric):
            run = self.sampled[metric].run if metric in self.sampled else None
            return sum(getattr(run, "ticks", ()))
        n = ticks("cycles")
        if not n:
            return {"ticks_per_run": 0.0, "cycles_per_tick": 0.0, "l3_misses_per_tick": 0.0}
        n_l3 = ticks("l3_misses")
        return {"ticks_per_run": float(n),
                "cycles_per_tick": sum(self.sampled["cycles"].run.tick_cycles) / n,
                "l3_misses_per_tick": (self.tick_events("l3_misses") / n_l3 if n_l3
                                       else 0.0)}

    def _symbol_events(self, metric, symbols):
        df = self.listing(metric)
        return int(df[df["symbol"].isin(symbols)]["events"].sum())

    def other_events(self, metric):
        """Events (or cycles) in everything but the copy."""
        return self.events(metric) - self.copy_events(metric)

    def _runs(self, metric="cycles"):
        """The Runs of the profiled run of ``metric``: one per CPU, or (paced) one per write."""
        run = self.sampled[metric].run
        if isinstance(run, list):               # paced: each CPU's write Runs
            return [r for runs in run if runs for r in runs]
        return [r for r in getattr(run, "runs", [run]) if r]

    def bus_wait_per_write(self):
        """Cycles the profiled cycles run spent waiting for the front-side bus, per write
        (all CPUs' together over all their writes)."""
        return sum(r.events.get("bus_wait_cycles", 0) for r in self._runs()) / \
            (self.records * self.cpus)

    def busy_cycles_per_write(self):
        """The CPUs' cycles not halted in the profiled cycles run, per write: the writes',
        and (paced) writeback's in the pauses and the idle loop's."""
        run = self.sampled["cycles"].run
        busy = sum(run.busy) if hasattr(run, "busy") else sum(r.cycles for r in self._runs())
        return (busy + self.commit_share("cycles")) / (self.records * self.cpus)

    def busy_percent(self):
        """The CPUs' busy time in the profiled cycles run, % of the time it took (paced
        runs: busy cycles per write over the period; back to back: 100)."""
        if not self.period:
            return 100.0
        return 100.0 * self.busy_cycles_per_write() / self.period

    def per_write(self, metric, part="all"):
        """Events per write() (part "all", "copy", "other", "commit", "commit_meta", "block",
        "disk" or "tick")."""
        value = {"all": self.events, "copy": self.copy_events, "other": self.other_events,
                 "commit": self.commit_events, "commit_meta": self.commit_meta_events,
                 "block": self.block_events, "disk": self.disk_events,
                 "tick": self.tick_events}[part](metric)
        return value / (self.records * self.cpus)

    def memory_table(self):
        """The paper's second listing: per symbol, references and L3 misses (samples and
        percent each), sorted by references as oprofile sorted it."""
        refs = self.listing("references").set_index("symbol")
        misses = self.listing("l3_misses").set_index("symbol")
        index = refs.index.union(misses.index)     # a symbol with events of one kind only
        df = pd.DataFrame({"app": refs["app"].reindex(index).fillna(misses["app"]),
                           "references": refs["events"].reindex(index).fillna(0),
                           "references_percent": refs["percent"].reindex(index).fillna(0.0),
                           "l3_misses": misses["events"].reindex(index).fillna(0),
                           "l3_misses_percent": misses["percent"].reindex(index)
                           .fillna(0.0)})
        df[["references", "l3_misses"]] = df[["references", "l3_misses"]].astype(int)
        df.index.name = "symbol"
        return df.sort_values(["references", "l3_misses", "symbol"],
                              ascending=[False, False, True]).reset_index()


@reuse.unit
def write_profile(kernel, records=1000, warm=2000, cpus=1, counters=tuple(COUNTERS),
                  paced=False, **options):
    """iozone's write test on ``kernel`` ("2.6.12" or "patched"): a fresh Kernel whose page
    cache is prefilled (the zone full: reclaim runs from the first write), ``warm`` writes
    per CPU to warm the caches, then one profiled run of ``records`` writes per CPU for each
    counter. ``paced``: the profiled writes come one every write_period() cycles per CPU,
    the CPU halted in the idle task in between (Kernel.paced_writes); else back to back.
    ``options`` go to ext3model.Kernel. A unit of emu.run.reuse (a sweep's points were
    already): in the book's build a direct call and a sweep's point with the same arguments
    run once (notebook 02's exercise and its check), and a reused result has no Kernel."""
    options.setdefault("max_records", None)
    disk_warm = 0
    if paced:       # paced writes before the profiled ones: the disk's queue in its stride
        options.setdefault("writer_chunks", True)
        disk_warm = ext3model.disk_warm_writes()
    if paced and options["writer_chunks"]:
        # whole periods: a chunk of each writer in each profiled run, and a period before
        # the first, so the disk's requests in flight at its start are a period's (see
        # writebatch.period_writes: why a run is a whole period)
        disk_warm = writebatch.period_writes(cpus)
        if records % disk_warm:
            raise ValueError(f"paced runs with the writers' chunks are whole periods: "
                             f"records a multiple of {disk_warm}, not {records}")
    if options["max_records"] is None:
        options["max_records"] = (ext3model.PAGE_CACHE_BYTES // ext3model.PAGE + warm +
                                  disk_warm + records * len(sessions(counters)))
    if paced:
        options.setdefault("cores", max(cpus, 2))
    k = ext3model.Kernel(kernel, cpus=cpus, **options)
    # paced: the pages writeback has passed are clean, and those a commit has passed off
    # the data list (commit_age writes old once the warm-up's writes are on it), as they
    # are in a steady state
    pages = k.pool_pages // cpus
    clean = k.writeback_point(pages) if paced else 0
    if paced:
        k.commit_lag = k.commit_age(write_period(), CLOCK_HZ)
    committed = (min(clean, max(0, pages - max(0, k.commit_lag - warm - disk_warm)))
                 if paced else 0)
    k.prefill(clean_before=clean, committed_before=committed)
    if warm:
        k.write_records(warm)
    period = write_period() if paced else 0
    if paced:       # the rest of the commit: the metadata the warm-up's writes dirtied
        k.pace_metadata(commit_writes())
    if disk_warm:   # kjournald starts the commit in its first pause (commit_pending)
        k.commit_pending = True
        k.paced_writes(disk_warm, period)
    sampled = {}
    for session in sessions(counters):
        sampled.update(_profile_session(k, session, records, period if paced else None))
    sampled = {metric: sampled[metric] for metric in counters}
    facts = kernel_facts(k)
    once = (commit_once_events(kernel, cpus, k.meta_per_commit,
                               profile=options.get("profile", "pentium4"),
                               meta_shared=facts["meta_shared"]) if paced else {})
    return WriteProfile(kernel, cpus, records, sampled, k, period, facts, once)


def sessions(counters):
    """The runs of ``counters`` (names of COUNTERS), as the mail's oprofile sessions group
    them (SESSIONS): each session's counters asked for, in its order."""
    unknown = set(counters) - set(COUNTERS)
    if unknown:
        raise ValueError(f"counters are among {tuple(COUNTERS)}, not {sorted(unknown)}")
    return [tuple(m for m in session if m in counters) for session in SESSIONS
            if any(m in counters for m in session)]


def _profile_session(k, session, records, period):
    """One profiled run of ``records`` writes per CPU on the ext3model.Kernel ``k``,
    counting the ``session``'s counters at once: paced one every ``period`` cycles
    (Kernel.paced_writes), or back to back (period None). {counter: SampledRun}."""
    limit = 40_000 * records + 1_000_000
    if period is not None:
        run = lambda: k.paced_writes(records, period)
    elif k.cpus == 1:
        entry, *args = k.calls(records)[0]
        run = lambda: k.machine.call(entry, *args, limit=limit)
    else:
        calls = k.calls(records)
        run = lambda: k.machine.run_parallel(calls, limit=limit)
    every = {COUNTERS[m].every for m in session}
    if len(every) != 1:
        raise ValueError(f"a session samples its counters every as many events: {session}")
    runs = profile_session(k.machine, run, [COUNTERS[m].event for m in session], every.pop())
    if period is None:
        k.written += records
    return {m: runs[COUNTERS[m].event] for m in session}


def kernel_facts(k):
    """What the chapter quotes of a write test's Kernel (an ext3model.Kernel): its page
    cache's pages, how far writeback lags the newest write, balance_dirty_pages'
    ratelimit, kjournald's list's age in writes and CPU 0's cycles a commit turn; the
    metadata a commit logs, how many writes per CPU apart the model logs them, the
    buffers logged over the Kernel's paced writes and their cycles per buffer (all CPUs),
    of a commit's buffers those every commit logs ("meta_shared": Kernel.shared_metadata),
    the metadata blocks DIRTY_EXPIRE_S of writes dirty ("meta_per_expire", for
    mail_writeback and commit_once_events); the commit's lock-down (Kernel.lockdown: the handles open when it began, its cycles,
    the write per CPU it came after; del_timer_sync's cycles before it) and where the
    metadata buffers are at the end (Kernel.commit_state), the writers' sleeps in
    get_request_wait per CPU, their cycles and those a wake-up from another CPU ended
    ("sleeps", "sleep_cycles", "ipi_wakes"), whether the commit reached its
    end (phase 8), the log's free blocks and the most credits a transaction holds
    ("outstanding": t_outstanding_credits, read at rest, no handle open: journal_stop has
    given back each handle's unused credits, so what is left is one credit for each buffer
    journal_dirty_metadata took one for, fs/jbd/transaction.c 1107-1116 of 2.6.12.1)."""
    turns = k.commit_turns[0]
    logged = sum(k.meta_turns)
    return {"pool_pages": k.pool_pages, "preempt": k.preempt,
            "writeback_lag": k.pool_pages - k.writeback_point(k.pool_pages),
            "ratelimit": k.ratelimit, "commit_age": k.commit_lag,
            "commit_turn_cycles": k.commit_cycles[0] / turns if turns else 0.0,
            "meta_per_commit": k.meta_per_commit, "meta_every": k.meta_every,
            "meta_logged": logged,
            "meta_buffer_cycles": sum(k.meta_cycles) / logged if logged else 0.0,
            "meta_per_expire": (k.metadata_per_commit(DIRTY_EXPIRE_S //
                                                      ext3model.COMMIT_INTERVAL_S *
                                                      commit_writes())
                                if k.meta_per_commit else 0),
            "meta_shared": k.meta_shared,
            "lockdown": dict(k.lockdown), "commit_state": k.commit_state(),
            "commit_ended": k.commit_ended, "del_timer_cycles": k.del_timer_cycles,
            "chunks": list(k.chunks), "chunk_pages": list(k.chunk_pages),
            "chunk_cycles": list(k.chunk_cycles), "most_queued": k.most_queued,
            "sleeps": list(k.sleeps), "sleep_cycles": list(k.sleep_cycles),
            "ipi_wakes": list(k.ipi_wakes), "kjournald_sleeps": list(k.kjournald_sleeps),
            "log_free": k._read(k.journal + ext3model.J["FREE"]),
            "outstanding": max(k._read(t + ext3model.T["OUTSTANDING"])
                               for t in k._transactions())}


def kernel_profiles(**options):
    """``write_profile`` of each of KERNELS with the same ``options``, through emu.sweep
    (both at once): {label: WriteProfile}, each without its Kernel (``facts`` holds what
    the chapter reads of it)."""
    labels = list(KERNELS)
    runs = sweep.run(write_profile, [dict(kernel=KERNELS[label], **options) for label in labels],
                     description="iozone's write test, both kernels")
    return dict(zip(labels, runs))


def write_period(label="original"):
    """Cycles between two writes of one iozone child in the mail's run of ``label``'s
    kernel: its elapsed time (iozone's mean of five runs) at the clock, over the pages each
    of the four children wrote: 229.76 s x 2.2 GHz / 2,048,000 = 246,812 cycles before the
    patch (222.94 s after: 239,486). The disk set that pace (the CPUs were busy a tenth of
    it: cpu_time), so the model paces both kernels with the original's."""
    runs = data.load("yoshioka2005_iozone").set_index("kernel")
    return round(float(runs.loc[label, "elapsed_s"]) * CLOCK_HZ / (PAGES_WRITTEN / 4))


def commit_writes():
    """Writes per CPU in one commit interval at the mail's pace: ext3's 5 s
    (ext3model.COMMIT_INTERVAL_S) at the clock, over write_period()."""
    return round(ext3model.COMMIT_INTERVAL_S * CLOCK_HZ / write_period())


#: how long a dirty page or buffer stays dirty before writeback writes it back
#: (mm/page-writeback.c 83 of 2.6.12.1: dirty_expire_centisecs, 30 s)
DIRTY_EXPIRE_S = 30


def mail_journal(meta_per_commit, label="original", log_blocks=ext3model.LOG_BLOCKS):
    """kjournald's work in the mail's run of ``label``'s kernel, from its elapsed time and
    2.6.12's rules, for a commit of ``meta_per_commit`` metadata buffers (the model's
    count for the mail's interval: WriteProfile.facts["meta_per_commit"]): the commits
    (each the commit timer's expiry waking kjournald, every COMMIT_INTERVAL_S: nothing
    else starts one, see the chapter), the writes per CPU in each, the log blocks a commit
    writes. Writeback writes next to none of the metadata back (mail_writeback; the model
    counts none), so every committed transaction stays on the checkpoint lists until a
    checkpoint writes it back: the log holds "log_transactions" commits before a
    journal_start must checkpoint (ext3model.checkpoint_below: the log less that, over a
    commit's blocks), and from then
    each commit's blocks take the free space below it again, so log_do_checkpoint
    (checkpoint.c 283-375 of 2.6.12.1: cleanup_journal_tail frees nothing, 296-299; it
    writes the oldest transaction's dirty buffers with ll_rw_block, 202-253, until the
    transaction is dropped, 344-368; __log_wait_for_space, 78-102, calls it again while
    the space is short) writes back one transaction's buffers a commit: "checkpoints",
    the transactions written back in the run (its commits less the log's); and
    "checkpoint_transactions", the committed transactions on the checkpoint lists when a
    commit starts (__journal_clean_checkpoint_list walks them), averaged over the run:
    one more each commit up to the log's, then the log's."""
    runs = data.load("yoshioka2005_iozone").set_index("kernel")
    elapsed = float(runs.loc[label, "elapsed_s"])
    interval = ext3model.COMMIT_INTERVAL_S
    blocks = ext3model.log_blocks_per_commit(meta_per_commit)
    held = (log_blocks - ext3model.checkpoint_below(log_blocks)) / blocks
    commits = elapsed / interval
    full = min(commits, held)                 # commits before the log first fills
    listed = (full * full / 2 + (commits - full) * held) / commits
    return {"elapsed_s": elapsed, "commits": commits, "commit_writes": commit_writes(),
            "log_blocks_per_commit": blocks, "log_transactions": held,
            "log_full_s": held * interval, "checkpoints": commits - full,
            "checkpoint_transactions": listed}

#: 2.6.12's writeback thresholds (mm/page-writeback.c 67, 72, 78 of 2.6.12.1):
#: dirty_background_ratio, vm_dirty_ratio (% of the machine's pages), and
#: dirty_writeback_centisecs, the period of wb_kupdate (s)
DIRTY_BACKGROUND_RATIO, VM_DIRTY_RATIO, WRITEBACK_PERIOD_S = 10, 40, 5


#: the disk queue's requests and its congestion marks (include/linux/blkdev.h 27,
#: BLKDEV_MAX_RQ; drivers/block/ll_rw_blk.c 94-107 of 2.6.12.1): congested from this many
#: requests allocated, uncongested again below the other
QUEUE_REQUESTS = 128
CONGESTION_ON = QUEUE_REQUESTS - QUEUE_REQUESTS // 8 + 1
CONGESTION_OFF = QUEUE_REQUESTS - QUEUE_REQUESTS // 8 - QUEUE_REQUESTS // 16 - 1


def mail_writeback(meta_per_expire, label="original"):
    """What writeback did in the mail's run of ``label``'s kernel, from its elapsed time and
    2.6.12's thresholds, the machine's memory at ext3model.MEMORY_MB's estimate
    (get_dirty_limits, mm/page-writeback.c 135-181 of 2.6.12.1, with nothing mapped):
    "pages_per_s", the four writers' pages a second; "background_pages" and "dirty_pages",
    the two thresholds; "file_pages", each child's file; "background_s", when the dirty
    pages pass the background threshold at the run's rate, if nothing was written before.
    From then on background_writeout and the writers throttled at vm_dirty_ratio write the
    files' pages back (balance_dirty_pages, 190-254), and none of them the metadata, the
    block device's (its own inode, on the block device's superblock, backed by the disk's
    queue as the files are: fs/block_dev.c 590-593): writeback_inodes visits the newest
    superblock first (fs/super.c 311 adds at the tail; fs-writeback.c 417-418 walks from
    it), and there the files' dirty pages fill every pass (1024 pages, a throttled
    writer's 1536: 384-385, 440-441, each file redirtied young after: 213-215). A throttled
    writer blocks for requests (it is not nonblocking) and so holds the disk's queue at its
    QUEUE_REQUESTS, congested (CONGESTION_ON); a congested queue ends a nonblocking pass in
    the file system and skips the block device's inode (335-341). wb_kupdate is the only
    pass that reaches that inode, once it is due (dirtied DIRTY_EXPIRE_S before: 355-357,
    its dirtied_when set when it was clean, 125-127), and only while the queue is below
    CONGESTION_OFF (else it waits a tenth of a second and tries again, page-writeback.c
    415-426) and no other pdflush works the queue (writeback_acquire, fs-writeback.c 360:
    background_writeout, woken by the same fall below CONGESTION_OFF, holds BDI_pdflush
    while it writes a file's pages; kupdate's pass then ends, 360-361 and page-writeback.c
    422-423); what it then submits ends when the queue is congested again (fs/mpage.c
    728, a few scattered pages' requests). So the metadata stays dirty on the journal's
    checkpoint lists until the log fills and log_do_checkpoint writes it back
    (mail_journal). "meta_passes", the
    most write-backs kupdate could make (had it found the queue free each time it was due:
    the run's elapsed time over DIRTY_EXPIRE_S + WRITEBACK_PERIOD_S, and over
    DIRTY_EXPIRE_S), and "meta_pages_per_write", the metadata pages each would write back
    (``meta_per_expire``, the distinct metadata blocks the writes of DIRTY_EXPIRE_S
    dirty: the model's block map) per write of a child in that time, all four children's
    writes counted; "congestion", (CONGESTION_ON, CONGESTION_OFF, QUEUE_REQUESTS)."""
    runs = data.load("yoshioka2005_iozone").set_index("kernel")
    elapsed = float(runs.loc[label, "elapsed_s"])
    memory = estimates.value(ext3model.MEMORY_MB[0], ext3model.MEMORY_MB[1])
    total = round(memory) * (1 << 20) // ext3model.PAGE
    rate = PAGES_WRITTEN / elapsed
    background = DIRTY_BACKGROUND_RATIO * total // 100
    writes = DIRTY_EXPIRE_S // ext3model.COMMIT_INTERVAL_S * commit_writes() * 4
    return {"elapsed_s": elapsed, "total_pages": total, "pages_per_s": rate,
            "background_pages": background, "dirty_pages": VM_DIRTY_RATIO * total // 100,
            "file_pages": PAGES_WRITTEN // 4, "background_s": background / rate,
            "meta_passes": (elapsed / (DIRTY_EXPIRE_S + WRITEBACK_PERIOD_S),
                            elapsed / DIRTY_EXPIRE_S),
            "meta_pages_per_write": meta_per_expire / writes,
            "congestion": (CONGESTION_ON, CONGESTION_OFF, QUEUE_REQUESTS)}


#: writes per CPU before the whole commit that commit_once_events measures
ONCE_WRITES = 4
#: the parts of a commit done once a commit, as Kernel.whole_commit names them: kjournald's
#: del_timer_sync (fs/jbd/journal.c 160-164), the lock-down (commit.c 205-312: the running
#: transaction locked down, the checkpoint lists cleaned, the revoke table switched, phase 2's
#: b_modified loop), the revoke records (commit.c 426) and phase 8 (commit.c 802-843)
ONCE_PARTS = ("del_timer_sync", "lock_down", "revoke_records", "commit_end")


def commit_once_events(kernel, cpus, meta_per_commit, profile="pentium4", writes=ONCE_WRITES,
                       meta_shared=0):
    """One commit's once-a-commit work in the mail's run, by counter (COUNTERS' events):
    a whole commit as guest code (ext3model.Kernel.whole_commit on a fresh ``kernel`` of
    ``cpus`` CPUs after ``writes`` writes each, from cold caches), its ONCE_PARTS' events,
    and the walk of the checkpoint lists at the next commit's start at the mail's size:
    ``meta_shared`` buffers every commit logs (Kernel.shared_metadata, on the newest
    transaction's list alone) and the rest of ``meta_per_commit`` for each of
    mail_journal's "checkpoint_transactions" (the run's average), none written back, at
    the events per buffer of the model's walk of its own commit's buffers from cold caches
    (its fixed part spread over them: an upper bound); and the metadata's write-back by
    the log's checkpoints (mail_journal's "checkpoints" over the run's commits, each
    writing back a transaction's own buffers, ``meta_per_commit`` less ``meta_shared``),
    at the events per buffer of the model's checkpoint of its commit's transaction
    (Kernel.checkpoint: log_do_checkpoint as guest code from cold caches, a writer's, its
    ll_rw_block of each dirty buffer, each sleep's request taken by the disk and ended by
    its interrupt, the buffers released and the transaction dropped, the log's tail moved
    and the journal's superblock written; its fixed part spread over the model's few
    buffers: an upper bound). Each part is profiled as the write runs are (one commit
    counts the references and the L3 misses at once, as the mail's memory session did:
    a part runs once). The per-buffer parts of a commit (each
    buffer's log write, the data loop) are in the paced runs already. Returns {metric:
    events} with "parts" ({part: cycles}), "part_events" ({metric: {part: events}}:
    "checkpoint" per buffer), "fixed" ({metric: the ONCE_PARTS' events}), "walked" (the
    buffers of the mail's walk), "checkpointed" (the buffers the checkpoints write back
    a commit interval), "checkpoint_buffers" and "checkpoint_sleeps" (the model's
    checkpoint's buffers and its sleeps on their I/O); and wb_kupdate's passes, one every WRITEBACK_PERIOD_S
    (dirty_writeback_centisecs, 500), so COMMIT_INTERVAL_S / WRITEBACK_PERIOD_S a commit interval ("kupdate_passes"), each
    from cold caches (Kernel.kupdate_pass: sync_supers, then the super blocks' dirty inodes,
    each pass stopped by the first, the files' young; part "kupdate"; "kupdate_old", the
    pass once the block device's inode is due, stopped at writeback_acquire, is measured
    and not added: a congested queue or another pdflush stops kupdate before that
    inode's pages, mail_writeback)."""
    metrics = SESSIONS[1]                   # the memory session's counters, counted at once
    k = ext3model.Kernel(kernel, cpus=cpus, max_records=writes + 16, profile=profile)
    k.write_records(writes)
    measure = _profiled_part(k.machine, [COUNTERS[metric] for metric in metrics])
    measured = k.whole_commit(measure=measure)
    k.machine.flush_caches()                # a commit interval and more since its commit
    done = k.checkpoint(measure=measure)
    calls = done["checkpoint"] + done["disk"]
    measured["checkpoint"] = tuple(sum(c[i] for c in calls) / done["buffers"]
                                   for i in range(1 + len(metrics)))
    checkpoint = {"checkpoint_buffers": done["buffers"], "checkpoint_sleeps": done["waits"]}
    for part, old in (("kupdate", False), ("kupdate_old", True)):
        k.machine.flush_caches()            # 5 s of the writers since the last pass
        measured[part] = k.kupdate_pass(old=old, measure=measure)
    counted = {p: v for p, v in measured.items() if isinstance(v, tuple)}
    events = {metric: {p: v[i] for p, v in counted.items()}
              for i, metric in enumerate(("cycles",) + metrics)}
    buffers = measured["buffers"]
    journal = mail_journal(meta_per_commit)
    per_commit = meta_per_commit - meta_shared          # a commit's own: on its list alone
    walked = meta_shared + journal["checkpoint_transactions"] * per_commit
    checkpointed = journal["checkpoints"] * per_commit / journal["commits"]
    fixed = {metric: sum(e[p] for p in ONCE_PARTS) for metric, e in events.items()}
    passes = ext3model.COMMIT_INTERVAL_S / WRITEBACK_PERIOD_S
    out = {metric: fixed[metric] + e["clean_cold"] / buffers * walked +
           e["checkpoint"] * checkpointed + e["kupdate"] * passes
           for metric, e in events.items()}
    parts = {p: v for p, v in measured.items() if not isinstance(v, tuple)}
    return {**out, "parts": {**events["cycles"], **parts}, "part_events": events,
            "fixed": fixed,
            "walked": walked, "checkpointed": checkpointed, "kupdate_passes": passes,
            **checkpoint}


def _profiled_part(machine, counters):
    """whole_commit's ``measure``: a part's events of ``counters`` (one or two of the
    chapter's counters sampled every event), counted at once as the write runs' profiles
    count them: (its cycles, each counter's events)."""
    if any(c.event == "cycles" or c.every != 1 for c in counters):
        raise ValueError("a commit's parts are counted event by event")
    events = [c.event for c in counters]

    def measure(run):
        result, counts = count_session(machine, run, events)
        return (result.cycles, *(counts[e] for e in events))
    return measure


def published_listing(metric, kernel):
    """The paper's listing of ``metric`` for ``kernel`` ("original"/"optimized"): symbol,
    samples, percent."""
    name, samples, percent, _ = oprofile.METRICS[metric]
    df = oprofile.listing(metric, kernel)
    return df[["rank", "symbol", samples, percent]].rename(
        columns={samples: "samples", percent: "percent"})


def side_by_side(profiles, metric, top=5):
    """The paper's top five of ``metric`` beside the model's, for both kernels: one row per
    rank; ``profiles``: {"original": WriteProfile, "optimized": WriteProfile}."""
    rows = []
    for label, profile in profiles.items():
        published = published_listing(metric, label)
        emulated = profile.listing(metric).head(top)
        for rank in range(top):
            p = published.iloc[rank] if rank < len(published) else None
            e = emulated.iloc[rank] if rank < len(emulated) else None
            rows.append({"kernel": label, "rank": rank + 1,
                         "published symbol": p["symbol"] if p is not None else "",
                         "published %": float(p["percent"]) if p is not None else None,
                         "emulated symbol": e["symbol"] if e is not None else "",
                         "emulated %": round(float(e["percent"]), 4) if e is not None
                         else None})
    return pd.DataFrame(rows)


def change(before, after):
    """How ``after`` compares with ``before``: direction ("fell", "rose", "unchanged"),
    ratio after/before, and the difference after - before."""
    direction = "fell" if after < before else "rose" if after > before else "unchanged"
    return {"direction": direction, "ratio": after / before if before else float("inf"),
            "difference": after - before}


def compare(published, emulated):
    """How the model's number compares with the published one: direction ("model higher",
    "model lower", "equal"), ratio model/published (inf when only the published is 0) and
    difference model - published."""
    direction = ("model higher" if emulated > published else
                 "model lower" if emulated < published else "equal")
    if published:
        ratio = emulated / published
    else:
        ratio = 1.0 if emulated == published else float("inf")
    return {"direction": direction, "ratio": ratio, "difference": emulated - published}


def published_share(metric, kernel):
    """The paper's copy routine's share (percent) of ``metric`` in ``kernel``'s listing."""
    rows = published_listing(metric, kernel)
    return float(rows[rows["symbol"] == oprofile.COPY_ROUTINE[kernel]]["percent"].iloc[0])


def published_rest(metric, kernel):
    """The paper's samples of ``metric`` outside the copy routine: the listing's total
    implied by its rounding (the midpoint of the interval) less the copy's samples."""
    lo, hi = oprofile.listing_total(metric, kernel)
    rows = published_listing(metric, kernel)
    copy = int(rows[rows["symbol"] == oprofile.COPY_ROUTINE[kernel]]["samples"].iloc[0])
    return (lo + hi) / 2 - copy


def comparison_table(profiles):
    """The chapter's claims, the paper's number beside the model's: one row per claim, each
    with the direction, ratio (model / paper) and difference (model - paper); percentages
    throughout, so differences are percentage points. ``profiles``: {"original":
    WriteProfile, "optimized": WriteProfile}."""
    before, after = profiles["original"], profiles["optimized"]
    rows = []

    def add(claim, paper, model):
        rows.append({"claim": claim, "paper": paper, "model": model,
                     **compare(paper, model)})

    for metric, what in (("cycles", "cycles"), ("l3_misses", "L3 misses")):
        pub = published_copy_change(metric)
        add(f"copy's {what}, after / before (%)", 100 * pub["ratio"],
            100 * after.copy_events(metric) / before.copy_events(metric))
    for metric, what in (("cycles", "cycles"), ("references", "memory references"),
                         ("l3_misses", "L3 misses")):
        for label, p in profiles.items():
            when = "before" if label == "original" else "after"
            add(f"copy's share of {what}, {when} (%)", published_share(metric, label),
                100 * p.copy_events(metric) / p.events(metric))
    for metric, what in (("cycles", "cycles"), ("l3_misses", "L3 misses")):
        add(f"rest of the kernel's {what}, after / before (%)",
            100 * published_rest(metric, "optimized") / published_rest(metric, "original"),
            100 * after.other_events(metric) / before.other_events(metric))
    lo_b, hi_b = oprofile.listing_total("cycles", "original")
    lo_a, hi_a = oprofile.listing_total("cycles", "optimized")
    add("all cycles, after / before (%)", 100 * (lo_a + hi_a) / (lo_b + hi_b),
        100 * after.events("cycles") / before.events("cycles"))
    if before.period and after.period:
        busy = cpu_time()["busy %"]
        for label, p in profiles.items():
            when = "before" if label == "original" else "after"
            add(f"CPUs busy, {when} (%)", float(busy[label]), p.busy_percent())
        text = data.load("yoshioka2005_text_numbers").set_index(["quantity", "kernel"])
        add("iozone's elapsed time gain, at most (%)",
            float(text.loc[("elapsed time gain", "optimized/original"), "value"]),
            elapsed_gain_bound(before, after))
    return pd.DataFrame(rows)


def elapsed_gain_bound(before, after):
    """The most a paced run's saving can shorten iozone's elapsed time (%): if every cycle a
    writer's CPU saves per write were on the path the disk waits for, a write period would
    shrink by the saving (before's busy cycles per write less after's, writeback's in the
    pauses included), and the gain is
    period / (period - saving) - 1, as the mail computes its own from the elapsed times.
    0 is the other bound: the disk never waits for the CPU."""
    saving = before.busy_cycles_per_write() - after.busy_cycles_per_write()
    return 100 * (before.period / (before.period - saving) - 1)


def published_copy_change(metric):
    """The paper's copy routine, before and after (samples of ``metric``): the change."""
    before = published_listing(metric, "original")
    after = published_listing(metric, "optimized")
    b = int(before[before["symbol"] == oprofile.COPY_ROUTINE["original"]]["samples"].iloc[0])
    a = int(after[after["symbol"] == oprofile.COPY_ROUTINE["optimized"]]["samples"].iloc[0])
    return {"before": b, "after": a, **change(b, a)}


# ------------------------------------------------------------------ the copy alone

CONDITIONS = {
    # the write() case: each copy into memory no cache holds, not read again soon
    "cold destination": dict(hot=False, reread=False, fpu_owner=False),
    # the same, the copied data then read (a consumer soon after: a checksum, a reader)
    "read back at once": dict(hot=False, reread=True, fpu_owner=False),
    # one destination used again and again, so in the caches (a recycled buffer)
    "hot destination": dict(hot=True, reread=False, fpu_owner=False),
    # the write() case for a task whose FPU state is live (it used x87/MMX/SSE since its
    # last switch): kernel_fpu_begin saves it, the task's next FPU use restores it
    "task owns the FPU": dict(hot=False, reread=False, fpu_owner=True),
}
RING = 16 << 20             # the cold destinations: 8 times the L3
SOURCE = 16384
WARM = 4 << 20              # the first run's warm-up: twice the L3


class CopyBench:
    """One machine with a __copy_from_user_ll and the harness (routines/x86/copy_harness.S).

    ``threshold``: None for 2.6.12's dispatcher (never non-temporal); else the patched one,
    its ``n < 512`` test made ``n < threshold`` (1: every copy non-temporal). ``sfence``:
    the patched dispatcher calls ``_mmx_memcpy_nt_sfence`` (the copy, then an ``sfence``,
    which the patch as posted does not have) instead of ``_mmx_memcpy_nt``. ``profile``: a
    profile's name or the path of a TOML file."""

    def __init__(self, threshold=None, profile="pentium4", sfence=False):
        kernel = "2.6.12" if threshold is None else "patched"
        *others, dispatcher = usercopy.KERNELS[kernel]
        src = usercopy.source(others)
        text = routine(dispatcher).read_text()
        if threshold is not None:
            test = "cmpl    $511, %ecx"
            if text.count(test) != 1 or not 1 <= threshold <= 1 << 30:
                raise ValueError(f"threshold must be from 1 to 2**30, not {threshold!r}")
            text = text.replace(test, f"cmpl    ${threshold - 1}, %ecx")
            if sfence:
                call = "call    _mmx_memcpy_nt\n"
                if text.count(call) != 1:
                    raise AssertionError("the dispatcher's call of _mmx_memcpy_nt not found")
                text = text.replace(call, "call    _mmx_memcpy_nt_sfence\n")
            src += text
        elif sfence:
            raise ValueError("sfence needs the patched dispatcher (a threshold)")
        else:
            src += text + routine(usercopy.ROUTINES["_mmx_memcpy_nt"][0]).read_text()
        src += routine("x86/copy_harness.S").read_text()
        self.threshold, self.sfence = threshold, sfence
        self.machine = m = Machine(profile, ram_size=RING + (16 << 20))
        m.load(assemble(src, "x86", m.code_start, f"{kernel} copy, threshold {threshold}"))
        self.ring = m.alloc(RING)
        self.source = m.alloc(SOURCE, bytes(range(256)) * (SOURCE // 256))
        self.warm = False
        self.offset = 0                 # where the next copy goes in the ring

    def _call(self, ring, ring_bytes, *args):
        """copy_loop from where the last call left off (a smaller ring: from its start)."""
        start = self.offset if self.offset < ring_bytes else 0
        run = self.machine.call("copy_loop", ring, ring_bytes, *args, start)
        self.offset = self.machine.read_word(self.machine.symbols["copy_loop_next"])
        return run

    def _warm(self):
        """The caches full of dirty lines of earlier destinations, the same way for every
        bench whatever its dispatcher: 4 MB of the ring written by 2.6.12's unrolled copy
        (__copy_user_zeroing_intel, in both kernels), a page a call."""
        for offset in range(0, WARM, 4096):
            self.machine.call("__copy_user_zeroing_intel", self.ring + offset, self.source,
                              4096)
        self.offset = WARM
        self.warm = True

    def run(self, size, condition="cold destination"):
        """Cycles and L3 misses per copy of ``size`` bytes: the mean over enough copies to
        write 1 MB (at least 64), after 256 KB of the same copies (and, the first time, 4 MB
        written by 2.6.12's copy: the caches full of earlier destinations, dirty, as in a
        steady state, and the same for every bench)."""
        if condition not in CONDITIONS:
            raise ValueError(f"condition must be one of {', '.join(CONDITIONS)}")
        if not 1 <= size <= SOURCE:
            raise ValueError(f"size must be from 1 to {SOURCE}")
        c = CONDITIONS[condition]
        ring = size if c["hot"] else RING
        count = max(64, (1 << 20) // max(size, 64))
        args = (self.ring, ring, self.source, size)
        flags = (int(c["reread"]), int(c["fpu_owner"]))
        if not self.warm:
            self._warm()
        self._call(*args, max(16, count // 4), *flags)
        run = self._call(*args, count, *flags)
        got = self.machine.read(self.ring, min(size, 64))
        if got != bytes(range(256))[:len(got)]:
            raise AssertionError("the copy went wrong")
        return {"cycles": run.cycles / count, "l3_misses": run.caches["L3"]["misses"] / count}


_BENCHES: dict = {}
# What each threshold's bench of this process has run, in order: a bench's numbers depend on
# what it ran before (where its ring is, what its caches hold), so a sweep's worker builds
# the bench afresh and runs these first, and gets the numbers this process's bench would
_HISTORY: dict = {}


def copy_cost(size, threshold=None, condition="cold destination"):
    """CopyBench(threshold).run(size, condition), the bench built once per threshold (and
    brought up to the runs a sweep made on it elsewhere)."""
    if threshold not in _BENCHES:
        _BENCHES[threshold] = bench_after(threshold, _HISTORY.get(threshold, []))
    result = _BENCHES[threshold].run(size, condition)
    _HISTORY.setdefault(threshold, []).append((size, condition))
    return result


def bench_after(threshold, history):
    """A fresh CopyBench(threshold) that has run ``history``, [(size, condition), ...]."""
    bench = CopyBench(threshold)
    for size, condition in history:
        bench.run(size, condition)
    return bench


def bench_runs(threshold, history, runs):
    """On a fresh bench that has run ``history``: the results of ``runs`` (one sweep point)."""
    bench = bench_after(threshold, history)
    return [bench.run(size, condition) for size, condition in runs]


def copy_costs(runs, thresholds):
    """{threshold: [copy_cost(size, threshold, condition) for (size, condition) in runs]},
    each threshold's bench in a process of its own (emu.sweep: both cores, a progress bar),
    the same numbers as copy_cost gives one by one."""
    if len(set(thresholds)) != len(thresholds):
        raise ValueError(f"give each threshold once, not {list(thresholds)!r}")
    points = [{"threshold": t, "history": list(_HISTORY.get(t, [])), "runs": list(runs)}
              for t in thresholds]
    # the longest first (a bench with a history runs it again on its fresh bench), so that
    # the cores end together: each point is its own bench, its numbers the same in any order
    results = sweep.run(bench_runs, points, description="copies, a bench per threshold",
                        length=lambda p: len(p["history"]))
    for t in thresholds:
        _BENCHES.pop(t, None)           # behind the history now: rebuilt when next used
        _HISTORY.setdefault(t, []).extend(runs)
    return dict(zip(thresholds, results))


def copy_sweep(sizes, conditions=tuple(CONDITIONS)):
    """Per size and condition: cycles and L3 misses per copy with 2.6.12's copy and with
    the non-temporal one (_mmx_memcpy_nt for every size), and their ratio."""
    runs = [(size, condition) for condition in conditions for size in sizes]
    costs = copy_costs(runs, [None, 1])
    rows = []
    for (size, condition), old, nt in zip(runs, costs[None], costs[1]):
        rows.append({"condition": condition, "size": size,
                     "2.6.12 cycles": old["cycles"], "non-temporal cycles": nt["cycles"],
                     "ratio": nt["cycles"] / old["cycles"],
                     "2.6.12 L3 misses": old["l3_misses"],
                     "non-temporal L3 misses": nt["l3_misses"]})
    return pd.DataFrame(rows)


def threshold_sweep(thresholds, sizes, conditions=tuple(CONDITIONS)):
    """The patched dispatcher with its ``n < 512`` test moved to each of ``thresholds``
    (None: 2.6.12's dispatcher, never non-temporal), run at each size and condition:
    cycles and L3 misses per copy, and which path ran (L3 misses show it on a cold
    destination)."""
    runs = [(size, condition) for condition in conditions for size in sizes]
    costs = {t: iter(results) for t, results in copy_costs(runs, list(thresholds)).items()}
    rows = []
    for condition in conditions:
        for threshold in thresholds:
            for size in sizes:
                r = next(costs[threshold])
                rows.append({"condition": condition, "threshold": threshold, "size": size,
                             "cycles": r["cycles"], "l3_misses": r["l3_misses"]})
    return pd.DataFrame(rows)


def threshold_mix(sweep):
    """Per condition and threshold: the cycles per KB of a mix of copies in which every size
    of the sweep moves the same number of bytes (the mean over sizes of cycles per copy /
    size, times 1024), and that over 2.6.12's (threshold None) mix."""
    df = sweep.copy()
    df["cycles_per_kb"] = df["cycles"] * 1024 / df["size"]
    key = df["threshold"].map(lambda t: "never" if t is None or pd.isna(t) else int(t))
    mix = (df.assign(threshold=key).groupby(["condition", "threshold"], sort=False)
           ["cycles_per_kb"].mean().reset_index())
    old = mix[mix["threshold"] == "never"].set_index("condition")["cycles_per_kb"]
    mix["over 2.6.12"] = mix["cycles_per_kb"] / mix["condition"].map(old)
    return mix


def best_threshold(mix, condition):
    """The threshold of the cheapest mix under ``condition`` ("never" if 2.6.12's copy is
    the cheapest), the first of equals."""
    df = mix[mix["condition"] == condition]
    return df.loc[df["cycles_per_kb"].idxmin(), "threshold"]


def crossover(sweep, condition):
    """The smallest size of the sweep from which the non-temporal copy is faster at that
    size and every larger one, under ``condition``; None if it never is."""
    df = sweep[sweep["condition"] == condition].sort_values("size")
    best = None
    for size, ratio in zip(df["size"][::-1], df["ratio"][::-1]):
        if ratio >= 1:
            break
        best = int(size)
    return best


# ------------------------------------------------------------------ the paper's time

def cpu_time():
    """The paper's own numbers in CPU time: from each cycles listing, the total samples its
    rounding implies (the midpoint of the interval), the CPU seconds they stand for (100,000
    cycles a sample at 2.2 GHz), the copy's share; the elapsed time of the iozone run and
    the CPU seconds four CPUs had in it."""
    runs = data.load("yoshioka2005_iozone").set_index("kernel")
    rows = []
    for label in ("original", "optimized"):
        lo, hi = oprofile.listing_total("cycles", label)
        samples = (lo + hi) / 2
        copy = published_listing("cycles", label)
        copy = int(copy[copy["symbol"] == oprofile.COPY_ROUTINE[label]]["samples"].iloc[0])
        count = COUNTERS["cycles"].count
        elapsed = float(runs.loc[label, "elapsed_s"])
        rows.append({"kernel": label, "samples": samples, "copy samples": copy,
                     "CPU s": samples * count / CLOCK_HZ,
                     "copy CPU s": copy * count / CLOCK_HZ,
                     "elapsed s": elapsed, "CPU s available (4 CPUs)": 4 * elapsed,
                     "copy cycles per page": copy * count / PAGES_WRITTEN,
                     "cycles per page": samples * count / PAGES_WRITTEN})
    df = pd.DataFrame(rows).set_index("kernel")
    df["busy %"] = 100 * df["CPU s"] / df["CPU s available (4 CPUs)"]
    return df


# ------------------------------------------------------------------ the machine

def profile_table(name="pentium4"):
    """The profile's numbers as a table: part, parameter, value, whether it is an estimate
    (in the table's ``unverified`` list), and the table's source."""
    raw = load(name).raw
    rows = []

    def add(part, table, keys):
        unverified = set(table.get("unverified", ()))
        for key in keys:
            if key in table:
                rows.append({"part": part, "parameter": key, "value": table[key],
                             "estimate": key in unverified, "source": table.get("source", "")})

    for level in raw["caches"]:
        add(level["name"], level, ("size", "ways", "line", "hit_latency", "write_policy",
                                   "write_allocate"))
    for part, keys in (("memory", ("latency",)),
                       ("bus", ("bytes_per_beat", "cycles_per_beat", "partial_write_beats")),
                       ("store_buffer", ("entries",)), ("fill_buffers", ("entries",)),
                       ("prefetcher", ("streams", "ahead", "trigger_distance")),
                       ("write_combining", ("buffers", "line")),
                       ("topology", ("cores_per_chip", "chips_per_module", "chip_levels",
                                     "on_module"))):
        add(part, raw.get(part, {}), keys)
    add("costs", raw["costs"]["mnemonics"], ("lock", "mfence", "sfence", "prefetchnta",
                                             "movntq", "rep_movsl", "fxsave", "fxrstor"))
    df = pd.DataFrame(rows)
    df["value"] = df["value"].astype(str)
    return df


# ------------------------------------------------------------------ the scorecard

#: the chapter's profiled runs (notebook 02): writes per CPU profiled, and warm-up writes,
#: on one CPU and on four; the scorecard's is the mail's own machine, four CPUs, each
#: writing at the pace the mail's elapsed time implies (write_period)
#: (paced: one period of the writers' chunks, writebatch.period_writes; it was 1,000 and 250
#: writes a CPU while pdflush's one page a pause stood for the chunks)
PROFILED_RECORDS, PROFILED_WARM = writebatch.period_writes(1), 2000
SCORED_CPUS, SCORED_WARM = 4, 500
SCORED_RECORDS = writebatch.period_writes(SCORED_CPUS)
REST_CYCLES = "rest of the kernel's cycles, after / before (%)"
#: which comparison_table rows are the paper's claims, and why the model differs (the
#: chapter's account, one line each; the rest's cycles by the measured split)
SCORECARD_REASONS = {
    "copy's cycles, after / before (%)": lambda row:
        "the model's old copy waits on the 3.2 GB/s bus for its reads for ownership and "
        "write-backs (on four CPUs behind the shared journal lines too), so removing its "
        f"misses saves relatively {'more' if row.model < row.paper else 'less'} than in the "
        "mail",
    "copy's L3 misses, after / before (%)":
        "the mail's remaining misses are probably its source buffers', which nothing in "
        "the model's pauses evicts (writeback and kjournald's data loop touch the page "
        "cache's structures and the block layer its own bios and requests; no other task)",
    "rest of the kernel's cycles, after / before (%)": lambda row, split:
        rest_cycles_reason(row, split),
    "rest of the kernel's L3 misses, after / before (%)":
        "on four paced CPUs most of the rest's misses are lines another CPU wrote (the "
        "journal's, the shared metadata's), which the copy's stream does not cause; "
        "writeback's misses on the pages it reaches fall with the patch, as on one CPU, "
        "kjournald's data loop adds misses on buffers half a commit interval old, cold with "
        "either copy; the disk's interrupt, on one CPU for all four writers as 2.6.12's "
        "kirqd routes it, misses far less after the patch than before (each CPU ending its "
        "own requests, it does not), and so do the block layer's bios and requests, which "
        "pass from the interrupt's CPU to the writers' through the slab's per-CPU and "
        "shared arrays as 2.6.12's mm/slab.c hands them on: most of the rest's fall",
    "all cycles, after / before (%)":
        "the copy's saving is the model's, the rest's is not (see the rest's cycles)",
    "iozone's elapsed time gain, at most (%)":
        "an upper bound (every saved cycle on the path the disk waits for; the lower bound "
        "is no gain); the mail's own listings bound it lower still, so its gain is more "
        "than its CPU savings per CPU explain",
}


def rest_cycles_reason(row, split):
    """Why the rest's cycles differ, measured: ``split`` is restsplit.split_summary of the
    scored runs (points of each rest before the patch; the mail's bounded by its listings)."""
    (sl_lo, sl_hi), (be_lo, be_hi) = split["mail_spin_lock"], split["mail_beyond"]
    o_lo, o_hi = split["mail_others"]
    return (f"the rest of the model's kernel changes by {row.model - 100:+.1f}%, the mail's "
            f"by {-split['mail_fall']:+.1f}%; by function (each rest's points before the "
            f"patch, the mail's bounded by its listings): _spin_lock, all lock work, falls "
            f"{sl_lo:.1f} to {sl_hi:.1f} points in the mail and {split['model_spin_lock']:.2f} "
            f"on the model, {_spinning(split)}; "
            f"beyond _spin_lock the mail's rest falls {be_lo:.1f} to {be_hi:.1f} points, the "
            f"model's {split['model_beyond']:.1f} (journal_add_journal_head, a bit spin lock "
            f"inline, {split['mail_add_jh']:.1f} against {split['model_add_jh']:.2f}; the "
            f"functions neither listing names {o_lo:.1f} to {o_hi:.1f} against the model's "
            f"other functions' {split['model_others']:.1f})")


def _spinning(split):
    """The model's lock spinning in words: its share of the rest's cycles, or why it is not
    read (spins.py reads the loops of the build without CONFIG_PREEMPT only)."""
    if split["model_spin_before"] is None:
        return ("whose lock spinning is not read here (the CONFIG_PREEMPT build's lock loops "
                "are not the shape emu.papers.yoshioka2005.spins reads)")
    return (f"whose lock spinning is {split['model_spin_before']:.2f}% of the rest's cycles "
            f"before the patch and {split['model_spin_after']:.2f}% after")


#: The shares of the listings (quantities, not effects): the copy's part of each count
def share_reason(row):
    """Why the copy's shares differ (the row unused: the same for each share)."""
    chunk = writebatch.mail_chunk_pages(SCORED_CPUS)["chunk_pages"]
    return ("the model's write path is the mail's iozone reduced to its kernel work "
            f"(ext3's write path, the throttled writers' writeback, {chunk:,} pages at a "
            "time in their own write() once a period of as many writes, kjournald's commit "
            "and the log's "
            "checkpoints as guest code, the block layer's bios, requests and merges, the "
            "SCSI driver and the disk's interrupt with them, the timer tick): no other "
            "task, no scheduler's switch, no timer's function, so the copy's share of it "
            "differs")
def busy_reason(row):
    """Why the model's CPUs are busier or idler than the mail's, from the row."""
    return (f"the model's write alone costs {'more' if row.model > row.paper else 'fewer'} "
            "cycles than the mail's whole kernel per page (its locked instructions and the "
            "four CPUs' shared journal lines are much of them)")
PAGES = {"patch": "notebooks/yoshioka2005/01-the-patch",
         "profile": "notebooks/yoshioka2005/02-iozone-profile"}
#: Published numbers of the chapter's data that are context, not results
CONTEXT = {
    "yoshioka2005_oprofile_setup": "oprofile's settings",
    "yoshioka2005_top5_cycles": "the listings behind the claims (their copy rows, shares "
                                "and totals are the claims)",
    "yoshioka2005_top5_memory": "as above",
    ("yoshioka2005_iozone", "runs"): "how many runs",
    ("yoshioka2005_text_numbers", "original"): "the listings' samples restated in the text "
                                               "(the claims are their ratios and shares)",
    ("yoshioka2005_text_numbers", "optimized"): "as above",
}


def claims(profiles=None):
    """The chapter's claims for the scorecard (emu.present.claims): every row of comparison_table
    (the changes are effects, the shares and the CPUs' busy time quantities), each with its
    reason, iozone's elapsed time gain as the bound a paced run gives; ``profiles`` as
    comparison_table takes them (scored_profiles when not given: the mail's four CPUs)."""
    if profiles is None:
        profiles = scored_profiles()
    table = comparison_table(profiles).set_index("claim")
    text = data.load("yoshioka2005_text_numbers").set_index(["quantity", "kernel"])["value"]
    stated = {"copy's cycles, after / before (%)": (
                  text["cycle samples of the copy routine after/before", "optimized/original"],),
              "copy's L3 misses, after / before (%)": (
                  text["L3 miss samples of the copy routine after/before",
                       "optimized/original"],)}
    iozone = data.load("yoshioka2005_iozone").set_index("kernel")["elapsed_s"]
    stated["iozone's elapsed time gain, at most (%)"] = tuple(iozone)
    out = []
    for claim in table.index:
        effect = claim in SCORECARD_REASONS
        row = table.loc[claim]
        reason = (SCORECARD_REASONS[claim] if effect else
                  busy_reason if claim.startswith("CPUs busy") else share_reason)
        if claim == REST_CYCLES:
            reason = reason(row, restsplit.split_summary(profiles))
        elif callable(reason):
            reason = reason(row)
        out.append(Claim(
            "Yoshioka 2005", claim.replace(" (%)", ""), published=table.loc[claim, "paper"],
            emulated=table.loc[claim, "model"], unit="%", digits=1,
            kind=EFFECT if effect else QUANTITY,
            neutral=(0 if "elapsed" in claim else 100) if effect else None,
            published_from=stated.get(claim, ()), page=PAGES["profile"],
            source=("the mail, after listing 4" if "elapsed" in claim else
                    "the mail's cycle listings and elapsed times" if "busy" in claim else
                    "the oprofile listings of the mail"),
            reason=reason))
    return out


def scored_profiles():
    """The scorecard's runs: both kernels on four CPUs, paced (SCORED_*)."""
    return kernel_profiles(records=writebatch.period_writes(SCORED_CPUS), warm=SCORED_WARM,
                           cpus=SCORED_CPUS, paced=True)
