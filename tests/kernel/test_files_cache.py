"""The files tables from files_cache (emu.kernel.files_cache) and LMBench's token on the
stack (emu.kernel.entry): the addresses by hand from the kernels' slab geometry and the
programs' frames."""
import pytest

from emu.hw import estimates
from emu.kernel.entry import (FRAME_BYTES, TASK_FIELDS, TASK_UNION, TOKEN_IN_FRAME,
                              Entry, main_sp, pipe_round_trip)
from emu.kernel.files_cache import FilesCache
from emu.kernel.pgtable import PAGE_SIZE, STACK_TOP
from emu.papers import dougan1999


class Memory:
    """A machine's allocator alone: blocks handed out in order, aligned."""
    def __init__(self):
        self.next = 0x100000

    def alloc(self, size, align=1):
        at = -(-self.next // align) * align
        self.next = at + size
        return at


def test_2_2_0_objects_288_bytes_apart_from_the_first_slabs_colour():
    """2.2.0: a page, one colour of 32 bytes: objects at 32, 320, ... 32 + 13 x 288 =
    3,776; the 15th opens a slab at colour 0; each fd array a page of its own."""
    cache = FilesCache(Memory(), "2.2.0")
    objects = [cache.alloc() for _ in range(15)]
    first = objects[0] - 32
    assert first % PAGE_SIZE == 0
    assert objects[:14] == [first + 32 + 288 * i for i in range(14)]
    assert objects[14] % PAGE_SIZE == 0 and objects[14] > objects[13]
    assert cache.fd_array(objects[0]) % PAGE_SIZE == 0


def test_2_1_51_objects_4384_bytes_apart_in_an_order_3_slab():
    """2.1.51: a 32 KB slab, 32 colours of 64 bytes: objects at 2,048 + 4,384 i (7), the
    next slab at colour 31 (1,984); fd[] inline at byte 260."""
    cache = FilesCache(Memory(), "2.1.51")
    objects = [cache.alloc() for _ in range(8)]
    slab = objects[0] - 2048
    assert slab % (8 * PAGE_SIZE) == 0
    assert objects[:7] == [slab + 2048 + 4384 * i for i in range(7)]
    assert objects[7] % (8 * PAGE_SIZE) == 1984
    assert cache.fd_array(objects[0]) == objects[0] + 260


def test_the_first_object_estimate_skips_objects_taken_before():
    with estimates.moved({"kernel:files_cache.first_object": 3}):
        cache = FilesCache(Memory(), "2.2.0")
    assert cache.alloc() % PAGE_SIZE == 32 + 3 * 288


@pytest.mark.parametrize("version", ["2.2.0", "2.1.51"])
def test_a_forked_pair_s_files_tables_are_consecutive_objects_off_the_task_unions(version):
    """The LMBench parent's table the first object, its child's the next; neither in or
    after a task union at a page offset of its own (the model once glued it to one)."""
    k = dougan1999.kernel("604")
    e = Entry(k, version=version)
    dougan1999._pipes_between(e, pipe_round_trip(1))
    tasks = sorted(e.tasks.values())
    assert len(tasks) == 2
    files = [k.machine.read_word(t + TASK_FIELDS["TASK_FILES"]) for t in tasks]
    first = {"2.2.0": 32, "2.1.51": 2048}[version]
    stride = {"2.2.0": 288, "2.1.51": 4384}[version]
    assert files[0] % PAGE_SIZE == first and files[1] - files[0] == stride
    for f in files:
        assert not any(t <= f < t + TASK_UNION for t in tasks)


def test_the_token_is_a_stack_local_of_doit_and_of_main():
    """lat_pipe: main()'s sp 1,536 bytes below STACK_TOP (the estimate's nominal, kept
    16-aligned); the parent's token in doit(), a 32-byte frame below, at sp + 8; the
    child's in main()."""
    assert main_sp() == STACK_TOP - 1536
    with estimates.moved({"kernel:lmbench.main_sp_depth": 260}):
        assert main_sp() == STACK_TOP - 256
    parent_sp = STACK_TOP - 1536 - FRAME_BYTES
    text = pipe_round_trip(1)
    assert f"lis     r1, {parent_sp >> 16:#x}" in text
    assert f"ori     r1, r1, {parent_sp & 0xFFFF:#x}" in text
    assert f"ori     r1, r1, {(STACK_TOP - 1536) & 0xFFFF:#x}" in text
    assert text.count(f"addi    r4, r1, {TOKEN_IN_FRAME}") == 4
    assert "lis     r4" not in text
