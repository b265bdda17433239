/* The memory system in time: the bus to memory, fill buffers (lines in flight), the store
 * buffer, the hardware stream prefetcher, cache-inhibited accesses. emu/memory.py explains
 * the model and the profile tables that switch each part on; with none of them, a miss
 * costs its level's latency and nothing here runs (the fields are 0).
 *
 * Times are absolute cycles of the running core's clock (H_CYCLES): the access being
 * modelled happens at that time (its block's base cycles are charged at the block's start).
 */
#include "state.h"

/* ------------------------------------------------------------------ the bus */

static i64 bus_cycles(const i64 *st, i64 beats) {
    return (beats * st[H_BUS_BEAT_MC] + 999) / 1000;
}

/* A transfer of `beats` on the bus, requested at `when`: it starts when the bus is free and
 * holds it for its beats. Returns when it starts; *end, when it ends. */
static i64 bus_book(i64 *st, i64 when, i64 beats, i64 *end) {
    if (!st[H_BUS_BEAT_MC]) {
        *end = when;
        return when;
    }
    i64 *bus = st + st[H_MACHINE] + M_BUS_FREE;
    i64 start = max64(when, *bus);
    i64 cycles = bus_cycles(st, beats);
    *bus = start + cycles;
    st[H_BUS_WAIT] += start - when;
    st[H_BUS_BUSY] += cycles;
    *end = *bus;
    return start;
}

static i64 beats_of(const i64 *st, i64 bytes) {
    i64 per = st[H_BUS_BEAT_BYTES];
    if (st[H_BUS_SECTOR] && bytes > st[H_BUS_SECTOR])
        bytes = st[H_BUS_SECTOR];              /* a sectored level moves one sector */
    return per ? (bytes + per - 1) / per : 0;
}

/* ------------------------------------------------------------------ the address bus */

/* The 60x bus's address bus (a profile's [bus] address_tenure): an address-only
 * transaction (a broadcast cache or synchronising operation, HID0[ABE]) requested at `at`
 * waits until the address bus is free and holds it for one address tenure. Returns when its
 * tenure starts; *end, when it ends. */
static i64 address_tenure(i64 *st, i64 at, i64 *end) {
    i64 *bus = st + st[H_MACHINE] + M_ADDR_FREE;
    i64 start = max64(at, *bus);
    *bus = start + st[H_ADDR_TENURE];
    st[H_BUS_WAIT] += start - at;
    *end = *bus;
    return start;
}

/* A broadcast instruction at `at`: it leaves the core when its address tenure starts (the
 * bus interface takes its transaction then); one that must see the broadcast done (sync)
 * also waits for the tenure's end. Returns the core's wait from `at`. */
static i64 address_only(i64 *st, i64 at, bool complete) {
    if (!st[H_ADDR_TENURE])
        return 0;
    st[H_ADDRESS_ONLY] += 1;
    i64 end;
    i64 start = address_tenure(st, at, &end);
    return (complete ? end : start) - at;
}

/* ------------------------------------------------------------------ posted write-backs */

/* When a posted write-back that starts at `start` and takes `latency` cycles is done, in
 * order (ARMv7: DCCMVAC and DCCIMVAC complete in order): `latency` after it or after the one
 * before it, whichever is later; with an outer cache controller (the PL310), the line
 * reaches it `latency - line_op` cycles after it starts and holds it line_op cycles, behind
 * every core's lines and syncs before it. */
static i64 done_in_order(i64 *st, i64 start, i64 latency) {
    i64 done = max64(start, st[H_MAINT_DONE]) + latency;
    if (st[H_OUTER_BASE]) {
        i64 line = st[H_OUTER_LINE_CYCLES];
        i64 arrive = start + max64(latency - line, 0);
        i64 turn = arrive + serialise_at(st, RESOURCE_OUTER_CACHE, line, arrive);
        done = max64(done, turn + line);
        mark_sync(st);                    /* the controller is shared: its users take turns */
    }
    return done;
}

/* When a posted write-back that starts at `start` is done (H_POSTED): POSTED_BUS (the 750's
 * 60x bus, whose data tenure memory_write has booked) when its address tenure and its data
 * tenure have both ended; POSTED_LATENCY (POWER4's L2 machines) `latency` after it starts;
 * POSTED_IN_ORDER (ARMv7) as done_in_order says. */
