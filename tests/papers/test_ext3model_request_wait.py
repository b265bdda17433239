"""A writer's wait for a free request as 2.6.12.1 has it (routines/x86/blk_wait_2612.S,
drivers/block/ll_rw_blk.c 1803-1995): get_request refusing a full queue to all but a
batcher, the wake-up of a sleeper by a freed request, and a throttled writer's walk that
sleeps in get_request_wait and is resumed (ext3model/sleep.py)."""
import pytest

from emu.hw import estimates

from emu.papers.yoshioka2005 import ext3model as e

WRITE = 1
TASK_UNINTERRUPTIBLE = 2
FULL_BIT = 3 + WRITE                    # QUEUE_FLAG_WRITEFULL
CONGESTED_BIT = 1                       # BDI_write_congested


def _kernel():
    k = e.Kernel("2.6.12", cpus=1, max_records=64)
    return k, k.ctx[0]["task"]


def _count(k):
    return k._read(k.queue + e.Q["RQ_COUNT"] + 4 * WRITE)


def _ioc(k, task):
    return k._read(task + e.TSK["IO_CONTEXT"])


def _get_request(k, task):
    """get_request(q, WRITE) on the writer's stack (current: the writer, its io_context)."""
    return k.machine.call("on_task_stack", task, k.sym["get_request"], k.queue, WRITE)


def test_the_queue_parameters_are_the_sources():
    k, task = _kernel()
    q = k.queue
    # blk_queue_congestion_threshold for nr_requests 128: on 128 - 16 + 1, off 128 - 16 - 8 - 1
    assert [k._read(q + e.Q[f]) for f in ("NR_REQUESTS", "CONGESTION_ON", "CONGESTION_OFF",
                                           "NR_BATCHING")] == [128, 113, 103, 32]
    assert k._read(q + e.Q["BDI"]) == k.bdi
    ioc = _ioc(k, task)
    assert k._read(ioc + e.IOC["REFCOUNT"]) == 1 and k._read(task + e.TSK["HARNESS"]) == 1


def test_get_request_refuses_a_full_queue_to_one_not_batching():
    k, task = _kernel()
    k._word(k.queue + e.Q["RQ_COUNT"] + 4 * WRITE, 127)
    k._word(k.queue + e.Q["QUEUE_FLAGS"], 1 << FULL_BIT)        # full already
    run = _get_request(k, task)
    assert run.return_value == 0 and _count(k) == 127
    # on_task_stack: pushl, movl, movl, movl, pushl x3, call; after: addl, popl, movl,
    # popl, ret (13). get_request: pushl x2, movl, testl, jnz (5); pushl, call,
    # _spin_lock_irq's movl, cli, lock decb, jns, ret, addl (8); movl, movl, incl, cmpl,
    # jae (5): 18. get_request_full: pushl, call, get_io_context's movl, andl, movl, testl,
    # jz, movl, testl, jz, lock incl, ret, popl (13); leal, btl, jc (3); call,
    # ioc_batching's pushl, movl, cmpl, je, testl, jle, popl, cmpl, ret (10); jz (1); call,
    # put_io_context's lock decl, jz, ret (4); pushl, call, _spin_unlock_irq's movl, movb,
    # sti, ret, addl (7); xorl, popl, popl, ret (4): 42
    assert run.instructions == 13 + 18 + 42
    ioc = _ioc(k, task)
    assert k._read(ioc + e.IOC["REFCOUNT"]) == 1                # put back
    assert k._read(k.queue + e.Q["LOCK"]) & 0xFF == 1           # released


