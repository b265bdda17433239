/* The cache model: levels, replacement, write policies, maintenance, I/D coherence.
 *
 * A line-for-line C rendering of the model emu/cache.py documents (its module docstring
 * explains the design: non-inclusive levels, eager I/D coherence, the MRU shortcut). Every
 * function here has the Python name; the ones Python calls are exported as emu_<name>.
 */
#include "state.h"

/* the memory system in time (memsys.c): what a fill from memory and a write to it cost */
static i64 memory_read(i64 *st, i64 bytes);
static void memory_write(i64 *st, i64 bytes);
static i64 prefetch_line(i64 *st, i64 level, i64 address, bool hardware);
static i64 write_combining_transfer(i64 *st, i64 bytes);
static i64 post_write_back(i64 *st, i64 at, i64 latency);
static i64 outer_buffers_empty_at(const i64 *st, i64 t);
/* the topology (below): other chips' copies of a chip level */
static int peer_chips(i64 *st, i64 level, i64 addr, i64 op);

/* Has the level copies on other chips? (L_PEER: the next chip's copy, a ring; a machine of
 * one chip has none: its ring is the level itself. The walk over the copies goes by the
 * presence table, peer_chips.) */
HOT bool has_peers(const i64 *st, i64 level) {
    i64 r = REC(level);
    return st[r + L_GROUP] >= 0 && st[r + L_PEER] != level;
}

/* ------------------------------------------------------------ events (emu.profiler) */

/* An event happened: counted, and with the profiler sampling this kind of event, one
 * sample in every H_PROFILE_PERIOD of them, left pending for the hook that knows the PC;
 * the same for the second kind sampled in the run (H_SAMPLE_EVENTS2), if it is one */
static void event(i64 *st, int bit) {
    if ((st[H_SAMPLE_EVENTS] >> bit) & 1) {
        st[H_EVENTS] += 1;
        if (--st[H_EVENT_NEXT] <= 0) {
            st[H_EVENT_PENDING] += 1;
            st[H_EVENT_NEXT] = st[H_PROFILE_PERIOD];
        }
    }
    if ((st[H_SAMPLE_EVENTS2] >> bit) & 1 && --st[H_EVENT_NEXT2] <= 0) {
        st[H_EVENT_PENDING2] += 1;
        st[H_EVENT_NEXT2] = st[H_PROFILE_PERIOD];
    }
}

#define LEVEL_EVENT(st, r, write, miss) \
    do { if (UNLIKELY((st)[H_SAMPLE_EVENTS])) \
        event((st), (int)(4 * (st)[(r) + L_KIND] + 2 * (write) + (miss))); } while (0)

/* ------------------------------------------------------------ replacement and look-up */

/* xorshift64: the 'random' replacement policy, seeded and so deterministic */
HOT i64 random_next(i64 *st) {
    u64 x = (u64)st[H_RNG];
    x ^= x << 13;
    x ^= (x >> 7) & 0x01FFFFFFFFFFFFFFULL;
    x ^= x << 17;
    st[H_RNG] = (i64)x;
    return (i64)(x & 0x7FFFFFFFFFFFFFFFULL);
}

/* Tree PLRU (a power-of-two number of ways, at most 64: emu.cache refuses more). A use of
 * way `w` of `ways` points every node on its path away from it: the path's node bits
 * (plru_path[ways + w]) take the values plru_away[ways + w]. The tables are made once, when
 * the library is loaded, so that a use costs no walk down the tree. */
static u64 plru_path[128], plru_away[128];

AT_LOAD static void plru_tables(void) {
    for (i64 ways = 2; ways <= 64; ways *= 2) {
        for (i64 way = 0; way < ways; way++) {
            u64 path = 0, away = 0;
            i64 node = 1, span = ways;
            while (span > 1) {
                span >>= 1;
                path |= 1ULL << node;
                if (way & span) {
                    node = 2 * node + 1;        /* bit 0: the next victim is on the left */
                } else {
                    away |= 1ULL << node;       /* bit 1: the next victim is on the right */
                    node = 2 * node;
                }
            }
            plru_path[ways + way] = path;
            plru_away[ways + way] = away;
        }
    }
}

HOT void plru_touch(i64 *st, i64 r, i64 s, i64 way) {
    i64 ways = st[r + L_WAYS];
    if (ways < 2)
        return;
    i64 at = st[r + L_PLRU] + s;
    st[at] = (i64)(((u64)st[at] & ~plru_path[ways + way]) | plru_away[ways + way]);
}

HOT i64 plru_victim(i64 *st, i64 r, i64 s) {
    i64 ways = st[r + L_WAYS];
    u64 bits = (u64)st[st[r + L_PLRU] + s];
    i64 node = 1, way = 0, span = ways;
    while (span > 1) {
        span >>= 1;
        if ((bits >> node) & 1) {
            way += span;
            node = 2 * node + 1;
        } else {
            node = 2 * node;
        }
    }
    return way;
}

/* The way holding a line in its set, or -1 */
HOT i64 find(const i64 *st, i64 r, i64 line) {
    i64 ways = st[r + L_WAYS];
    i64 first = st[r + L_TAGS] + (line & (st[r + L_SETS] - 1)) * ways;
    i64 tag = line + 1;
    for (i64 w = 0; w < ways; w++)
        if (st[first + w] == tag)
            return w;
    return -1;
}

/* An L1 I's lines lie within [L_LINES_LO, L_LINES_HI], every line it ever took in (empty
 * while HI < LO): a line outside them is not there, and needs no search */
HOT void note_icache_line(i64 *st, i64 r, i64 line) {
    if (st[r + L_LINES_HI] < st[r + L_LINES_LO]) {
        st[r + L_LINES_LO] = line;
        st[r + L_LINES_HI] = line;
    } else {
        st[r + L_LINES_LO] = min64(st[r + L_LINES_LO], line);
        st[r + L_LINES_HI] = max64(st[r + L_LINES_HI], line);
    }
}

HOT bool icache_may_hold(const i64 *st, i64 r, i64 line) {
    return line >= st[r + L_LINES_LO] && line <= st[r + L_LINES_HI];
}

/* A use of a way: the set's most-recent-use record and the replacement state */
HOT void touch(i64 *st, i64 r, i64 s, i64 way, i64 tag) {
    st[st[r + L_MRU] + s] = (i64)((u64)tag << MRU_WAY_BITS) | way;
    i64 repl = st[r + L_REPL];
    if (repl == REPL_LRU) {
        i64 clock = st[r + L_CLOCK] + 1;
        st[r + L_CLOCK] = clock;
        st[st[r + L_STAMP] + s * st[r + L_WAYS] + way] = clock;
    } else if (repl == REPL_PLRU) {
        plru_touch(st, r, s, way);
    }
}

/* The way holding `line` in set `s`, its use recorded; -1 if absent. Counts nothing.
 * The set's most recent line is found without a search. */
HOT i64 hit(i64 *st, i64 r, i64 line, i64 s) {
    i64 tag = line + 1;
    i64 m = st[st[r + L_MRU] + s];
    if ((m >> MRU_WAY_BITS) == tag)
        return m & WAY_MASK;
    i64 ways = st[r + L_WAYS];
    i64 first = st[r + L_TAGS] + s * ways;
    for (i64 way = 0; way < ways; way++) {
        if (st[first + way] == tag) {
            touch(st, r, s, way, tag);
            return way;
        }
    }
    return -1;
}

