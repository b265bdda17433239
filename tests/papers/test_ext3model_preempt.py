"""CONFIG_PREEMPT as a configuration of the guest kernel (ext3model.config.PREEMPT): the lock
functions of routines/x86/spinlock_2612.S and the inline preempt_disable/preempt_enable users,
counted by hand both ways, and one write's path difference explained by hand."""
from collections import Counter

import pytest
from unicorn import UC_HOOK_CODE
from unicorn.x86_const import UC_X86_REG_ESP

from emu.context import routine
from emu.hw import estimates
from emu.isa.assemble import assemble
from emu.papers.yoshioka2005 import ext3model
from emu.papers.yoshioka2005.ext3model import config, program
from emu.papers.yoshioka2005.ext3model.structures import BH_BITS, TI, TSK
from emu.run.machine import Machine


def _locks(preempt):
    m = Machine("pentium4")
    src = (f".equ CONFIG_PREEMPT, {preempt}\n.equ TI_PREEMPT, {TI['PREEMPT']}\n"
           f".equ TI_FLAGS, {TI['FLAGS']}\n" + routine("x86/spinlock_2612.S").read_text())
    m.load(assemble(src, "x86", m.code_start, "spinlock_2612.S"))
    lock = m.alloc(64)
    m.write(lock, bytes([1]))                   # free
    return m, lock


def _preempt_count(m):
    return m.read_word((m.uc.reg_read(UC_X86_REG_ESP) & -8192) + TI["PREEMPT"])


# (lock function, its unlock, instructions without and with CONFIG_PREEMPT, uncontended):
# _spin_lock: movl, lock decb, jns, ret (4); with it preempt_disable's movl, andl, incl,
# pushl edx, movl, xorl, xchgb, testb, jle, popl, ret (11). _spin_unlock: movl, movb, ret
# (3); with it preempt_enable's movl, andl, decl, testl, jz (8). _spin_lock_irqsave: movl,
# pushfl, popl, cli, lock decb, jns, ret (7); with it pushl x2, movl, 3, pushfl, popl, cli,
# xorl, xchgb, testb, jg, movl, popl x2, ret (17); _spin_unlock_irqrestore: movl, movb,
# pushl, popfl, ret (5), + 5.
PAIRS = [("_spin_lock", "_spin_unlock", (4, 3), (11, 8)),
         ("_spin_lock_irqsave", "_spin_unlock_irqrestore", (7, 5), (17, 10))]


@pytest.mark.parametrize("preempt", [0, 1])
@pytest.mark.parametrize("lock_fn, unlock_fn, plain, preemptible", PAIRS)
def test_a_lock_and_unlock_pair_counted_by_hand(preempt, lock_fn, unlock_fn, plain,
                                               preemptible):
    m, lock = _locks(preempt)
    taken = m.call(lock_fn, lock)
    assert m.read(lock, 1) == b"\x00"           # held
    assert _preempt_count(m) == preempt         # preempt_disable only with CONFIG_PREEMPT
    flags = taken.return_value if lock_fn.endswith("irqsave") else 0
    freed = m.call(unlock_fn, lock, flags)
    assert m.read(lock, 1) == b"\x01"
    assert _preempt_count(m) == 0
    assert (taken.instructions, freed.instructions) == (preemptible if preempt else plain)


def test_the_nominal_kernel_is_not_preemptible_and_assembles_as_before():
    """The estimate's nominal value is 0; the program at 0 holds no preemption code (the
    macros expand to nothing), so it is the program of the kernel before the option."""
    assert config.PREEMPT[1:4] == (0, 0, 1)
    assert config.preempt() == 0
    with estimates.moved({config.PREEMPT[0]: 1}):
        assert config.preempt() == 1
    plain = assemble(program.source("2.6.12", 0), "x86", 0x100000, "plain")
    preemptible = assemble(program.source("2.6.12", 1), "x86", 0x100000, "preemptible")
    assert "preempt_schedule" not in plain.symbols and "preempt_schedule" in preemptible.symbols
    assert plain.code != preemptible.code


def _counted_write(preempt):
    """One steady write on one CPU: its Run and how often each address ran."""
    k = ext3model.Kernel("2.6.12", cpus=1, max_records=64, preempt=preempt)
    k.write_records(20)
    counts = Counter()
    uc = k.machine.uc
    hook = uc.hook_add(UC_HOOK_CODE, lambda u, address, size, data: counts.update((address,)))
    uc.ctl_flush_tb()                           # the hook into code translated before it
    run = k.machine.call(*k.calls(1)[0])
    uc.hook_del(hook)
    return k, run, counts


