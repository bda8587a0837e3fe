/*
 * mf_pending: the table of in-flight outgoing requests, keyed by int64 request id.
 *
 * Each entry has an id, an opaque waiter pointer (never NULL; whoever stores it owns
 * whatever reference it stands for) and a deadline (+inf: none).  Three structures:
 *
 *   slots    stable storage for id and waiter; a slot index never changes while its entry
 *            lives, so the other two structures refer to entries by index.  Freed slots go
 *            on a free list threaded through heap_pos.
 *   buckets  open addressing, power-of-two size, load <= 1/2, robin-hood linear probing,
 *            mapping id -> slot index.  Each bucket keeps the id and its distance from its
 *            home bucket beside the slot index, so probes never touch the slot array.
 *            Deletion shifts the following displaced entries back one bucket (no
 *            tombstones), stopping at the first entry that sits in its home bucket; a miss
 *            stops as soon as it meets an entry closer to home than the probe.
 *   heap     4-ary min-heap ordered by (deadline, id), each element carrying its deadline
 *            (compared without touching the slots) and its slot index; each slot records
 *            its heap position, so removing an entry on pop/cancel is O(log n) and the heap
 *            never holds dead entries.  Entries without a deadline are not in the heap.
 *
 * Hashing starts as the identity on the id's low bits: the ids in flight come from a
 * counter, so they form a window narrower than the bucket array and occupy consecutive
 * buckets with no collisions at all (and neighbouring ids share cache lines).  Ids that do
 * not spread that way (strided ids, say) make long probe runs; the first insert whose run
 * passes MF_PENDING_MAX_PROBE switches the table for good to Fibonacci hashing, which
 * spreads such arithmetic patterns, and rehashes.
 *
 * Arrays start small and double on demand up to the capacity limit; nothing is allocated
 * beyond it.  No Python objects here: the caller decides what a waiter is.
 */
#ifndef MCPFAST_PENDING_H
#define MCPFAST_PENDING_H