/* An invalid way if there is one, else the policy's choice */
HOT i64 victim(i64 *st, i64 r, i64 s) {
    i64 ways = st[r + L_WAYS];
    i64 first = s * ways;
    i64 tags = st[r + L_TAGS];
    for (i64 w = 0; w < ways; w++)
        if (st[tags + first + w] == 0)
            return w;
    i64 repl = st[r + L_REPL];
    if (repl == REPL_PLRU)
        return plru_victim(st, r, s);
    if (repl == REPL_RANDOM)
        return random_next(st) % ways;
    i64 stamps = st[r + L_STAMP] + first;     /* LRU: oldest use; FIFO: oldest fill */
    i64 best = 0;
    for (i64 w = 1; w < ways; w++)
        if (st[stamps + w] < st[stamps + best])
            best = w;
    return best;
}

/* A write that stalls nobody (write-through, write-around, victim write-back): queued for
 * the level below, or counted as a memory write of `bytes`. A store's own write (not a
 * victim's) is queued as a demand write: when it is carried out, its latency is what the
 * store buffer waits for (H_STORE_DONE). */
HOT void send_write_of(i64 *st, i64 level, i64 addr, i64 bytes, bool demand) {
    if (level == MEMORY) {
        st[H_MEM_WRITES] += 1;
        if (UNLIKELY(st[H_SAMPLE_EVENTS]))
            event(st, EVENT_MEMORY_WRITE);
        memory_write(st, bytes);
        return;
    }
    i64 n = st[H_QUEUE_N];
    st[st[H_QUEUE] + 2 * n] = demand ? -2 - level : level;
    st[st[H_QUEUE] + 2 * n + 1] = addr;
    st[H_QUEUE_N] = n + 1;
}

HOT void send_write(i64 *st, i64 level, i64 addr) { send_write_of(st, level, addr, 8, false); }

/* A dirty line leaves its level for the level below */
HOT void write_back(i64 *st, i64 r, i64 line) {
    st[r + L_WRITEBACKS] += 1;
    send_write_of(st, st[r + L_NEXT], (i64)((u64)line << st[r + L_SHIFT]),
                  (i64)1 << st[r + L_SHIFT], false);
}

/* A clean L1 D line is about to become dirty: keep memory's copy of it for a table walker
 * that reads below the L1 D (a memory hook runs before the store: RAM holds the old bytes).
 * Only the part of the line inside guest RAM is copied (the rest reads as zero). */
static void snapshot(i64 *st, i64 r, i64 slot, i64 line) {
    i64 bytes = (i64)1 << st[r + L_SHIFT];
    i64 words = bytes >> 3 > 1 ? bytes >> 3 : 1;
    i64 at = st[r + L_SHADOW] + slot * words;
    i64 start = (i64)((u64)line << st[r + L_SHIFT]);
    const uint8_t *ram = (const uint8_t *)(intptr_t)st[H_RAM_PTR];
    for (i64 k = 0; k < words; k++) {
        i64 address = start + 8 * k;
        i64 word = 0;
        if (address >= 0 && address + 8 <= st[H_RAM_SIZE])
            __builtin_memcpy(&word, ram + address, 8);
        st[at + k] = word;
    }
}

HOT void make_dirty(i64 *st, i64 r, i64 slot, i64 line) {
    i64 d = st[r + L_DIRTY] + slot;
    if (st[d] == 0 && st[r + L_SHADOW])
        snapshot(st, r, slot, line);
    st[d] = 1;
}

/* ---- presence (multi-core): a private level (each core's L1 I, L1 D) and a chip level
 * (emu.topology) have a copy per owner (core or chip), and their presence table says, per
 * bucket of lines (line % PRESENCE_BUCKETS), which owners' copies hold a line of the bucket
 * (bit k: owner k), then which level is each owner's copy. A copy's sets divide the buckets,
 * so a bucket's lines in one copy all sit in one set: when a line leaves, that set alone
 * tells whether the copy still holds one of its bucket. The bits are exact, and a walk over
 * the other copies (snoop, peer_chips, stale I-cache lines) visits only the owners whose bit
 * is set: the others would have found nothing. */
HOT bool has_presence(const i64 *st, i64 level) {
    return level >= 0 && st[REC(level) + L_OWNER] >= 0;
}

/* The owners whose copy of `level` holds a line of the bucket of `line` */
HOT u64 holders_of(const i64 *st, i64 level, i64 line) {
    return (u64)st[st[REC(level) + L_PRESENCE_AT] + (line & (PRESENCE_BUCKETS - 1))];
}

/* Owner k's copy of the level whose presence table `level` shares */
HOT i64 copy_of(const i64 *st, i64 level, i64 k) {
    return st[st[REC(level) + L_PRESENCE_AT] + PRESENCE_BUCKETS + k];
}

static void presence_add(i64 *st, i64 r, i64 line) {
    st[st[r + L_PRESENCE_AT] + (line & (PRESENCE_BUCKETS - 1))] |= (i64)1 << st[r + L_OWNER];
}

static void presence_clear(i64 *st, i64 r, i64 bucket) {
    st[st[r + L_PRESENCE_AT] + bucket] &= ~((i64)1 << st[r + L_OWNER]);
}

/* `line` left set `s` of level `r`: its owner's bit goes unless the set holds another line
 * of the same bucket */
static void presence_remove(i64 *st, i64 r, i64 s, i64 line) {
    i64 bucket = line & (PRESENCE_BUCKETS - 1);
    i64 ways = st[r + L_WAYS], first = st[r + L_TAGS] + s * ways;
    for (i64 w = 0; w < ways; w++)
        if (st[first + w] != 0 && ((st[first + w] - 1) & (PRESENCE_BUCKETS - 1)) == bucket)
            return;
    presence_clear(st, r, bucket);
}

/* Put a line into set `s`: choose a victim, write it back if dirty; returns the way */
HOT i64 install(i64 *st, i64 r, i64 s, i64 line) {
    i64 ways = st[r + L_WAYS];
    i64 way = victim(st, r, s);
    i64 slot = s * ways + way;
    i64 old = st[st[r + L_TAGS] + slot];
    if (old != 0) {
        st[r + L_EVICTIONS] += 1;
        if (st[st[r + L_DIRTY] + slot])
            write_back(st, r, old - 1);
    }
    st[st[r + L_TAGS] + slot] = line + 1;
    st[r + L_FILLS] += 1;
    st[st[r + L_DIRTY] + slot] = 0;
    st[st[r + L_STALE] + slot] = 0;
    if (st[r + L_IS_ICACHE])
        note_icache_line(st, r, line);
    if (UNLIKELY(st[r + L_OWNER] >= 0)) {
        if (old != 0)
            presence_remove(st, r, s, old - 1);
        presence_add(st, r, line);
    }
    if (st[r + L_REPL] == REPL_FIFO) {        /* FIFO: the fill time is what counts */
        st[r + L_CLOCK] += 1;
        st[st[r + L_STAMP] + slot] = st[r + L_CLOCK];
    }
    touch(st, r, s, way, line + 1);
    return way;
}