static i64 posted_done(i64 *st, i64 start, i64 latency) {
    if (st[H_POSTED] == POSTED_BUS) {
        i64 end;
        address_tenure(st, start, &end);
        return max64(end, st[st[H_MACHINE] + M_BUS_FREE]);
    }
    if (st[H_POSTED] == POSTED_IN_ORDER)
        return done_in_order(st, start, latency);
    return start + latency;
}

/* A write-back a maintenance instruction issued at `at` forced (dcbst, dcbf of a modified
 * line; DCCMVAC, DCCIMVAC), `latency` cycles to where it goes: it is posted, and the core
 * goes on. It holds one of the core's H_WB_ENTRIES slots (the 750's write buffers, POWER4's
 * L2 machines; 0: no limit) until it is done; the core waits only for a free slot. The
 * barrier (posted_drain) waits until all are done. Returns the core's wait. */
static i64 post_write_back(i64 *st, i64 at, i64 latency) {
    i64 n = st[H_WB_ENTRIES];
    i64 *slot = st + st[H_POSTED_AT];
    i64 chosen = 0;                       /* the slot freed first */
    for (i64 k = 1; k < n; k++)
        if (slot[k] < slot[chosen])
            chosen = k;
    i64 wait = n ? max64(slot[chosen] - at, 0) : 0;
    i64 done = posted_done(st, at + wait, latency);
    if (n)
        slot[chosen] = done;
    st[H_MAINT_DONE] = max64(st[H_MAINT_DONE], done);
    return wait;
}

/* The barrier that waits for them (sync on PowerPC, dsb on ARM), ready at `at`: the core
 * waits until every posted write-back is done. Returns that wait. */
static i64 posted_drain(i64 *st, i64 at) {
    i64 wait = st[H_MAINT_DONE] - at;
    if (wait <= 0)
        return 0;
    st[H_MAINT_WAIT] += wait;
    return wait;
}

/* ------------------------------------------------------------------ fill buffers */

/* Fill buffers hold (line address, line shift, ready cycle); a buffer is free once its
 * line has arrived. The earliest cycle >= `when` at which one is free. */
static i64 fill_buffer_free_at(const i64 *st, i64 when) {
    i64 n = st[H_FB_ENTRIES];
    if (n == 0)
        return when;
    const i64 *fb = st + st[H_FB];
    i64 earliest = NEVER_CYCLE;
    for (i64 k = 0; k < n; k++) {
        i64 ready = fb[3 * k + 2];
        if (ready <= when)
            return when;
        if (ready < earliest)
            earliest = ready;
    }
    return earliest;
}

/* A line requested from memory and in flight until `ready`: it holds a fill buffer (the
 * one freed earliest, whose line has arrived by `start`). */
static void fill_buffer_hold(i64 *st, i64 address, i64 shift, i64 start, i64 ready) {
    i64 n = st[H_FB_ENTRIES];
    i64 *fb = st + st[H_FB];
    i64 chosen = 0;
    for (i64 k = 1; k < n; k++)
        if (fb[3 * k + 2] < fb[3 * chosen + 2])
            chosen = k;
    (void)start;
    fb[3 * chosen] = (address >> shift) << shift;
    fb[3 * chosen + 1] = shift;
    fb[3 * chosen + 2] = ready;
    st[H_FB_LIVE] += 1;
}

/* Cycles until the line holding `address` arrives, if it is in flight (0 if not): an access
 * that finds its line requested but not yet arrived waits for the rest. */
HOT i64 in_flight_wait(i64 *st, i64 address, i64 now) {
    i64 n = st[H_FB_ENTRIES];
    i64 *fb = st + st[H_FB];
    i64 wait = 0, live = 0;
    for (i64 k = 0; k < n; k++) {
        i64 ready = fb[3 * k + 2];
        if (ready <= now)
            continue;
        live += 1;
        /* the same line: no bit from the line's shift up differs */
        if (((address ^ fb[3 * k]) >> fb[3 * k + 1]) == 0 && ready - now > wait)
            wait = ready - now;
    }
    st[H_FB_LIVE] = live;
    return wait;
}

