"""Writeback's batching: what the mail's throttled writers write back at a time, from
2.6.12.1's arithmetic, and the model's cost per page of the inode walk (the writer's
chunk, guest code) against the paced runs' per-page stand-in (pdflush_writeback)."""
from __future__ import annotations

from ...hw import estimates
from . import ext3model


def mail_chunk_pages(cpus=4):
    """The pages a throttled writer of the mail's run writes back at a time:
    sync_writeback_pages() of set_ratelimit's ratelimit_pages at the machine's memory
    (ext3model.MEMORY_MB, an estimate) and ``cpus`` CPUs, in whole pagevecs."""
    memory = round(estimates.value(ext3model.MEMORY_MB[0], ext3model.MEMORY_MB[1]))
    ratelimit = ext3model.ratelimit_pages(memory, cpus)
    return {"ratelimit": ratelimit, "write_chunk": ratelimit + ratelimit // 2,
            "chunk_pages": ext3model.writer_chunk_pages(ratelimit)}


def walk_against_stand_in(kernel="2.6.12", pages=140, written=300):
    """On one CPU, after ``written`` writes, the first ``pages`` pages of the file written
    back two ways on two identical kernels: by the writer's walk (Kernel.throttled_writeback,
    pages a multiple of the pagevec's 14) and a page at a time by pdflush_writeback (the
    paced runs' stand-in). Returns {way: {"instructions", "cycles"} per page}."""
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
            runs = [k.machine.call("pdflush_writeback", k.pdflush[0], mapping,
                                   ext3model.FIRST_INDEX + i) for i in range(pages)]
        out[way] = {"instructions": sum(r.instructions for r in runs) / pages,
                    "cycles": sum(r.cycles for r in runs) / pages}
    return out