/* This level's part of a request; true when the line must be filled from below */
HOT bool level_request(i64 *st, i64 level, i64 addr, bool write) {
    i64 r = REC(level);
    i64 shift = st[r + L_SHIFT];
    i64 line = addr >> shift;
    i64 s = line & (st[r + L_SETS] - 1);
    i64 ways = st[r + L_WAYS];
    st[r + L_ACCESSES] += 1;
    i64 way = hit(st, r, line, s);
    if (UNLIKELY(level == st[H_PF_LEVEL]) && !st[H_PREFETCHING]) {
        st[H_PF_ACCESS] = addr;               /* the stream prefetcher sees demand accesses */
        st[H_PF_MISSED] = way < 0;
    }
    if (way >= 0) {
        st[r + L_HITS] += 1;
        LEVEL_EVENT(st, r, write, 0);
        /* the other chips' copies go; a dirty copy has none (making it dirty took them) */
        if (UNLIKELY(write && has_peers(st, level)) &&
                !(st[r + L_WRITE_BACK] && st[st[r + L_DIRTY] + s * ways + way]))
            peer_chips(st, level, addr, OP_FLUSH);
        if (write) {
            if (st[r + L_WRITE_BACK])
                make_dirty(st, r, s * ways + way, line);
            else
                send_write_of(st, st[r + L_NEXT], addr, 8, true);
        }
        return false;
    }
    st[r + L_MISSES] += 1;
    LEVEL_EVENT(st, r, write, 1);
    if (write && !st[r + L_WRITE_ALLOCATE]) {
        send_write_of(st, st[r + L_NEXT], addr, 8, true);  /* write-around: no fill, no stall */
        return false;
    }
    way = install(st, r, s, line);
    if (write) {
        if (st[r + L_WRITE_BACK])
            make_dirty(st, r, s * ways + way, line);
        else
            send_write_of(st, st[r + L_NEXT], addr, 8, true);
    }
    return true;
}

/* Walk a request down from `level` until a level has the line; its latency */
HOT i64 down(i64 *st, i64 level, i64 addr, bool write) {
    i64 bytes = 8;                     /* what reaches memory: a line of the last level */
    while (level != MEMORY) {
        i64 r = REC(level);
        if (!level_request(st, level, addr, write))
            return st[r + L_LATENCY];
        bytes = (i64)1 << st[r + L_SHIFT];
        if (UNLIKELY(has_peers(st, level))) {
            /* a chip's own level missed: another chip may supply the line (a read leaves
             * its copy, clean; a write takes it) */
            int distance = peer_chips(st, level, addr, write ? OP_FLUSH : OP_CLEAN);
            if (distance) {
                st[H_INTERVENTIONS] += 1;
                return distance == 1 ? st[H_ON_MODULE] : st[H_OFF_MODULE];
            }
        }
        level = st[r + L_NEXT];
        write = false;                 /* below a miss, the request is the fill (a read) */
    }
    if (UNLIKELY(st[H_SAMPLE_EVENTS]))
        event(st, write ? EVENT_MEMORY_WRITE : EVENT_MEMORY_READ);
    if (write) {
        st[H_MEM_WRITES] += 1;
        memory_write(st, bytes);
        return st[H_MEM_LAT];
    }
    st[H_MEM_READS] += 1;
    return memory_read(st, bytes);
}

/* Carry out the queued writes (each may queue more further down) */
static void drain_queue(i64 *st) {
    while (st[H_QUEUE_N] > 0) {
        i64 n = st[H_QUEUE_N] - 1;
        st[H_QUEUE_N] = n;
        i64 level = st[st[H_QUEUE] + 2 * n];
        if (level < -1) {                  /* a store's own write: its latency counts */
            i64 latency = down(st, -2 - level, st[st[H_QUEUE] + 2 * n + 1], true);
            if (latency > st[H_STORE_DONE])
                st[H_STORE_DONE] = latency;
        } else {
            down(st, level, st[st[H_QUEUE] + 2 * n + 1], true);
        }
    }
}

/* The queued writes, if any: most requests queue none, and need no call */
HOT void drain(i64 *st) {
    if (st[H_QUEUE_N] > 0)
        drain_queue(st);
}

/* One request for the line holding `addr` at `level`: the load-to-use latency of the level
 * that supplied the data (see emu.cache.access) */
static i64 cache_access(i64 *st, i64 level, i64 addr, bool write) {
    i64 latency = down(st, level, addr, write);
    drain(st);
    return latency;
}

/* ------------------------------------------------------------ data side and fetch side */

/* Charge cycles to the instruction at `offset` in the code region (-1: outside it); with
 * the profiler on, a sample each time the cycle count passes a multiple of the period */
static void account(i64 *st, i64 offset, i64 cycles) {
    st[H_CYCLES] += cycles;
    i64 period = st[H_PROFILE_PERIOD];
    if (period <= 0 || offset < 0 || offset > st[H_CODE_LEN])
        return;
    raise_profile_top(st, offset + 1);
    st[st[H_INSN_CYCLES] + offset] += cycles;
    if (st[H_SAMPLE_EVENTS]) {              /* sampling events: those that happened here */
        st[st[H_SAMPLES] + offset] += st[H_EVENT_PENDING];
        st[H_EVENT_PENDING] = 0;
        if (st[H_SAMPLE_EVENTS2]) {
            st[st[H_SAMPLES2] + offset] += st[H_EVENT_PENDING2];
            st[H_EVENT_PENDING2] = 0;
        }
        return;
    }
    while (st[H_CYCLES] >= st[H_NEXT_SAMPLE]) {
        st[st[H_SAMPLES] + offset] += 1;
        st[H_NEXT_SAMPLE] += period;
    }
}

/* The L1 I (record `r`) copy of `line`, if it holds one, is stale */
HOT void flag_stale_line(i64 *st, i64 r, i64 line) {
    i64 way = icache_may_hold(st, r, line) ? find(st, r, line) : -1;
    if (way >= 0)
        st[st[r + L_STALE] + (line & (st[r + L_SETS] - 1)) * st[r + L_WAYS] + way] = 1;
}

static void flag_stale(i64 *st, i64 l1i, i64 addr, i64 length) {
    i64 r = REC(l1i);
    i64 shift = st[r + L_SHIFT];
    for (i64 line = addr >> shift; line <= (addr + length - 1) >> shift; line++)
        flag_stale_line(st, r, line);
}

/* Bytes [addr, addr + length) changed on the data side: I-cache copies are now stale, in
 * every core (no I-cache here snoops stores); with several cores, only in the cores whose
 * L1 I holds a line of the bucket (presence) */
static void changed_in_every_core(i64 *st, i64 addr, i64 length) {
    i64 l1i = st[H_L1I];
    if (!has_presence(st, l1i)) {          /* one core (or no L1 I): its own, if any */
        if (l1i >= 0)
            flag_stale(st, l1i, addr, length);
        return;
    }
    i64 shift = st[REC(l1i) + L_SHIFT];
    for (i64 line = addr >> shift; line <= (addr + length - 1) >> shift; line++)
        for (u64 holders = holders_of(st, l1i, line); holders; holders &= holders - 1)
            flag_stale(st, copy_of(st, l1i, __builtin_ctzll(holders)),
                       (i64)((u64)line << shift), (i64)1 << shift);
}

HOT void changed(i64 *st, i64 addr, i64 length) {
    if (st[H_COHERENT_I])
        return;
    i64 l1i = st[H_L1I];
    if (st[H_CORES] == 0 && l1i >= 0) {       /* one core, one line: inline, as most stores */
        i64 r = REC(l1i);
        i64 shift = st[r + L_SHIFT];
        i64 line = addr >> shift;
        if (line == (addr + length - 1) >> shift) {
            flag_stale_line(st, r, line);
            return;
        }
    }
    changed_in_every_core(st, addr, length);
}