#include <math.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#ifdef __cplusplus
extern "C" {
#endif

/* Largest capacity accepted: slot indices are uint32_t and the bucket array (twice the
 * slots) must still be indexable by one. */
#define MF_PENDING_MAX_CAPACITY (1u << 30)
#define MF_PENDING_NIL UINT32_MAX /* no slot / not in the heap / end of the free list */
#define MF_PENDING_FIRST_SLOTS 16u
#define MF_PENDING_MAX_PROBE 32u /* identity hashing is abandoned past this probe length */

/* Results of mf_pending_init / mf_pending_add. */
#define MF_PENDING_OK 0
#define MF_PENDING_DUPLICATE 1    /* the id is already in the table */
#define MF_PENDING_FULL 2         /* count == capacity */
#define MF_PENDING_NOMEM 3        /* an allocation failed; the table is unchanged */
#define MF_PENDING_BAD_DEADLINE 4 /* NaN deadline */
#define MF_PENDING_BAD_CAPACITY 5 /* capacity 0 or above MF_PENDING_MAX_CAPACITY */

typedef struct mf_pending_slot {
    int64_t id;
    void *waiter;      /* NULL: the slot is free */
    uint32_t heap_pos; /* live: index in heap or MF_PENDING_NIL; free: next free slot */
} mf_pending_slot;

typedef struct mf_pending_bucket {
    int64_t id;
    uint32_t slot; /* MF_PENDING_NIL: empty bucket */
    uint32_t dist; /* how far past its home bucket the entry sits */
} mf_pending_bucket;

typedef struct mf_pending_heap_entry {
    double deadline;
    uint32_t slot;
} mf_pending_heap_entry;

/* One removed entry, as mf_pending_drain reports it. */
typedef struct mf_pending_entry {
    int64_t id;
    void *waiter;
} mf_pending_entry;

typedef struct mf_pending {
    mf_pending_slot *slots;
    mf_pending_heap_entry *heap; /* room for slot_cap entries */
    mf_pending_bucket *buckets;
    uint32_t count;              /* live entries */
    uint32_t capacity;           /* limit on count */
    uint32_t slot_cap;           /* slots (and heap entries) allocated */
    uint32_t slot_top;           /* slots[0, slot_top) have been handed out at least once */
    uint32_t free_head;          /* first free slot below slot_top, or MF_PENDING_NIL */
    uint32_t heap_len;
    uint32_t bucket_mask;        /* number of buckets - 1 */
    unsigned bucket_bits;        /* log2(number of buckets) */
    int mixed;                   /* hash mode: 0 identity, 1 Fibonacci (see the top) */
} mf_pending;

/* ---- hashing ---- */

/* Home bucket of id.  Identity mode: the id's low bits.  Mixed mode: the top bits of
 * id * 2^64/phi (Fibonacci hashing). */
static inline uint32_t mf_pending_home(const mf_pending *t, int64_t id) {
    if (t->mixed)
        return (uint32_t)(((uint64_t)id * 0x9E3779B97F4A7C15ULL) >> (64 - t->bucket_bits));
    return (uint32_t)(uint64_t)id & t->bucket_mask;
}

static inline void mf_pending_buckets_empty(mf_pending_bucket *b, size_t n) {
    for (size_t i = 0; i < n; i++) {
        b[i].id = 0;
        b[i].slot = MF_PENDING_NIL;
        b[i].dist = 0;
    }
}

/* Smallest power of two >= 2 * slots (at least 8), and its log2. */
static inline size_t mf_pending_bucket_count(uint32_t slots, unsigned *log2) {
    size_t n = 8;
    unsigned bits = 3;
    while (n < 2 * (size_t)slots) {
        n <<= 1;
        bits++;
    }
    *log2 = bits;
    return n;
}

/* ---- life cycle ---- */

/* Release the table's memory (not the waiters: drain them first if they own anything). */
static inline void mf_pending_free(mf_pending *t) {
    free(t->slots);
    free(t->heap);
    free(t->buckets);
    t->slots = NULL;
    t->heap = NULL;
    t->buckets = NULL;
    t->count = t->slot_cap = t->slot_top = t->heap_len = 0;
    t->free_head = MF_PENDING_NIL;
}

/* Set up an empty table that will hold at most `capacity` entries.  On failure the table
 * holds no memory (mf_pending_free is still safe to call). */
static inline int mf_pending_init(mf_pending *t, uint32_t capacity) {
    memset(t, 0, sizeof(*t));
    t->free_head = MF_PENDING_NIL;
    if (capacity == 0 || capacity > MF_PENDING_MAX_CAPACITY) return MF_PENDING_BAD_CAPACITY;
    t->capacity = capacity;
    uint32_t slots = capacity < MF_PENDING_FIRST_SLOTS ? capacity : MF_PENDING_FIRST_SLOTS;
    unsigned bits;
    size_t nbuckets = mf_pending_bucket_count(slots, &bits);
    t->slots = (mf_pending_slot *)malloc(slots * sizeof(mf_pending_slot));
    t->heap = (mf_pending_heap_entry *)malloc(slots * sizeof(mf_pending_heap_entry));
    t->buckets = (mf_pending_bucket *)malloc(nbuckets * sizeof(mf_pending_bucket));
    if (t->slots == NULL || t->heap == NULL || t->buckets == NULL) {
        mf_pending_free(t);
        return MF_PENDING_NOMEM;
    }
    mf_pending_buckets_empty(t->buckets, nbuckets);
    t->slot_cap = slots;
    t->bucket_mask = (uint32_t)(nbuckets - 1);
    t->bucket_bits = bits;
    return MF_PENDING_OK;
}

/* ---- buckets ---- */

/* Bucket index holding id, or MF_PENDING_NIL. */
static inline uint32_t mf_pending_find(const mf_pending *t, int64_t id) {
    const mf_pending_bucket *b = t->buckets;
    uint32_t mask = t->bucket_mask;
    uint32_t i = mf_pending_home(t, id);
    for (uint32_t dist = 0;; dist++) {
        /* An empty bucket has dist 0, so this also stops at empty buckets after the home. */
        if (b[i].slot == MF_PENDING_NIL || b[i].dist < dist) return MF_PENDING_NIL;
        if (b[i].id == id) return i;
        i = (i + 1) & mask;
    }
}

static inline int mf_pending_contains(const mf_pending *t, int64_t id) {
    return mf_pending_find(t, id) != MF_PENDING_NIL;
}

/* Insert an id known to be absent: robin hood -- an entry farther from home takes the
 * bucket of one nearer to home, which moves on.  Returns the largest distance from home
 * at which this insert placed an entry. */
static inline uint32_t mf_pending_bucket_insert(mf_pending *t, int64_t id, uint32_t slot) {
    mf_pending_bucket *b = t->buckets;
    uint32_t mask = t->bucket_mask;
    uint32_t i = mf_pending_home(t, id);
    uint32_t longest = 0;
    mf_pending_bucket carry;
    carry.id = id;
    carry.slot = slot;
    carry.dist = 0;
    for (;;) {
        if (b[i].slot == MF_PENDING_NIL) {
            b[i] = carry;
            return carry.dist > longest ? carry.dist : longest;
        }
        if (b[i].dist < carry.dist) {
            mf_pending_bucket moved = b[i];
            b[i] = carry;
            if (carry.dist > longest) longest = carry.dist;
            carry = moved;
        }
        carry.dist++;
        i = (i + 1) & mask;
    }
}

/* Empty bucket i: the displaced entries after it each move back one bucket. */
static inline void mf_pending_bucket_delete(mf_pending *t, uint32_t i) {
    mf_pending_bucket *b = t->buckets;
    uint32_t mask = t->bucket_mask;
    for (;;) {
        uint32_t next = (i + 1) & mask;
        if (b[next].slot == MF_PENDING_NIL || b[next].dist == 0) break;
        b[i] = b[next];
        b[i].dist--;
        i = next;
    }
    b[i].slot = MF_PENDING_NIL;
    b[i].dist = 0;
}

/* ---- deadline heap ---- */

/* Does heap element a expire before heap element b?  Equal deadlines: the smaller id. */
static inline int mf_pending_before(const mf_pending *t, const mf_pending_heap_entry *a,
                                    const mf_pending_heap_entry *b) {
    if (a->deadline != b->deadline) return a->deadline < b->deadline;
    return t->slots[a->slot].id < t->slots[b->slot].id;
}

/* The heap is 4-ary: half the depth of a binary heap, and the four children of a node sit
 * side by side in memory.  Children of i: 4i+1 .. 4i+4; parent: (i-1)/4. */
#define MF_PENDING_PARENT(i) (((i) - 1) / 4)

static inline void mf_pending_heap_put(mf_pending *t, uint32_t pos, mf_pending_heap_entry e) {
    t->heap[pos] = e;
    t->slots[e.slot].heap_pos = pos;
}

/* Place e at the hole pos or above it. */
static inline void mf_pending_sift_up(mf_pending *t, uint32_t pos, mf_pending_heap_entry e) {
    mf_pending_heap_entry *h = t->heap;
    while (pos > 0) {
        uint32_t parent = MF_PENDING_PARENT(pos);
        if (!mf_pending_before(t, &e, &h[parent])) break;
        mf_pending_heap_put(t, pos, h[parent]);
        pos = parent;
    }
    mf_pending_heap_put(t, pos, e);
}

/* Index of the earliest of the children first .. first+count-1 (count 1..4). */
static inline uint32_t mf_pending_min_child(const mf_pending *t, uint32_t first, uint32_t count) {
    const mf_pending_heap_entry *h = t->heap;
    if (count == 4) {
        /* A two-round tournament: the two first-round comparisons are independent. */
        uint32_t a = first + (uint32_t)mf_pending_before(t, &h[first + 1], &h[first]);
        uint32_t b = first + 2 + (uint32_t)mf_pending_before(t, &h[first + 3], &h[first + 2]);
        return mf_pending_before(t, &h[b], &h[a]) ? b : a;
    }
    uint32_t best = first;
    for (uint32_t c = first + 1; c < first + count; c++)
        if (mf_pending_before(t, &h[c], &h[best])) best = c;
    return best;
}

/* Fill the hole at pos with e, where e is not before pos's parent.  The hole first walks
 * down to a leaf along the earliest child, then e sifts up from there -- usually not at
 * all, since e comes from the end of the heap and is late. */
static inline void mf_pending_sift_down(mf_pending *t, uint32_t pos, mf_pending_heap_entry e) {
    uint64_t n = t->heap_len;
    for (;;) {
        uint64_t first = 4 * (uint64_t)pos + 1; /* 64-bit: 4 * pos may pass 2^32 */
        if (first >= n) break;
        uint32_t count = n - first < 4 ? (uint32_t)(n - first) : 4;
        uint32_t child = mf_pending_min_child(t, (uint32_t)first, count);
        mf_pending_heap_put(t, pos, t->heap[child]);
        pos = child;
    }
    mf_pending_sift_up(t, pos, e);
}

static inline void mf_pending_heap_push(mf_pending *t, uint32_t slot, double deadline) {
    mf_pending_heap_entry e;
    e.deadline = deadline;
    e.slot = slot;
    mf_pending_sift_up(t, t->heap_len++, e);
}

static inline void mf_pending_heap_remove(mf_pending *t, uint32_t pos) {
    t->slots[t->heap[pos].slot].heap_pos = MF_PENDING_NIL;
    uint32_t n = --t->heap_len;
    if (pos == n) return; /* removed the last element itself */
    mf_pending_heap_entry last = t->heap[n];
    if (pos > 0 && mf_pending_before(t, &last, &t->heap[MF_PENDING_PARENT(pos)]))
        mf_pending_sift_up(t, pos, last);
    else
        mf_pending_sift_down(t, pos, last);
}

/* ---- growth ---- */

/* Re-insert every live entry into a new bucket array of 2^bits buckets (hashed in the
 * table's current mode).  On allocation failure nothing changes. */
static inline int mf_pending_rehash(mf_pending *t, unsigned bits) {
    size_t nbuckets = (size_t)1 << bits;
    mf_pending_bucket *buckets = (mf_pending_bucket *)malloc(nbuckets * sizeof(mf_pending_bucket));
    if (buckets == NULL) return MF_PENDING_NOMEM;
    mf_pending_buckets_empty(buckets, nbuckets);
    free(t->buckets);
    t->buckets = buckets;
    t->bucket_mask = (uint32_t)(nbuckets - 1);
    t->bucket_bits = bits;
    for (uint32_t i = 0; i < t->slot_top; i++)
        if (t->slots[i].waiter != NULL) mf_pending_bucket_insert(t, t->slots[i].id, i);
    return MF_PENDING_OK;
}

/* Double the slot array (up to capacity), rehashing when the buckets would pass load 1/2.
 * On failure the table is still consistent and unchanged in content; some arrays may
 * already be larger, which is harmless. */
static inline int mf_pending_grow(mf_pending *t) {
    uint32_t new_cap = t->slot_cap > t->capacity / 2 ? t->capacity : t->slot_cap * 2;
    unsigned bits;
    size_t nbuckets = mf_pending_bucket_count(new_cap, &bits);
    /* Rehash first: on failure the old, smaller arrays are all still in place. */
    if (nbuckets != (size_t)t->bucket_mask + 1 && mf_pending_rehash(t, bits) != MF_PENDING_OK)
        return MF_PENDING_NOMEM;
    mf_pending_slot *slots =
        (mf_pending_slot *)realloc(t->slots, (size_t)new_cap * sizeof(mf_pending_slot));
    if (slots == NULL) return MF_PENDING_NOMEM; /* the larger buckets are harmless */
    t->slots = slots;
    mf_pending_heap_entry *heap = (mf_pending_heap_entry *)realloc(
        t->heap, (size_t)new_cap * sizeof(mf_pending_heap_entry));
    if (heap == NULL) return MF_PENDING_NOMEM; /* the larger slot array is harmless */
    t->heap = heap;
    t->slot_cap = new_cap;
    return MF_PENDING_OK;
}

/* ---- the operations ---- */

/* Add id -> waiter (non-NULL) with a deadline (+inf: none).  Returns MF_PENDING_OK,
 * MF_PENDING_DUPLICATE, MF_PENDING_FULL, MF_PENDING_BAD_DEADLINE or MF_PENDING_NOMEM; on
 * any error the table is unchanged. */
static inline int mf_pending_add(mf_pending *t, int64_t id, void *waiter, double deadline) {
    if (isnan(deadline)) return MF_PENDING_BAD_DEADLINE;
    if (mf_pending_find(t, id) != MF_PENDING_NIL) return MF_PENDING_DUPLICATE;
    if (t->count >= t->capacity) return MF_PENDING_FULL;
    uint32_t slot;
    if (t->free_head != MF_PENDING_NIL) {
        slot = t->free_head;
        t->free_head = t->slots[slot].heap_pos;
    } else {
        if (t->slot_top == t->slot_cap) {
            int rc = mf_pending_grow(t);
            if (rc != MF_PENDING_OK) return rc;
        }
        slot = t->slot_top++;
    }
    mf_pending_slot *s = &t->slots[slot];
    s->id = id;
    s->waiter = waiter;
    s->heap_pos = MF_PENDING_NIL;
    if (mf_pending_bucket_insert(t, id, slot) > MF_PENDING_MAX_PROBE && !t->mixed) {
        /* These ids do not suit identity hashing.  Should the rehash fail for want of
         * memory, the table stays correct in identity mode, only slower. */
        t->mixed = 1;
        if (mf_pending_rehash(t, t->bucket_bits) != MF_PENDING_OK) t->mixed = 0;
    }
    t->count++;
    if (deadline < INFINITY) mf_pending_heap_push(t, slot, deadline);
    return MF_PENDING_OK;
}

/* Remove the entry in bucket b; returns its waiter. */
static inline void *mf_pending_remove_bucket(mf_pending *t, uint32_t b) {
    uint32_t slot = t->buckets[b].slot;
    mf_pending_bucket_delete(t, b);
    mf_pending_slot *s = &t->slots[slot];
    if (s->heap_pos != MF_PENDING_NIL) mf_pending_heap_remove(t, s->heap_pos);
    void *waiter = s->waiter;
    s->waiter = NULL;
    s->heap_pos = t->free_head;
    t->free_head = slot;
    t->count--;
    return waiter;
}

/* Remove id; returns its waiter, or NULL when id is not in the table. */
static inline void *mf_pending_pop(mf_pending *t, int64_t id) {
    uint32_t b = mf_pending_find(t, id);
    if (b == MF_PENDING_NIL) return NULL;
    return mf_pending_remove_bucket(t, b);
}

/* Earliest deadline in the table, +inf when no entry has one. */
static inline double mf_pending_next_deadline(const mf_pending *t) {
    return t->heap_len ? t->heap[0].deadline : INFINITY;
}

/* Remove the entry with the earliest deadline (ties: smallest id) if that deadline is
 * <= now; returns its waiter, or NULL when nothing has expired by now. */
static inline void *mf_pending_pop_expired(mf_pending *t, double now) {
    if (t->heap_len == 0 || !(t->heap[0].deadline <= now)) return NULL;
    return mf_pending_remove_bucket(t, mf_pending_find(t, t->slots[t->heap[0].slot].id));
}

/* Remove the entry in slot i if it is live; returns its waiter, or NULL.  Lets a caller
 * release every entry without allocating (tolerates the table changing between calls). */
static inline void *mf_pending_pop_slot(mf_pending *t, uint32_t i) {
    if (i >= t->slot_top || t->slots[i].waiter == NULL) return NULL;
    return mf_pending_remove_bucket(t, mf_pending_find(t, t->slots[i].id));
}

static int mf_pending_entry_cmp(const void *a, const void *b) {
    int64_t x = ((const mf_pending_entry *)a)->id, y = ((const mf_pending_entry *)b)->id;
    return (x > y) - (x < y);
}

/* Remove every entry, writing them to out (room for t->count entries) in ascending id
 * order; returns how many.  Memory is kept for reuse. */
static inline uint32_t mf_pending_drain(mf_pending *t, mf_pending_entry *out) {
    uint32_t n = 0;
    for (uint32_t i = 0; i < t->slot_top; i++) {
        if (t->slots[i].waiter != NULL) {
            out[n].id = t->slots[i].id;
            out[n].waiter = t->slots[i].waiter;
            n++;
        }
    }
    if (n > 1) qsort(out, n, sizeof(mf_pending_entry), mf_pending_entry_cmp);
    if (t->buckets != NULL) mf_pending_buckets_empty(t->buckets, (size_t)t->bucket_mask + 1);
    t->count = t->slot_top = t->heap_len = 0;
    t->free_head = MF_PENDING_NIL;
    return n;
}

#ifdef __cplusplus
}
#endif

#endif /* MCPFAST_PENDING_H */
