"""Where the kernel's words sit: 2.2.0's data image, object by object (issue 30).

The guest code of the entry, schedule() and the pipe paths reads and writes a dozen kernel
variables (``entry.KDATA_WORDS``). Linux links them where their object files put them
(arch/ppc/vmlinux.lds at f6cce5dae: ``.data`` page-aligned after the text, then
``.data.cacheline_aligned``, the init and platform sections, then ``.bss`` with COMMON
last), in the link order of the top Makefile (head.o, init/, then CORE_FILES with
arch/ppc/Makefile's arch/ppc/kernel, arch/ppc/mm, arch/ppc/lib first, then kernel/, mm/,
fs/, ...). egcs emits an object's initialised globals in definition order (a global
initialised to 0 is .data, not .bss: -fzero-initialized-in-bss is gcc 3.3's) and leaves an
uninitialised one COMMON, placed by the linker.

What the sources give (2.2.0, f6cce5dae), each variable's object, section and offset in
its object's section:

* arch/ppc/mm/fault.c:44 ``htab_reloads`` .data +0 (the first definition without
  CONFIG_XMON/KGDB; htab_evicts +4 after it: the model's count of kernel HPTEs,
  ``KERNEL_RELOADS``, the same counter on Linux, takes that slot);
* kernel/sched.c:58 ``tq_scheduler`` .data +20 (securebits, tick, tickadj, tq_timer,
  tq_immediate before it, 4 bytes each; xtime between is COMMON) and sched.c:98 ``kstat``
  at +2148 (time_state .. jiffies: 19 words from +24, task[NR_TASKS = 512] at +100),
  ``context_swtch`` at 652 in it (include/linux/kernel_stat.h, NR_CPUS 1, DK_NDRIVE 4,
  NR_IRQS 128 of include/asm-ppc/irq.h:23): +2800;
* kernel/sched.c:579 ``aligned_data`` in .data.cacheline_aligned, prevstate at +4;
* kernel/fork.c:27 ``nr_running`` .data +4 (nr_tasks before it);
* kernel/softirq.c:24-25 ``bh_active`` +0, ``bh_mask`` +4 (.data; bh_mask_count before
  them is COMMON);
* COMMON in .bss: sched.c:51 ``xtime`` (aligned 16), arch/ppc/kernel/irq.c:101-108
  ``local_bh_count``, ``local_irq_count``, ``lost_interrupts``.

What they do not give: the bytes before each object in its section (the sizes of every
object linked before it), nor the order ld gives COMMON symbols. So each object's place
in its page is an estimate, ``kernel:kdata.<area>``, with the whole page as its range. The
nominal places spread the areas over the page in link order, no two on one L1D set: an
assumption (a real image may put any two together), which the range moves. Each area
takes pages of its own, consecutive in link order: objects this far apart in a ~100 KB
.data do not share a page, but how many pages lie between them (which TLB sets their pages
fall in, without BATs) is not derived either. 2.1.51
(a6d938f4f) has the same objects (fork.c:33, softirq.c:30-31, sched.c:103) plus the global
``need_resched`` (sched.c:80, .data in sched.o) and lost_interrupts initialised (irq.c:39,
.data), and its sched.c's .data is shorter (``PLACES_2_1_51``); the other offsets are taken
as 2.2.0's.
"""
from __future__ import annotations

from ..hw import estimates

PAGE = 4096
LINE = 32
#: the areas in link and section order: (name, what, bytes it spans from its start)
AREAS = (
    ("irq_data", "arch/ppc/kernel/irq.o .data (2.1.51's lost_interrupts)", 4),
    ("fault", "arch/ppc/mm/fault.o .data", 8),
    ("sched", "kernel/sched.o .data", 2804),
    ("fork", "kernel/fork.o .data", 8),
    ("softirq", "kernel/softirq.o .data", 8),
    ("sched_aligned", "kernel/sched.o .data.cacheline_aligned", 32),
    ("irq_bss", "arch/ppc/kernel/irq.o COMMON (.bss)", 12),
    ("xtime", "kernel/sched.o COMMON xtime (.bss)", 8),
)
#: word -> (area, offset in the area), as the module notes derive them
PLACES = {
    "HTAB_RELOADS": ("fault", 0), "KERNEL_RELOADS": ("fault", 4),
    "TQ_SCHEDULER": ("sched", 20), "CONTEXT_SWTCH": ("sched", 2800),
    "EVENT": ("sched", 80),     # sched.c:80, after time_state .. time_adjust_step (14 words)
    "NEED_RESCHED": ("sched", 24),          # 2.1.51's only (PLACES_2_1_51); 2.2.0 has none
    "NR_RUNNING": ("fork", 4),
    "BH_ACTIVE": ("softirq", 0), "BH_MASK": ("softirq", 4),
    "PREVSTATE": ("sched_aligned", 4),
    "BH_COUNT": ("irq_bss", 0), "IRQ_COUNT": ("irq_bss", 4), "LOST_IRQS": ("irq_bss", 8),
    "XTIME": ("xtime", 0),
}
#: 2.1.51 (a6d938f4f): sched.c's .data securelevel, tick, tickadj, time_state ..
#: time_adjust_step (14), need_resched at +68; event .. last_task_used_math (6), task[512]
#: from +96, kstat at +2144, its context_swtch at 256 (3 + 20 + 4 + NR_IRQS 32 + 5 words:
#: include/linux/kernel_stat.h, include/asm-ppc/irq.h:6): +2400; irq.c:39 lost_interrupts
#: initialised, irq.o's .data +0; irq.c:41 local_irq_count COMMON (EVENT is read by
#: 2.2.0's filemap_22.S only: not placed for 2.1.51)
PLACES_2_1_51 = {**PLACES, "NEED_RESCHED": ("sched", 68), "CONTEXT_SWTCH": ("sched", 2400),
                 "LOST_IRQS": ("irq_data", 0), "IRQ_COUNT": ("irq_bss", 0)}
WHY = ("the bytes of the section before the object (the sizes of every object linked "
       "before it) and ld's order of COMMON symbols are not derived: no link map of 2.2.0; "
       "any line of the page")


def nominal():
    """{area: its nominal offset in its page}: spread over the page in link order, each at
    the middle of an equal share (none on set 0, where the page-aligned task unions and fd
    arrays are: a choice of 1 set in 128, made so no nominal coincidence sits there)."""
    step = PAGE // len(AREAS)
    return {name: (n * step + step // 2) // LINE * LINE for n, (name, _, _) in enumerate(AREAS)}


def estimate_ranges():
    """The areas' places as estimates: [(name, nominal, low, high, why)]."""
    starts = nominal()
    return [(f"kernel:kdata.{name}", starts[name], 0, PAGE - LINE * -(-span // LINE), WHY)
            for name, _, span in AREAS]


def place(machine, words, version="2.2.0"):
    """Allocate the areas (each in pages of its own, in link order) and return {word:
    address} for ``words`` as ``version``'s image has them."""
    places = PLACES_2_1_51 if version == "2.1.51" else PLACES
    offsets = {name: int(estimates.value(f"kernel:kdata.{name}", start))
               for name, start in nominal().items()}
    pages = [-(-(offsets[name] + span) // PAGE) for name, _, span in AREAS]
    base = machine.alloc(PAGE * sum(pages), align=PAGE)
    starts, at = {}, base
    for (name, _, _), n in zip(AREAS, pages):
        starts[name] = at + offsets[name]
        at += n * PAGE
    return {word: starts[places[word][0]] + places[word][1] for word in words}