static bool dirty_in(const i64 *st, i64 l1d, i64 addr, i64 length) {
    i64 r = REC(l1d);
    i64 shift = st[r + L_SHIFT];
    i64 ways = st[r + L_WAYS];
    for (i64 line = addr >> shift; line <= (addr + length - 1) >> shift; line++) {
        i64 way = find(st, r, line);
        if (way >= 0 && st[st[r + L_DIRTY] + (line & (st[r + L_SETS] - 1)) * ways + way])
            return true;
    }
    return false;
}

/* Is any L1 D line over [addr, addr + length) dirty, in any core? */
static bool dirty_in_l1d(const i64 *st, i64 addr, i64 length) {
    i64 l1d = st[H_L1D];
    if (!has_presence(st, l1d))            /* one core (or no L1 D): its own, if any */
        return l1d >= 0 && dirty_in(st, l1d, addr, length);
    i64 shift = st[REC(l1d) + L_SHIFT];
    for (i64 line = addr >> shift; line <= (addr + length - 1) >> shift; line++)
        for (u64 holders = holders_of(st, l1d, line); holders; holders &= holders - 1)
            if (dirty_in(st, copy_of(st, l1d, __builtin_ctzll(holders)),
                         (i64)((u64)line << shift), (i64)1 << shift))
                return true;
    return false;
}

/* Empty the way holding `line` (no write-back, nothing counted) */
static void drop_line(i64 *st, i64 level, i64 line, i64 way) {
    i64 r = REC(level);
    i64 s = line & (st[r + L_SETS] - 1);
    i64 slot = s * st[r + L_WAYS] + way;
    if ((st[st[r + L_MRU] + s] >> MRU_WAY_BITS) == line + 1)
        st[st[r + L_MRU] + s] = 0;
    st[st[r + L_TAGS] + slot] = 0;
    st[st[r + L_DIRTY] + slot] = 0;
    if (st[r + L_OWNER] >= 0)
        presence_remove(st, r, s, line);
}

/* The running core's current block synchronises the cores: a coherence event happened in
 * it (emu/model/smp.c runs such blocks in time order) */
static void mark_sync(i64 *st) {
    i64 off = st[H_BLOCK_START] - st[H_CODE_BASE];
    if (off >= 0 && off < st[H_CODE_LEN])
        st[st[H_SYNC_DYNAMIC] + off] = 1;
}

/* What one core's request does to the other cores' L1 D copies of the line at `addr`
 * (multi-core only; MESI-like, see emu.cache.snoop) */
static void snoop(i64 *st, i64 addr, i64 op) {
    i64 l1d = st[H_L1D];
    if (!has_presence(st, l1d))            /* one core: no other copies */
        return;
    /* the other cores whose L1 D holds a line of the bucket, in order */
    u64 holders = holders_of(st, l1d, addr >> st[REC(l1d) + L_SHIFT]) &
                  ~((u64)1 << st[H_CORE]);
    for (; holders; holders &= holders - 1) {
        i64 level = copy_of(st, l1d, __builtin_ctzll(holders));
        i64 r = REC(level);
        i64 line = addr >> st[r + L_SHIFT];
        i64 way = find(st, r, line);
        if (way < 0)
            continue;
        i64 slot = (line & (st[r + L_SETS] - 1)) * st[r + L_WAYS] + way;
        if (op != OP_INVALIDATE && st[st[r + L_DIRTY] + slot]) {
            write_back(st, r, line);
            st[st[r + L_DIRTY] + slot] = 0;
            st[H_TRANSFERS] += 1;
            drain(st);
            mark_sync(st);
        }
        if (op == OP_FLUSH || op == OP_INVALIDATE) {
            drop_line(st, level, line, way);
            st[r + L_INVALIDATIONS] += 1;
            st[H_SNOOP_INVALIDATIONS] += 1;
            mark_sync(st);
        }
    }
}

/* An instruction that needs a resource all cores share, one at a time: it waits until the
 * resource is free by this core's clock, then holds it `service` cycles. Returns the wait. */
static i64 serialise_at(i64 *st, i64 resource, i64 service, i64 now) {
    st[H_SERIAL_OPS] += 1;
    i64 table = st[H_CORES];
    if (table == 0)
        return 0;
    i64 at = table + 1 + CORE_RECORD * st[table] + resource;
    i64 start = max64(now, st[at]);
    st[at] = start + service;
    st[H_SERIAL_WAIT] += start - now;
    return start - now;
}

static i64 serialise(i64 *st, i64 resource, i64 service) {
    return serialise_at(st, resource, service, st[H_CYCLES]);
}

/* The cycle at which the instruction at `pc` issues: the block hook charged its whole
 * block's base cycles at the start, so take off this instruction's and the later ones'
 * (from the code's prefix sums of costs; the clock itself outside the block) */
static i64 issue_time(const i64 *st, i64 pc) {
    i64 base = st[H_CODE_BASE];
    i64 start = st[H_BLOCK_START] - base, off = pc - base;
    i64 end = start + st[H_BLOCK_SIZE];
    if (pc < 0 || start < 0 || off < start || off >= end || end > st[H_CODE_TOP])
        return st[H_CYCLES];
    return st[H_CYCLES] - (st[st[H_ICOST] + end] - st[st[H_ICOST] + off]);
}

/* The cycle at which the instruction at `pc` ends its own base cycles (a barrier's wait
 * counts from there) */
static i64 issue_end(const i64 *st, i64 pc) {
    i64 off = pc - st[H_CODE_BASE];
    i64 own = off >= 0 && off < st[H_CODE_TOP] ?
        st[st[H_ICOST] + off + 4] - st[st[H_ICOST] + off] : 0;
    return issue_time(st, pc) + own;
}

/* A register write to the outer cache controller that took its turn at `start` for
 * `service` cycles also waits for the controller's buffers, empty at `empty`
 * (outer_buffers_empty_at, found before the operation's own transfers): a
 * Cache Sync is done when they are empty, its own service overlapping the wait; any other
 * register write performs a Cache Sync first, then its operation. The controller is held
 * (its slave ports stalled) until then. Returns the cycles beyond `service`. */
static i64 drain_outer_buffers(i64 *st, i64 start, i64 service, bool sync, i64 empty) {
    i64 done = sync ? max64(start + service, empty) : max64(start, empty) + service;
    i64 extra = done - start - service;
    if (extra <= 0)
        return 0;
    st[H_OUTER_DRAIN_WAIT] += extra;
    i64 table = st[H_CORES];
    if (table)
        st[table + 1 + CORE_RECORD * st[table] + RESOURCE_OUTER_CACHE] = done;
    return extra;
}

/* Clean / flush / invalidate one line at one level. Returns 1 if it wrote data back. */
static i64 maintain_level(i64 *st, i64 level, i64 addr, i64 op) {
    i64 r = REC(level);
    i64 line = addr >> st[r + L_SHIFT];
    i64 way = find(st, r, line);
    if (way < 0)
        return 0;
    i64 slot = (line & (st[r + L_SETS] - 1)) * st[r + L_WAYS] + way;
    i64 wrote = 0;
    if (op != OP_INVALIDATE && st[st[r + L_DIRTY] + slot]) {
        write_back(st, r, line);
        st[st[r + L_DIRTY] + slot] = 0;
        wrote = 1;
    }
    if (op != OP_CLEAN) {
        drop_line(st, level, line, way);
        st[r + L_INVALIDATIONS] += 1;
    }
    return wrote;
}

/* A store to the outer cache controller's register at `offset` (PL310): a cache sync, or a
 * clean / invalidate / clean+invalidate of the L2 line holding physical address `value`.
 * Returns the cycles the store waits (see emu.cache.outer_cache_write). */