/* ------------------------------------------------------------------ the PL310's buffers */

/* DRAM traffic through an outer cache controller (the PL310's line fill and eviction
 * buffers, H_OUTER_TRAFFIC): the running core sent a transfer at `now`, done at `done`. A
 * core's transfers come at its clock's pace, one cycle after another (a blocking core waits
 * for each fill), so two records a core are enough for a sync to find the transfers sent at
 * or before its own time, the later of a core's records being up to a quantum ahead of it. */
static void outer_traffic(i64 *st, i64 now, i64 done) {
    i64 *r = st + st[H_OUTER_TRAFFIC] + OUTER_TRAFFIC_WORDS * st[H_CORE];
    if (now == r[OT_ISSUE]) {
        r[OT_DONE] = max64(r[OT_DONE], done);
        return;
    }
    r[OT_PREV_ISSUE] = r[OT_ISSUE], r[OT_PREV_DONE] = r[OT_DONE];
    r[OT_ISSUE] = now, r[OT_DONE] = done;
}

/* When the controller's buffers are empty of every core's transfers sent at or before `t`
 * (0: none in flight then): what a Cache Sync at `t` waits for */
static i64 outer_buffers_empty_at(const i64 *st, i64 t) {
    i64 cores = st[H_CORES] ? st[st[H_CORES]] : 1;
    const i64 *r = st + st[H_OUTER_TRAFFIC];
    i64 empty = 0;
    for (i64 k = 0; k < cores; k++, r += OUTER_TRAFFIC_WORDS) {
        if (r[OT_ISSUE] <= t)
            empty = max64(empty, r[OT_DONE]);
        if (r[OT_PREV_ISSUE] <= t)
            empty = max64(empty, r[OT_PREV_DONE]);
    }
    return empty;
}

/* ------------------------------------------------------------------ memory */

/* A line of `bytes` read from memory, requested now: it waits for a fill buffer and for the
 * bus, then takes the memory latency. Returns its latency; notes when it arrives (and, with
 * an outer cache controller, that its line fill buffer holds it until then). */
static i64 memory_read(i64 *st, i64 bytes) {
    i64 now = st[H_CYCLES];
    if (!st[H_BUS_BEAT_MC] && !st[H_FB_ENTRIES]) {
        st[H_FILL_READY] = now + st[H_MEM_LAT];
        if (st[H_OUTER_TRAFFIC])
            outer_traffic(st, now, st[H_FILL_READY]);
        return st[H_MEM_LAT];
    }
    i64 buffer = fill_buffer_free_at(st, now);
    if (buffer > now)
        st[H_FB_WAITS] += 1;
    i64 end;
    i64 start = bus_book(st, buffer, beats_of(st, bytes), &end);
    st[H_FILL_READY] = start + st[H_MEM_LAT];
    return st[H_FILL_READY] - now;
}

/* A line of `bytes` written to memory (a write-back, a write-through past the last level):
 * the bus carries it; nobody waits for it here. */
static void memory_write(i64 *st, i64 bytes) {
    if (st[H_OUTER_TRAFFIC]) {       /* the eviction buffer holds it for DRAM's share */
        i64 now = st[H_CYCLES];
        outer_traffic(st, now, now + st[H_MEM_LAT] - st[REC(st[H_FIRST_LEVEL]) + L_LATENCY]);
    }
    if (st[H_BUS_BEAT_MC]) {
        i64 end;
        bus_book(st, st[H_CYCLES], beats_of(st, bytes), &end);
    }
}

/* ------------------------------------------------------------------ the store buffer */

/* The ring's slot `k` places after `head` (both below `n`): a compare, not a division */
static i64 ring_slot(i64 head, i64 k, i64 n) {
    i64 slot = head + k;
    return slot >= n ? slot - n : slot;
}

/* Completion cycles of the stores in the buffer, oldest first (a ring). Completed ones
 * leave; returns how many remain. */