def test_the_request_that_fills_the_queue_makes_its_taker_a_batcher():
    k, task = _kernel()
    q, ioc = k.queue, _ioc(k, task)
    k._word(q + e.Q["RQ_COUNT"] + 4 * WRITE, 127)                # the next fills it
    k._word(k.sym["jiffies"], 5000)
    assert _get_request(k, task).return_value != 0
    assert _count(k) == 128
    assert k._read(q + e.Q["QUEUE_FLAGS"]) & (1 << FULL_BIT)
    assert k._read(k.bdi + e.BDI["STATE"]) & (1 << CONGESTED_BIT)
    # ioc_set_batching: nr_batch_requests = nr_batching (32), last_waited = jiffies; one
    # taken: 31 left
    assert k.io_context_batch(0) == (31, 5000)
    # a batcher takes requests past nr_requests, while its batch lasts (BLK_BATCH_TIME,
    # HZ / 50 = 20 jiffies) and has requests
    assert _get_request(k, task).return_value != 0 and _count(k) == 129
    k._word(k.sym["jiffies"], 5000 + 20)
    assert _get_request(k, task).return_value == 0 and _count(k) == 129


def test_a_freed_request_wakes_one_sleeper():
    """__wake_up_waiters on rl->wait[WRITE] with the writer's entry on it, as
    get_request_wait leaves it: try_to_wake_up sets it running on its CPU's runqueue and
    TIF_NEED_RESCHED on that CPU's idle task, and the entry leaves the queue."""
    k, task = _kernel()
    m, q = k.machine, k.queue
    head = q + e.Q["RQ_WAIT"] + 12 * WRITE
    entry = m.alloc(20, align=4)
    m.write(entry, e._words(1, task, k.sym["autoremove_wake_function"], head + 4, head + 4))
    k._poke(head + 4, e._words(entry + 12, entry + 12))
    rq = k.tick_areas[0] + e.TK["RQ"]
    k._word(task + e.TSK["STATE"], TASK_UNINTERRUPTIBLE)
    k._word(task + e.TSK["ARRAY"], 0)
    k._poke(rq + e.RQS["NR_RUNNING"], e._words(0))
    k._word(rq + e.RQS["NR_UNINTERRUPTIBLE"], 1)
    run = m.call("__wake_up_waiters", head, 3, 1, 0)
    assert k._read(task + e.TSK["STATE"]) == 0
    assert k._read(task + e.TSK["ARRAY"]) == k._read(rq + e.RQS["ACTIVE"])
    assert k._read(rq + e.RQS["NR_RUNNING"]) == 1
    assert k._read(rq + e.RQS["NR_UNINTERRUPTIBLE"]) == 0
    assert k._resched(0)
    assert k._read(head + 4) == head + 4 and k._read(entry + 12) == entry + 12
    # __wake_up_waiters: pushl x4, movl, pushl, call, _spin_lock_irqsave's movl, pushfl,
    # popl, cli, lock decb, jns, ret, addl, pushl, movl, movl (18); the entry: leal, cmpl,
    # je, movl, leal, pushl x5, call (11); autoremove_wake_function: pushl, movl, pushl
    # x3, call (6); try_to_wake_up: pushl x3, movl x4, addl, pushl, call,
    # _spin_lock_irqsave's 7, addl, pushl, xorl, movl, testl, jz, cmpl, jne, cmpl, jne,
    # decl, incl, movl, movl, movl, movl, cmpl, jge, movl, lock btsl, movl, movl (39);
    # out: pushl, call, _spin_unlock_irqrestore's movl, movb, pushl, popfl, ret, addl,
    # movl, popl x3, ret (13); back: addl, testl, jz, pushl, leal, call,
    # wait_list_del_init's movl x6, ret, popl, popl, ret (16); addl, popl, testl, jz,
    # testl, jz, decl, jz: nr_exclusive spent, the walk ends (8); pushl, call,
    # _spin_unlock_irqrestore's 5, addl, popl x4, ret (13)
    assert run.instructions == 18 + 11 + 6 + 39 + 13 + 16 + 8 + 13


def _small_queue_run(cpus=1):
    """``cpus`` writers' chunks of 84 pages (ratelimit 48) into a queue of 8 requests of
    one page each (disk_delay one write a request), in one period of paced writes."""
    k = e.Kernel("2.6.12", cpus=cpus, cores=max(2, cpus), max_records=400,
                 writer_chunks=True)
    k.write_records(200)
    k.ratelimit = 48
    nr = 8                                  # on: min(8 - 1 + 1, 8); off: 8 - 1 - 0 - 1
    k._poke(k.queue + e.Q["NR_REQUESTS"], e._words(nr, 8, 6))
    k._poke(k.queue + e.Q["MAX_SECTORS"], e._words(8, 1, 1))   # a page a request
    k.request_pages, k.disk_delay = 1, 1
    runs = k.paced_writes(e.chunk_period(48), 300_000)
    return k, runs