static i64 outer_cache_write(i64 *st, i64 offset, i64 value) {
    i64 service;
    bool sync = offset == OUTER_CACHE_SYNC || offset == OUTER_DUMMY_SYNC;
    /* the transfers in flight when the write arrives (before the operation's own) */
    i64 empty = st[H_OUTER_TRAFFIC] ? outer_buffers_empty_at(st, st[H_CYCLES]) : 0;
    if (sync) {
        st[H_OUTER_SYNCS] += 1;
        service = st[H_OUTER_SYNC_CYCLES];
    } else {
        i64 op = offset == 0x770 ? OP_INVALIDATE : offset == 0x7B0 ? OP_CLEAN :
                 offset == 0x7F0 ? OP_FLUSH : -1;
        if (op < 0)
            return 0;
        st[H_OUTER_LINE_OPS] += 1;
        service = st[H_OUTER_LINE_CYCLES];
        i64 level = st[H_FIRST_LEVEL];
        if (level != MEMORY && maintain_level(st, level, value, op))
            service += st[H_MEM_LAT];
    }
    i64 wait = serialise(st, RESOURCE_OUTER_CACHE, service);
    st[H_OUTER_WAIT] += wait;
    mark_sync(st);                    /* the controller is shared: its users take turns */
    if (st[H_OUTER_TRAFFIC])
        service += drain_outer_buffers(st, st[H_CYCLES] + wait, service, sync, empty);
    return wait + service;
}

/* Cycles a misaligned access costs beyond the cache model (0 when aligned or off) */
HOT i64 alignment(i64 *st, i64 addr, i64 size) {
    if (size == st[H_ALIGN_SIZE] && (addr & st[H_ALIGN_MASK])) {
        st[H_ALIGN_EXCEPTIONS] += 1;
        return st[H_ALIGN_CYCLES];
    }
    i64 mask = st[H_SPLIT_MASK];
    if (mask && (addr & mask) + size > mask + 1) {
        st[H_SPLITS] += 1;
        return st[H_SPLIT_CYCLES];
    }
    return 0;
}

/* Which of a slice's `entries` entries (from `slot`) frees first; the lowest of equals */
static i64 first_free_entry(const i64 *slot, i64 entries) {
    i64 free = 0;
    for (i64 k = 1; k < entries; k++)
        if (slot[k] < slot[free])
            free = k;
    return free;
}

/* The slice of store-queue line `line`: line n goes to slice n mod slices; the next line
 * of the last one (a copy's) to the next slice, without a division */
HOT i64 queue_slice(i64 *st, i64 line, i64 slices) {
    if (line != st[H_SQ_LINE]) {
        i64 next = st[H_SQ_SLICE] + 1;
        st[H_SQ_SLICE] = line == st[H_SQ_LINE] + 1 && st[H_SQ_LINE] >= 0 ?
            (next == slices ? 0 : next) : floor_mod(line, slices);
        st[H_SQ_LINE] = line;
    }
    return st[H_SQ_SLICE];
}

/* A store enters the store queue of the L2 slice its line maps to, at cycle `now`; returns
 * the cycles the core stalls (POWER4, see emu.cache.store_queue). The entry it takes is one
 * that frees first: while stores reach the queues in time order (each no earlier than the
 * one before, as one core's do), each slice's entries free in the order they were taken,
 * so that is the slice's ring head; after a store out of order (another core's, or Python's
 * at= earlier), the slice is searched. Either way the entry freeing first: the same
 * stalls. */
HOT i64 store_queue(i64 *st, i64 addr, i64 size, i64 now) {
    i64 shift = st[H_SQ_SHIFT];
    i64 slices = st[H_SQ_SLICES], entries = st[H_SQ_ENTRIES], service = st[H_SQ_SERVICE];
    i64 *slots = st + st[H_SQ], *heads = slots + slices * entries, *order = heads + slices;
    i64 stall = 0;
    for (i64 line = addr >> shift; line <= (addr + size - 1) >> shift; line++) {
        i64 k = queue_slice(st, line, slices);
        i64 t = now + stall;
        if (t < order[SQ_LAST])
            order[SQ_DISORDERED] = 1;
        order[SQ_LAST] = t;
        i64 free = k * entries;
        if (!order[SQ_DISORDERED]) {
            free += heads[k];
            heads[k] = heads[k] + 1 == entries ? 0 : heads[k] + 1;
        } else {
            free += first_free_entry(slots + free, entries);
        }
        if (slots[free] > t) {
            st[H_SQ_STALLS] += 1;
            st[H_SQ_STALL_CYCLES] += slots[free] - t;
            stall += slots[free] - t;
            t = slots[free];
        }
        slots[free] = t + service;
        st[H_SQ_STORES] += 1;
    }
    return stall;
}

/* data_access beyond an L1 hit: misses, line-crossing accesses, stores past the L1 */
static i64 data_lines(i64 *st, i64 addr, i64 size, bool write) {
    i64 l1 = st[H_L1D];
    if (l1 < 0) {                       /* no L1 D: straight to the first unified level */
        i64 latency = cache_access(st, st[H_FIRST_LEVEL], addr, write);
        if (write)
            changed(st, addr, size);
        return latency;
    }
    i64 r = REC(l1);
    i64 shift = st[r + L_SHIFT];
    i64 base_latency = st[r + L_LATENCY];
    i64 stall = 0;
    for (i64 line = addr >> shift; line <= (addr + size - 1) >> shift; line++) {
        i64 a = (i64)((u64)line << shift);
        if (st[H_CORES])
            snoop(st, a, write ? OP_FLUSH : OP_TOUCH);
        stall += cache_access(st, l1, a, write) - base_latency;
        if (write)
            changed(st, a, (i64)1 << shift);
    }
    return stall;
}

/* A store hit on a clean line of the write-back L1 D at `slot`: the line becomes dirty, the
 * I-caches' copies stale, the other cores' copies invalid (once per line: out of the way) */
NOINLINE void first_store_to_line(i64 *st, i64 r, i64 slot, i64 line, i64 addr) {
    i64 shift = st[r + L_SHIFT];
    make_dirty(st, r, slot, line);
    changed(st, (i64)((u64)line << shift), (i64)1 << shift);
    if (st[H_CORES])
        snoop(st, addr, OP_FLUSH);
}

/* A store written through to `level` when that level is write-back and the line is the
 * most recent of its set and already dirty (a copy's stores after the first to a line):
 * level_request's outcome, a hit that changes no line, without its general path. False,
 * and nothing done, otherwise. */
HOT bool is_dirty_mru_line(const i64 *st, i64 level, i64 addr) {
    i64 r = REC(level);
    i64 line = addr >> st[r + L_SHIFT];
    i64 s = line & (st[r + L_SETS] - 1);
    i64 m = st[st[r + L_MRU] + s];
    return (m >> MRU_WAY_BITS) == line + 1 && st[r + L_WRITE_BACK] &&
           st[st[r + L_DIRTY] + s * st[r + L_WAYS] + (m & WAY_MASK)] &&
           !UNLIKELY(st[H_SAMPLE_EVENTS]);
}