HOT i64 store_buffer_retire(i64 *st, i64 now) {
    i64 n = st[H_SB_ENTRIES];
    const i64 *sb = st + st[H_SB];
    i64 head = st[H_SB_HEAD], count = st[H_SB_COUNT];
    while (count > 0 && sb[head] <= now) {
        head = ring_slot(head, 1, n);
        count -= 1;
    }
    st[H_SB_HEAD] = head;
    st[H_SB_COUNT] = count;
    return count;
}

/* A store enters the buffer at `now`, to complete `latency` cycles later and not before the
 * store ahead of it (stores complete in order). A full buffer makes the core wait for its
 * oldest store first. Returns the core's wait. */
HOT i64 store_buffer_push(i64 *st, i64 now, i64 latency) {
    i64 n = st[H_SB_ENTRIES];
    i64 *sb = st + st[H_SB];
    i64 wait = 0;
    if (store_buffer_retire(st, now) == n) {
        wait = sb[st[H_SB_HEAD]] - now;
        st[H_SB_STALLS] += 1;
        st[H_SB_STALL_CYCLES] += wait;
        store_buffer_retire(st, now + wait);
    }
    /* its line was requested at `now` (the read for ownership does not wait for the entry) */
    i64 head = st[H_SB_HEAD], count = st[H_SB_COUNT];
    i64 last = count ? sb[ring_slot(head, count - 1, n)] : 0;
    sb[ring_slot(head, count, n)] = max64(now + latency, last);
    st[H_SB_COUNT] = count + 1;
    return wait;
}

/* A barrier that orders stores (sync, sfence, mfence, a locked instruction, dsb, dmb): the
 * core waits until every store in the buffer has completed. */
static i64 store_buffer_drain(i64 *st) {
    if (!st[H_SB_ENTRIES] || st[H_SB_COUNT] == 0)
        return 0;
    i64 now = st[H_CYCLES];
    i64 *sb = st + st[H_SB];
    i64 last = sb[ring_slot(st[H_SB_HEAD], st[H_SB_COUNT] - 1, st[H_SB_ENTRIES])];
    st[H_SB_COUNT] = 0;
    return last > now ? last - now : 0;
}

/* ------------------------------------------------------------------ prefetch */

/* A prefetch of the line holding `address` into `level` (dcbt, pld, prefetchnta, the
 * hardware prefetcher). Without fill buffers it is a load that waits for its data (the
 * simpler model). With them it waits for nothing but a free buffer ("wait" profiles), or
 * is dropped when none is free ("drop"): the line is in the cache at once, usable when it
 * arrives. Returns the core's wait. */
static i64 prefetch_line(i64 *st, i64 level, i64 address, bool hardware) {
    if (level == MEMORY)
        return 0;
    if (!st[H_FB_ENTRIES]) {
        i64 latency = cache_access(st, level, address, false);
        return latency - st[REC(level) + L_LATENCY];
    }
    i64 now = st[H_CYCLES];
    i64 r = REC(level);
    if (find(st, r, address >> st[r + L_SHIFT]) >= 0)
        return 0;                              /* already there (or on its way) */
    i64 wait = 0;
    i64 free = fill_buffer_free_at(st, now);
    if (free > now) {
        if (st[H_FB_DROP]) {
            st[H_PREFETCHES_DROPPED] += 1;
            return 0;
        }
        wait = free - now;
        st[H_CYCLES] += wait;                  /* the request goes out when a buffer frees */
    }
    st[H_FILL_READY] = -1;
    st[H_PREFETCHING] = 1;
    cache_access(st, level, address, false);
    st[H_PREFETCHING] = 0;
    if (st[H_FILL_READY] >= 0)
        fill_buffer_hold(st, address, st[r + L_SHIFT], st[H_CYCLES], st[H_FILL_READY]);
    st[H_CYCLES] -= wait;                      /* the caller charges the wait */
    st[hardware ? H_HW_PREFETCHES : H_PREFETCHES] += 1;
    return wait;
}

/* ------------------------------------------------------------------ the stream prefetcher */

/* The stream following the page whose word is `key` (page + 1), or -1. A stream is made
 * only for a page no stream has, so a key other than 0 (an unused stream's) is in one
 * stream at most: the stream used last (`last`) is tried first, and the search stops at
 * the match; key 0 is the last of several. */