def test_a_throttled_writer_sleeps_on_a_full_queue_and_finishes_its_chunk():
    k, runs = _small_queue_run()
    # 84 pages, 84 requests: 7 below the limit, the 8th fills the queue and makes the
    # writer a batcher of 32 (39 in all), then it sleeps; woken, a batcher again: 32 more
    # (71), sleeps; woken: the last 13, 19 of its batch left
    assert k.chunk_pages == [84] and k.sleeps == [2] and k.most_queued == 39
    assert k.io_context_batch(0)[0] == 19
    # every request the disk's (none left on the queue's list), those not yet ended in
    # flight: the last chunk's, at the period's end
    assert k._requests() == [] and len(k._inflight[0]) == k._queued()
    assert not k._asleep(k.ctx[0]["task"])
    # a sleep ends when the queue is below nr_requests again (freed_request wakes a
    # waiter only then: 7 of 8): the first when 32 of its 39 requests are written, one a
    # write period from the write the time had reached (31 to 32 periods); the second
    # when the first's last 7 and 25 of its own 32 are (24 to 25 periods)
    assert (31 + 24) * 300_000 <= k.sleep_cycles[0] <= (32 + 25 + 1) * 300_000


def test_another_cpus_interrupt_wakes_a_sleeping_writer_at_its_clock():
    """Two writers' chunks at once (STAGGER 0) into the small queue: both sleep; CPU 1's
    writer is woken by the disk's interrupts, which CPU 0 takes (IRQ_CPU): its halt ends
    at CPU 0's clock (the reschedule IPI), not at its next tick."""
    with estimates.moved({e.STAGGER[0]: 0.0}):
        k, runs = _small_queue_run(cpus=2)
    assert k.chunk_pages == [84, 84]
    assert k.sleeps[0] >= 1 and k.sleeps[1] >= 1
    assert k.ipi_wakes[0] == 0 and k.ipi_wakes[1] >= 1
    assert not any(k._asleep(c["task"]) for c in k.ctx)
    # the queue's write-congested bit is set from nr_congestion_on and cleared below off
    # (hysteresis: between the two it stays as it was)
    congested = bool(k._read(k.bdi + e.BDI["STATE"]) & (1 << CONGESTED_BIT))
    assert (k._queued() < 6 and not congested) or (k._queued() >= 8 and congested) or \
        6 <= k._queued() < 8


def test_kjournald_calls_run_on_a_task_of_their_own_near_a_full_queue():
    """Below nr_congestion_off a kjournald call runs on the core's stack, as before (no
    task made); from there on, on a kjournald task of the CPU's own (call_on_task), so
    that get_request finds a current task and its io_context; on the core's stack, whose
    thread_info names no task, the congested path faults."""
    k, _ = _kernel()
    q = k.queue
    k._word(q + e.Q["RQ_COUNT"] + 4 * WRITE, 10)
    assert k._kjournald_call(k.machine, 0, "get_request", q, WRITE).return_value != 0
    assert not hasattr(k, "_kjournald_tasks")
    k._word(q + e.Q["RQ_COUNT"] + 4 * WRITE, 113)
    with pytest.raises(Exception, match="get_io_context|ud2|Invalid"):
        k.machine.call("get_request", q, WRITE)
    k._word(q + e.Q["LOCK"], e.SPIN_FREE)           # the faulted call held the queue lock
    k._word(q + e.Q["RQ_COUNT"] + 4 * WRITE, 113)
    run = k._kjournald_call(k.machine, 0, "get_request", q, WRITE)
    assert run.return_value != 0 and _count(k) == 114
    kjournald = k._kjournald_tasks[0]
    assert k._read(kjournald + e.TSK["HARNESS"]) == 1 and not k._asleep(kjournald)
    assert k._read(k.bdi + e.BDI["STATE"]) & (1 << CONGESTED_BIT)