/* level_request's outcome for such a store (is_dirty_mru_line) */
HOT void store_to_dirty_mru(i64 *st, i64 level, i64 addr) {
    i64 r = REC(level);
    st[r + L_ACCESSES] += 1;
    st[r + L_HITS] += 1;
    if (UNLIKELY(level == st[H_PF_LEVEL]) && !st[H_PREFETCHING]) {
        st[H_PF_ACCESS] = addr;               /* the stream prefetcher sees demand accesses */
        st[H_PF_MISSED] = 0;
    }
    st[H_STORE_DONE] = st[r + L_LATENCY];
}

HOT bool store_to_dirty_mru_line(i64 *st, i64 level, i64 addr) {
    if (!is_dirty_mru_line(st, level, addr))
        return false;
    store_to_dirty_mru(st, level, addr);
    return true;
}

/* The L1 D line `line` (record `r`) changed: its bytes' I-cache copies are stale. The
 * second time in a row for one line, while the L1 I took no line in (L_FILLS), that is
 * already so (flagging is idempotent, and only a fill clears a flag): skipped. One core
 * only (with several, other cores' L1 I count too); H_CHANGED_*: the line + 1 and the L1 I's
 * L_FILLS when it was last done. */
HOT i64 icache_fills(const i64 *st) {
    return st[H_L1I] >= 0 ? st[REC(st[H_L1I]) + L_FILLS] : 0;
}

/* Would line_changed change nothing? */
HOT bool changed_as_before(const i64 *st, i64 line) {
    return st[H_COHERENT_I] ||                 /* (changed's own first test) */
           (line + 1 == st[H_CHANGED_LINE] && icache_fills(st) == st[H_CHANGED_IFILLS]);
}

HOT void line_changed(i64 *st, i64 r, i64 line) {
    if (changed_as_before(st, line))
        return;
    i64 fills = icache_fills(st);
    i64 shift = st[r + L_SHIFT];
    changed(st, (i64)((u64)line << shift), (i64)1 << shift);
    if (st[H_CORES] == 0) {
        st[H_CHANGED_LINE] = line + 1;
        st[H_CHANGED_IFILLS] = fills;
    }
}

/* A store through (or around: `hit` false) the store-through L1 D: it goes on below and
 * stalls nobody */
HOT void store_through_inline(i64 *st, i64 r, i64 addr, i64 line, bool hit) {
    st[r + L_ACCESSES] += 1;
    st[r + (hit ? L_HITS : L_MISSES)] += 1;
    if (st[H_CORES])
        snoop(st, addr, OP_FLUSH);
    if (st[H_QUEUE_N] == 0 && st[r + L_NEXT] != MEMORY) {
        /* what send_write_of + drain do */
        if (!store_to_dirty_mru_line(st, st[r + L_NEXT], addr)) {
            st[H_STORE_DONE] = down(st, st[r + L_NEXT], addr, true);
            drain(st);
        }
    } else {
        send_write_of(st, st[r + L_NEXT], addr, 8, true);
        drain(st);
    }
    line_changed(st, r, line);
}

/* The same, out of line: a hook's path for loads and write-back hits is shorter without the
 * walk down the levels inlined into it (only a machine with store queues, whose every store
 * goes through, has it inline) */
NOINLINE void store_through(i64 *st, i64 r, i64 addr, i64 line, bool hit) {
    store_through_inline(st, r, addr, line, hit);
}

/* Is `line` known to be absent from the L1 D (record `r`)? A store that missed a
 * store-through L1 D that does not allocate on a store leaves its line there (H_ABSENT_*):
 * the line stays absent until the level takes a line in (L_FILLS), so the copy's next
 * stores to it need no search of the set (a miss changes nothing in the set) */
enum { ABSENT_PARTS = PART_SQ | PART_MEMSYS };   /* the hooks that keep H_ABSENT_* (those
                                                  * of power4's and pentium4's store-through
                                                  * L1 D; the others' stores pay no check) */
HOT bool known_absent(const i64 *st, i64 r, i64 line) {
    return line + 1 == st[H_ABSENT_LINE] && st[r + L_FILLS] == st[H_ABSENT_FILLS];
}

/* A load or store of `size` bytes; once per line it touches. Returns stall cycles. The
 * common case, an L1 hit within one line, is handled here (inlined into the memory hook;
 * `parts`: the machine's, PART_*) */
HOT i64 data_access_of(i64 *st, i64 addr, i64 size, bool write, int parts) {
    i64 l1 = st[H_L1D];
    if (l1 >= 0) {
        i64 r = REC(l1);
        i64 shift = st[r + L_SHIFT];
        i64 line = addr >> shift;
        if (line == (addr + size - 1) >> shift) {
            i64 s = line & (st[r + L_SETS] - 1);
            i64 way = write && (parts & ABSENT_PARTS) && known_absent(st, r, line) ? -1 :
                      hit(st, r, line, s);
            if (way >= 0 && (!write || st[r + L_WRITE_BACK])) {
                st[r + L_ACCESSES] += 1;
                st[r + L_HITS] += 1;
                if (write) {
                    i64 slot = s * st[r + L_WAYS] + way;
                    if (st[st[r + L_DIRTY] + slot] == 0)       /* a clean line becomes dirty */
                        first_store_to_line(st, r, slot, line, addr);
                }
                return 0;
            }
            if (write && !st[r + L_WRITE_BACK] && (way >= 0 || !st[r + L_WRITE_ALLOCATE])) {
                if ((parts & ABSENT_PARTS) && way < 0) {
                    st[H_ABSENT_LINE] = line + 1;
                    st[H_ABSENT_FILLS] = st[r + L_FILLS];
                }
                if (parts & PART_SQ)
                    store_through_inline(st, r, addr, line, way >= 0);
                else
                    store_through(st, r, addr, line, way >= 0);
                return 0;
            }
        }
    }
    return data_lines(st, addr, size, write);
}

HOT i64 data_access(i64 *st, i64 addr, i64 size, bool write) {
    return data_access_of(st, addr, size, write, 0);
}

/* fetch beyond the common case: a stale fetch gets bytes older than the last store to them,
 * from a flagged I-cache line, or from below while the D line is dirty */
static i64 fetch_lines(i64 *st, i64 addr, i64 size, i64 pc) {
    i64 l1 = st[H_L1I];
    i64 r = REC(l1);
    i64 shift = st[r + L_SHIFT];
    i64 ways = st[r + L_WAYS];
    i64 base_latency = st[r + L_LATENCY];
    i64 stall = 0;
    for (i64 line = addr >> shift; line <= (addr + size - 1) >> shift; line++) {
        i64 a = (i64)((u64)line << shift);
        i64 flags = st[r + L_STALE] + (line & (st[r + L_SETS] - 1)) * ways;
        bool cached = find(st, r, line) >= 0;
        stall += cache_access(st, l1, a, false) - base_latency;
        i64 way = find(st, r, line);
        if (!cached && !st[H_COHERENT_I] && dirty_in_l1d(st, a, (i64)1 << shift))
            st[flags + way] = 1;                 /* filled with the old bytes from below */
        if (st[flags + way]) {
            if (st[H_STALE] == 0) {
                st[H_STALE_PC] = pc;
                st[H_STALE_ADDR] = a;
            }
            st[H_STALE] += 1;
        }
    }
    return stall;
}

/* Does [addr, addr+size) lie in one line of level record `r`? `line`: the first one */
HOT bool one_line(const i64 *st, i64 r, i64 addr, i64 size, i64 *line) {
    i64 shift = st[r + L_SHIFT];
    *line = addr >> shift;
    return *line == (addr + size - 1) >> shift;
}

/* Is the fetch of [addr, addr+size) through the L1 I (record `r`) the common case, one
 * line that is its set's most recent and not stale? */