#: each function's instructions more with CONFIG_PREEMPT on its path (uncontended, need_resched
#: clear): the lock functions above (_spin_lock_irq: 5 -> 16, its irqsave less the flags' movl;
#: _write_lock_irq 5 -> 14: its trylock lock subl, jz; _read_lock_irq 5 -> 16: lock decl,
#: movl, testl, jns), every unlock preempt_enable's 5; kunmap_atomic preempt_check_resched's
#: testl, jz; get_cpu()/put_cpu() users (percpu_counter_mod, buffered_rmqueue, free_hot_page,
#: balance_dirty_pages_ratelimited) and add_to_page_cache's radix_tree_preload/_end: an incl
#: (thread_info already in a register for smp_processor_id) and preempt_enable's 5
EXTRA = {"_spin_lock": 7, "_spin_unlock": 5, "_spin_lock_irqsave": 10,
         "_spin_unlock_irqrestore": 5, "_spin_lock_irq": 11, "_spin_unlock_irq": 5,
         "_write_lock_irq": 9, "_write_unlock_irq": 5, "_read_lock_irq": 11,
         "_read_unlock_irq": 5, "kunmap_atomic": 2, "percpu_counter_mod": 6,
         "buffered_rmqueue": 6, "free_hot_page": 6, "balance_dirty_pages_ratelimited": 6,
         "add_to_page_cache": 6}
#: a bit spin lock (jbd_lock_bh_state, jbd_lock_bh_journal_head): preempt_disable's 3 before
#: its lock btsl, preempt_enable's 5 after its lock btrl
BIT_LOCK_EXTRA = 8


def test_one_writes_path_difference_explained_by_hand():
    plain_k, plain, plain_counts = _counted_write(0)
    k, preemptible, counts = _counted_write(1)
    calls = {name: plain_counts[plain_k.sym[name]] for name in EXTRA}
    assert calls == {name: counts[k.sym[name]] for name in EXTRA}     # the same path
    assert calls["_spin_lock"] > 0 and calls["kunmap_atomic"] == 1
    texts = plain_k.program.instruction_texts()
    bit_locks = sum(n for address, n in plain_counts.items()
                    if texts.get(address) in {f"lock btsl ${bit:#x}, (%{r})"
                                              for bit in (BH_BITS["State"], BH_BITS["JournalHead"])
                                              for r in ("eax", "ebx", "esi")})
    assert bit_locks > 0
    by_hand = sum(EXTRA[name] * n for name, n in calls.items()) + BIT_LOCK_EXTRA * bit_locks
    assert preemptible.instructions - plain.instructions == by_hand
    assert plain_k._read(plain_k.ctx[0]["stack"] + TI["PREEMPT"]) == 0
    assert k._read(k.ctx[0]["stack"] + TI["PREEMPT"]) == 0         # every disable enabled


def _preempt_counts(k):
    """preempt_count of every thread_info the Kernel built: its writers', pdflush's (on
    whose stack kjournald's and the checkpoint's work runs too) and the idle tasks'."""
    infos = [c["stack"] for c in k.ctx] + [k._read(t + TSK["THREAD_INFO"]) for t in k.pdflush]
    return [k._read(ti + TI["PREEMPT"]) for ti in infos + list(k.idle_ti)]


def test_a_commit_and_a_checkpoint_leave_every_preempt_count_at_zero():
    """With CONFIG_PREEMPT on, kjournald's whole commit and the log's checkpoint (their bit
    spin locks, trylocks and the lock functions) take as many preempt_disable as
    preempt_enable, and each does more work than without it."""
    instructions = {}
    for preempt in (0, 1):
        k = ext3model.Kernel("2.6.12", cpus=1, max_records=64, preempt=preempt)
        k.write_records(4)
        runs = []

        def measure(run):
            result = run()
            runs.append(result.instructions)
            return result.return_value
        k.whole_commit(measure=measure)
        k.checkpoint(measure=measure)
        assert _preempt_counts(k) == [0] * len(_preempt_counts(k))
        instructions[preempt] = sum(runs)
    assert instructions[1] > instructions[0]
