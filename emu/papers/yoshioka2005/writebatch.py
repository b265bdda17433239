"""Writeback's batching: what the mail's throttled writers write back at a time, from
2.6.12.1's arithmetic, and the model's cost per page of the inode walk (the writer's
chunk, guest code, which the paced runs now run) against the per-page stand-in the paced
runs used before it (writeback_page on pdflush's stack, one page a pause)."""
from __future__ import annotations

from ...hw import estimates
from . import ext3model


def mail_chunk_pages(cpus=4):
    """The pages a throttled writer of the mail's run writes back at a time:
    sync_writeback_pages() of set_ratelimit's ratelimit_pages at the machine's memory
    (ext3model.MEMORY_MB, an estimate) and ``cpus`` CPUs, in whole pagevecs."""
    memory = round(estimates.value(ext3model.MEMORY_MB[0], ext3model.MEMORY_MB[1]))
    ratelimit = ext3model.ratelimit_pages(memory, cpus)
    return {"ratelimit": ratelimit, "write_chunk": ext3model.sync_writeback_pages(ratelimit),
            "chunk_pages": ext3model.writer_chunk_pages(ratelimit)}


def period_writes(cpus=4):
    """Writes per CPU in one period of the throttled writers' chunks at the machine's memory
    (ext3model.MEMORY_MB) and ``cpus`` CPUs: ext3model.chunk_period, a chunk of
    writer_chunk_pages every that many writes.

    Why a paced run is a whole period (decided before any run of it was looked at, and not
    by which numbers come nearer the mail's): a chunk comes once a period and cools the
    caches of the writes after it for as long as they take to turn the L3 over, so a window
    shorter than the period stands either for the writes just after a chunk or for those
    far from one, and weighing the chunk's own cost by the window's share of the period
    would leave its cache effects on the window's writes unweighed. A run of whole periods
    holds each writer's chunk once, at its place, and every write between, with nothing
    weighed: the steady state's mean. What it costs: a run is that many writes per CPU per
    counter, and one period more to warm the disk's queue."""
    return ext3model.chunk_period(mail_chunk_pages(cpus)["ratelimit"])


def walk_against_stand_in(kernel="2.6.12", pages=140, written=300):
    """On one CPU, after ``written`` writes, the first ``pages`` pages of the file written
    back two ways on two identical kernels: by the writer's walk (Kernel.throttled_writeback,
    pages a multiple of the pagevec's 14) and a page at a time by writeback_page on
    pdflush's stack (the stand-in; ext3model.Kernel(writer_chunks=False)). Returns {way:
    {"instructions", "cycles"} per page}."""
    out = {}
    for way in ("walk", "stand_in"):
        k = ext3model.Kernel(kernel, cpus=1, max_records=written + 16)
        k.write_records(written)
        if way == "walk":
            runs, done = k.throttled_writeback(pages, measure=lambda run: run())
            if done != pages:
                raise RuntimeError(f"the walk wrote {done} pages, not {pages}")
            runs = [runs]
        else:
            mapping = k.files[0]["mapping"]
            runs = [k.machine.call("on_task_stack", k.pdflush[0], k.sym["writeback_page"],
                                   mapping, ext3model.FIRST_INDEX + i) for i in range(pages)]
        out[way] = {"instructions": sum(r.instructions for r in runs) / pages,
                    "cycles": sum(r.cycles for r in runs) / pages}
    return out