HOT bool fetch_hits_mru(const i64 *st, i64 r, i64 addr, i64 size) {
    i64 line;
    if (!one_line(st, r, addr, size, &line))
        return false;
    i64 s = line & (st[r + L_SETS] - 1);
    i64 m = st[st[r + L_MRU] + s];
    return (m >> MRU_WAY_BITS) == line + 1 &&
           st[st[r + L_STALE] + s * st[r + L_WAYS] + (m & WAY_MASK)] == 0;
}

/* Instruction fetch of [addr, addr+size): once per I-cache line; checks coherence.
 * Returns stall cycles; the common case (the set's most recent line, not stale) here. */
HOT i64 fetch(i64 *st, i64 addr, i64 size, i64 pc) {
    i64 l1 = st[H_L1I];
    if (l1 < 0)
        return 0;
    i64 r = REC(l1);
    if (fetch_hits_mru(st, r, addr, size)) {
        st[r + L_ACCESSES] += 1;
        st[r + L_HITS] += 1;
        return 0;
    }
    return fetch_lines(st, addr, size, pc);
}

/* ------------------------------------------------------------------------ topology */

/* Do chips `a` and `b` sit on one module? */
static bool same_module(const i64 *st, i64 a, i64 b) {
    i64 per = st[H_CHIPS_PER_MODULE] > 0 ? st[H_CHIPS_PER_MODULE] : 1;
    return a / per == b / per;
}

/* The other chips' copies of the chip level `level` (emu.topology) that hold the line at
 * `addr` get `op` (OP_CLEAN: a dirty copy is written back and stays; OP_FLUSH: written back
 * if dirty and dropped; OP_INVALIDATE: dropped). Returns how far the nearest of them is:
 * 0 none, 1 on this chip's module, 2 on another. Write-backs are queued (the caller
 * drains). */
static int peer_chips(i64 *st, i64 level, i64 addr, i64 op) {
    i64 mine = st[REC(level) + L_CHIP];
    int nearest = 0;
    if (!has_presence(st, level))
        return 0;
    /* the other chips whose copy holds a line of the bucket, in the ring's order: the
     * chips after this one, then those before it */
    u64 holders = holders_of(st, level, addr >> st[REC(level) + L_SHIFT]);
    u64 after = holders & ~(((u64)2 << mine) - 1), before = holders & (((u64)1 << mine) - 1);
    for (u64 chips = after; chips || before; chips &= chips - 1) {
        if (!chips) {
            chips = before;
            before = 0;
        }
        i64 chip = __builtin_ctzll(chips);
        i64 k = copy_of(st, level, chip);
        i64 rk = REC(k);
        if (find(st, rk, addr >> st[rk + L_SHIFT]) < 0)
            continue;
        int distance = same_module(st, mine, chip) ? 1 : 2;
        if (!nearest || distance < nearest)
            nearest = distance;
        maintain_level(st, k, addr, op);
    }
    if (nearest)
        mark_sync(st);                         /* chips shared the line here */
    return nearest;
}

/* ------------------------------------------------------------------------ maintenance */

/* Every line of a level invalid (iciallu, tlbia); each valid one counted */
static void invalidate_level(i64 *st, i64 level) {
    i64 r = REC(level);
    for (i64 k = 0; k < st[r + L_SETS] * st[r + L_WAYS]; k++) {
        i64 tag = st[st[r + L_TAGS] + k];
        if (tag != 0) {
            st[st[r + L_TAGS] + k] = 0;
            st[r + L_INVALIDATIONS] += 1;
            if (st[r + L_OWNER] >= 0)          /* the copy holds no line of the level now */
                presence_clear(st, r, (tag - 1) & (PRESENCE_BUCKETS - 1));
        }
    }
    for (i64 k = 0; k < st[r + L_SETS]; k++)
        st[st[r + L_MRU] + k] = 0;
}

/* Allocate a line at a level without reading it from below (dcbz, dcba): dirty */
static void establish(i64 *st, i64 level, i64 addr) {
    i64 r = REC(level);
    i64 line = addr >> st[r + L_SHIFT];
    i64 s = line & (st[r + L_SETS] - 1);
    i64 ways = st[r + L_WAYS];
    st[r + L_ACCESSES] += 1;
    i64 way = hit(st, r, line, s);
    if (way >= 0) {
        st[r + L_HITS] += 1;
    } else {
        st[r + L_MISSES] += 1;
        way = install(st, r, s, line);
        drain(st);
    }
    if (st[r + L_GROUP] >= 0) {
        peer_chips(st, level, addr, OP_FLUSH);
        drain(st);
    }
    make_dirty(st, r, s * ways + way, line);
}

/* icbi / ICIMVAU: the line leaves the L1 I of every core (icbi is broadcast) */
static void icache_invalidate(i64 *st, i64 addr) {
    i64 l1i = st[H_L1I];
    if (!has_presence(st, l1i)) {          /* one core (or no L1 I): its own, if any */
        if (l1i >= 0)
            maintain_level(st, l1i, addr, OP_INVALIDATE);
        return;
    }
    for (u64 holders = holders_of(st, l1i, addr >> st[REC(l1i) + L_SHIFT]); holders;
         holders &= holders - 1)
        maintain_level(st, copy_of(st, l1i, __builtin_ctzll(holders)), addr, OP_INVALIDATE);
}

/* The architectural effect of one cache-maintenance instruction (at `pc`, -1: unknown) on
 * its line. Returns stall cycles: a write-back a maintenance instruction forces is waited
 * for on the spot, or posted (H_POSTED: post_write_back), when the barrier waits for it. */
static i64 maintain(i64 *st, i64 addr, i64 op, i64 scope, i64 pc) {
    i64 l1d = st[H_L1D];
    if (op == OP_ICACHE_INVALIDATE) {
        icache_invalidate(st, addr);
        return 0;
    }
    if (op == OP_ICACHE_INVALIDATE_ALL) {
        if (st[H_L1I] >= 0)
            invalidate_level(st, st[H_L1I]);
        return 0;
    }
    /* by address, an operation reaches every core's L1 D (PowerPC dcb* are broadcast;
     * Linux sets the A9's ACTLR.FW so that maintenance by MVA is too) */
    if (st[H_CORES] && op != OP_TOUCH_OUTER)
        snoop(st, addr, op == OP_ZERO || op == OP_ALLOCATE ? OP_FLUSH : op);
    if (op == OP_TOUCH)
        return prefetch_line(st, l1d >= 0 ? l1d : MEMORY, addr, false);
    if (op == OP_TOUCH_OUTER) {            /* prefetch into the first unified level only */
        i64 wait = prefetch_line(st, st[H_FIRST_LEVEL], addr, false);
        return st[H_FB_ENTRIES] ? wait : 0;   /* without fill buffers: not waited for */
    }
    if (op == OP_ZERO || op == OP_ALLOCATE) {
        i64 level = l1d >= 0 ? l1d : st[H_FIRST_LEVEL];
        /* a store-through level holds nothing that is not below it: the line is
         * established further out (POWER4 performs dcbz in its L2) */
        while (level != MEMORY && !st[REC(level) + L_WRITE_BACK])
            level = st[REC(level) + L_NEXT];
        if (level == MEMORY)
            st[H_MEM_WRITES] += 1;
        else
            establish(st, level, addr);
        if (op == OP_ZERO) {                 /* zeros over the whole block: a store */
            i64 unit = l1d >= 0 ? l1d : level;
            i64 shift = unit >= 0 ? st[REC(unit) + L_SHIFT] : 0;
            changed(st, (addr >> shift) << shift, (i64)1 << shift);
        }
        return 0;
    }
    /* clean / flush / invalidate: L1 D only, or every data level from L1 D outwards. A
     * posted write-back leaves at the instruction's issue: on the 750's bus its data tenure
     * (memory_write, which books at the clock) is booked from there, so the clock is set
     * back to the issue for the walk and restored after it. */
    i64 clock = st[H_CYCLES];
    i64 at = st[H_POSTED] ? issue_time(st, pc) : clock;
    st[H_CYCLES] = at;
    i64 level = l1d >= 0 ? l1d : st[H_FIRST_LEVEL];
    i64 latency = 0;                       /* the write-back's, through the levels it passes */
    bool wrote_any = false;
    while (level != MEMORY) {
        i64 r = REC(level);
        i64 wrote = maintain_level(st, level, addr, op);
        if (st[r + L_GROUP] >= 0)
            peer_chips(st, level, addr, op);   /* the other chips' copies: broadcast */
        drain(st);
        if (wrote) {
            i64 next = st[r + L_NEXT];
            latency += next == MEMORY ? st[H_MEM_LAT] : st[REC(next) + L_LATENCY];
            wrote_any = true;
        }
        if (scope == SCOPE_L1)
            break;
        level = st[r + L_NEXT];
    }
    st[H_CYCLES] = clock;
    if (!wrote_any)
        return 0;
    if (!st[H_POSTED])
        return latency;                    /* not posted: the instruction waits for it */
    return post_write_back(st, at, latency);
}