static i64 stream_of(const i64 *streams, i64 n, i64 key, i64 last) {
    if (key != 0 && streams[4 * last] == key)
        return last;
    i64 found = -1;
    for (i64 k = 0; k < n; k++) {
        if (streams[4 * k] == key) {
            found = k;
            if (key != 0)
                break;
        }
    }
    return found;
}

/* The stream used least recently (the first of equals): the one a new stream replaces */
static i64 oldest_stream(const i64 *streams, i64 n) {
    i64 oldest = 0;
    for (i64 k = 1; k < n; k++)
        if (streams[4 * k + 3] < streams[4 * oldest + 3])
            oldest = k;
    return oldest;
}

/* Streams: (page, last line, direction: +1, -1 or 0 while unconfirmed, last use). A demand
 * access to the prefetcher's level: a miss near a stream's last line in the same page
 * confirms it; an access that follows a confirmed stream moves it on; a confirmed stream
 * keeps `ahead` lines requested ahead of its last one, within the page. */
HOT void stream_prefetch(i64 *st, i64 address, bool missed) {
    i64 level = st[H_PF_LEVEL];
    i64 shift = st[REC(level) + L_SHIFT];
    i64 line = address >> shift, page = address >> st[H_PF_PAGE_SHIFT];
    i64 *streams = st + st[H_PF];
    i64 n = st[H_PF_STREAMS];
    st[H_PF_CLOCK] += 1;
    i64 found = stream_of(streams, n, page + 1, st[H_PF_LAST]);
    if (found < 0) {
        if (!missed)
            return;
        i64 oldest = oldest_stream(streams, n);
        i64 *s = streams + 4 * oldest;
        s[0] = page + 1, s[1] = line, s[2] = 0, s[3] = st[H_PF_CLOCK];
        st[H_PF_LAST] = oldest;
        return;
    }
    st[H_PF_LAST] = found;
    i64 *s = streams + 4 * found;
    i64 step = line - s[1];
    i64 distance = (step < 0 ? -step : step) << shift;
    if (s[2] == 0) {
        if (!missed || step == 0 || distance > st[H_PF_DISTANCE])
            return;
        s[2] = step > 0 ? 1 : -1;
    } else if (step * s[2] <= 0) {
        return;                                /* not along the stream */
    }
    s[1] = line, s[3] = st[H_PF_CLOCK];
    for (i64 k = 1; k <= st[H_PF_AHEAD]; k++) {
        i64 next = line + k * s[2];
        if (((next << shift) >> st[H_PF_PAGE_SHIFT]) != page)
            break;                             /* never across the page */
        i64 stall = prefetch_line(st, level, next << shift, true);
        (void)stall;                           /* the hardware's own requests: no wait */
    }
}

/* ------------------------------------------------------------------ cache-inhibited */

/* An access that bypasses the caches (a cache-inhibited page): a bus transaction of its own
 * size; a load waits for memory's latency from when its transfer starts; a store is posted
 * (into the store buffer when there is one). Returns the core's wait. */
NOINLINE i64 uncached_access(i64 *st, i64 size, bool write) {
    i64 now = st[H_CYCLES];
    i64 end;
    i64 start = bus_book(st, now, beats_of(st, size) > 0 ? beats_of(st, size) : 1, &end);
    if (!write) {
        st[H_UNCACHED_LOADS] += 1;
        return start - now + st[H_MEM_LAT];
    }
    st[H_UNCACHED_STORES] += 1;
    if (st[H_SB_ENTRIES])
        return store_buffer_push(st, now, end - now);
    return end - now;
}

/* ------------------------------------------------------------------ write-combining */

/* A write-combining buffer goes to memory: a full line in one transfer, a partial one in
 * 8-byte pieces at a fraction of the bus's rate. Returns when the transfer ends. */
static i64 write_combining_transfer(i64 *st, i64 bytes) {
    i64 end;
    i64 beats = bytes >= st[H_WC_LINE] ? beats_of(st, bytes)
                                       : ((bytes + 7) / 8) * st[H_BUS_PARTIAL_BEATS];
    bus_book(st, st[H_CYCLES], beats, &end);
    return end;
}