/* ------------------------------------------------------- write-combining (x86 movnt*) */

/* Write one write-combining buffer out: a full line is one burst, else a partial write. The
 * buffer is free again when its transfer has ended. */
static void wc_drain(i64 *st, i64 k) {
    i64 wc = st[H_WC] + WC_WORDS * k;
    if (st[wc] == 0)
        return;
    st[H_WC_FLUSHES] += 1;
    if (st[wc + 1] < st[H_WC_LINE])
        st[H_WC_PARTIAL] += 1;
    st[H_MEM_WRITES] += 1;
    st[wc + 3] = st[H_BUS_BEAT_MC] ? write_combining_transfer(st, st[wc + 1]) : 0;
    st[wc] = 0;
    st[wc + 1] = 0;
}

/* A movnt* store: evict the line from every cache (writing it back if dirty), then merge
 * the bytes into a write-combining buffer (see emu.cache.nontemporal_store). A store that
 * needs a buffer while its transfer is still on the bus waits for it. Returns that wait. */
static i64 nontemporal_store(i64 *st, i64 addr, i64 size) {
    st[H_NT_STORES] += 1;
    i64 level = st[H_L1D] >= 0 ? st[H_L1D] : st[H_FIRST_LEVEL];
    while (level != MEMORY) {
        maintain_level(st, level, addr, OP_FLUSH);
        drain(st);
        level = st[REC(level) + L_NEXT];
    }
    changed(st, addr, size);
    i64 n = st[H_WC_N];
    if (n == 0) {
        st[H_MEM_WRITES] += 1;
        memory_write(st, size);
        return 0;
    }
    i64 line = floor_div(addr, st[H_WC_LINE]);
    i64 chosen = -1;
    for (i64 k = 0; k < n; k++)
        if (st[st[H_WC] + WC_WORDS * k] == line + 1)
            chosen = k;
    i64 wait = 0;
    if (chosen < 0) {
        i64 oldest = 0;
        for (i64 k = 0; k < n; k++) {       /* an empty buffer, the one free soonest */
            i64 wc = st[H_WC] + WC_WORDS * k;
            if (st[wc] == 0 && (chosen < 0 || st[wc + 3] < st[st[H_WC] + WC_WORDS * chosen + 3]))
                chosen = k;
            if (st[wc + 2] < st[st[H_WC] + WC_WORDS * oldest + 2])
                oldest = k;
        }
        if (chosen < 0) {
            wc_drain(st, oldest);
            chosen = oldest;
        }
        i64 wc = st[H_WC] + WC_WORDS * chosen;
        if (st[wc + 3] > st[H_CYCLES]) {       /* its last transfer is still on the bus */
            wait = st[wc + 3] - st[H_CYCLES];
            st[H_WC_WAIT] += wait;
        }
        st[wc] = line + 1;
        st[wc + 2] = st[H_NT_STORES];
    }
    i64 wc = st[H_WC] + WC_WORDS * chosen;
    st[wc + 1] += size;
    if (st[wc + 1] >= st[H_WC_LINE])
        wc_drain(st, chosen);
    return wait;
}

/* sfence, mfence: every write-combining buffer goes out; returns the wait until the last
 * transfer has ended (they are then globally visible) */
static i64 drain_write_combining(i64 *st) {
    i64 last = st[H_CYCLES];
    for (i64 k = 0; k < st[H_WC_N]; k++) {
        wc_drain(st, k);
        last = max64(last, st[st[H_WC] + WC_WORDS * k + 3]);
    }
    return last - st[H_CYCLES];
}

/* ------------------------------------------------------------ what Python calls */

EXPORT i64 emu_access(i64 *st, i64 level, i64 addr, i64 write) {
    return cache_access(st, level, addr, write != 0);
}
EXPORT i64 emu_data_access(i64 *st, i64 addr, i64 size, i64 write) {
    return data_access(st, addr, size, write != 0);
}
EXPORT i64 emu_fetch(i64 *st, i64 addr, i64 size, i64 pc) { return fetch(st, addr, size, pc); }
EXPORT i64 emu_maintain(i64 *st, i64 addr, i64 op, i64 scope) {
    return maintain(st, addr, op, scope, -1);
}
EXPORT i64 emu_maintain_level(i64 *st, i64 level, i64 addr, i64 op) {
    return maintain_level(st, level, addr, op);
}
EXPORT i64 emu_alignment(i64 *st, i64 addr, i64 size) { return alignment(st, addr, size); }
EXPORT i64 emu_store_queue(i64 *st, i64 addr, i64 size, i64 now) {
    return store_queue(st, addr, size, now);
}
EXPORT i64 emu_nontemporal_store(i64 *st, i64 addr, i64 size) {
    return nontemporal_store(st, addr, size);
}
EXPORT i64 emu_drain_write_combining(i64 *st) { return drain_write_combining(st); }
EXPORT void emu_account(i64 *st, i64 offset, i64 cycles) { account(st, offset, cycles); }
EXPORT void emu_snoop(i64 *st, i64 addr, i64 op) { snoop(st, addr, op); }
EXPORT i64 emu_serialise(i64 *st, i64 resource, i64 service) {
    return serialise(st, resource, service);
}
EXPORT i64 emu_outer_cache_write(i64 *st, i64 offset, i64 value) {
    return outer_cache_write(st, offset, value);
}
EXPORT void emu_invalidate_level(i64 *st, i64 level) { invalidate_level(st, level); }
EXPORT void emu_drop_line(i64 *st, i64 level, i64 line, i64 way) {
    drop_line(st, level, line, way);
}
EXPORT i64 emu_find(i64 *st, i64 r, i64 line) { return find(st, r, line); }
EXPORT i64 emu_hit(i64 *st, i64 r, i64 line, i64 s) { return hit(st, r, line, s); }
EXPORT void emu_changed(i64 *st, i64 addr, i64 length) { changed(st, addr, length); }
