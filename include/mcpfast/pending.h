/*
 * mf_pending: the table of in-flight outgoing requests, keyed by int64 request id.
 *
 * Each entry is a slot holding an opaque waiter pointer (never NULL; whoever stores it owns
 * whatever reference it stands for) and a deadline (+inf: none).  Three structures:
 *
 *   slots    stable storage for entries; a slot index never changes while its entry lives,
 *            so the other two structures refer to entries by index.  Freed slots go on a
 *            free list threaded through heap_pos.
 *   buckets  open addressing, power-of-two size, linear probing, load <= 1/2, mapping
 *            id -> slot index.  Deletion shifts later entries of the run backwards (Knuth's
 *            algorithm R), so there are no tombstones and lookups never slow down with churn.
 *            Each bucket keeps the id beside the slot index, so a probe that misses does not
 *            touch the slot array.
 *   heap     binary min-heap of slot indices ordered by (deadline, id); each slot records its
 *            heap position, so removing an entry on pop/cancel is O(log n) and the heap never
 *            holds dead entries.  Entries without a deadline are not in the heap.
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

/* Results of mf_pending_init / mf_pending_add. */
#define MF_PENDING_OK 0
#define MF_PENDING_DUPLICATE 1 /* the id is already in the table */
#define MF_PENDING_FULL 2      /* count == capacity */
#define MF_PENDING_NOMEM 3     /* an allocation failed; the table is unchanged */
#define MF_PENDING_BAD_DEADLINE 4 /* NaN deadline */
#define MF_PENDING_BAD_CAPACITY 5 /* capacity 0 or above MF_PENDING_MAX_CAPACITY */

typedef struct mf_pending_slot {
    int64_t id;
    double deadline;   /* +inf: no deadline */
    void *waiter;      /* NULL: the slot is free */
    uint32_t heap_pos; /* live: index in heap or MF_PENDING_NIL; free: next free slot */
} mf_pending_slot;

typedef struct mf_pending_bucket {
    int64_t id;
    uint32_t slot; /* MF_PENDING_NIL: empty bucket */
} mf_pending_bucket;

/* One removed entry, as mf_pending_drain reports it. */
typedef struct mf_pending_entry {
    int64_t id;
    void *waiter;
} mf_pending_entry;

typedef struct mf_pending {
    mf_pending_slot *slots;
    uint32_t *heap;             /* slot indices; room for slot_cap entries */
    mf_pending_bucket *buckets;
    uint32_t count;             /* live entries */
    uint32_t capacity;          /* limit on count */
    uint32_t slot_cap;          /* slots (and heap entries) allocated */
    uint32_t slot_top;          /* slots[0, slot_top) have been handed out at least once */
    uint32_t free_head;         /* first free slot below slot_top, or MF_PENDING_NIL */
    uint32_t heap_len;
    uint32_t bucket_mask;       /* number of buckets - 1 */
    unsigned bucket_shift;      /* 64 - log2(number of buckets) */
} mf_pending;

/* Fibonacci hashing: the top bits of id * 2^64/phi.  Sequential ids (the common case) and
 * strided ids both spread evenly over the buckets. */
static inline uint32_t mf_pending_home(const mf_pending *t, int64_t id) {
    return (uint32_t)(((uint64_t)id * 0x9E3779B97F4A7C15ULL) >> t->bucket_shift);
}

static inline void mf_pending_buckets_empty(mf_pending_bucket *b, size_t n) {
    for (size_t i = 0; i < n; i++) {
        b[i].id = 0;
        b[i].slot = MF_PENDING_NIL;
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
    t->heap = (uint32_t *)malloc(slots * sizeof(uint32_t));
    t->buckets = (mf_pending_bucket *)malloc(nbuckets * sizeof(mf_pending_bucket));
    if (t->slots == NULL || t->heap == NULL || t->buckets == NULL) {
        free(t->slots);
        free(t->heap);
        free(t->buckets);
        t->slots = NULL;
        t->heap = NULL;
        t->buckets = NULL;
        return MF_PENDING_NOMEM;
    }
    mf_pending_buckets_empty(t->buckets, nbuckets);
    t->slot_cap = slots;
    t->bucket_mask = (uint32_t)(nbuckets - 1);
    t->bucket_shift = 64 - bits;
    return MF_PENDING_OK;
}

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

/* Bucket index holding id, or MF_PENDING_NIL. */
static inline uint32_t mf_pending_find(const mf_pending *t, int64_t id) {
    const mf_pending_bucket *b = t->buckets;
    uint32_t mask = t->bucket_mask;
    uint32_t i = mf_pending_home(t, id);
    while (b[i].slot != MF_PENDING_NIL) {
        if (b[i].id == id) return i;
        i = (i + 1) & mask;
    }
    return MF_PENDING_NIL;
}

static inline int mf_pending_contains(const mf_pending *t, int64_t id) {
    return mf_pending_find(t, id) != MF_PENDING_NIL;
}

/* ---- deadline heap ---- */

/* Does slot a expire before slot b?  Ties on deadline go to the smaller id. */
static inline int mf_pending_before(const mf_pending_slot *s, uint32_t a, uint32_t b) {
    return s[a].deadline < s[b].deadline ||
           (s[a].deadline == s[b].deadline && s[a].id < s[b].id);
}

static inline void mf_pending_sift_up(mf_pending *t, uint32_t pos) {
    uint32_t *h = t->heap;
    mf_pending_slot *s = t->slots;
    uint32_t moving = h[pos];
    while (pos > 0) {
        uint32_t parent = (pos - 1) / 2;
        if (!mf_pending_before(s, moving, h[parent])) break;
        h[pos] = h[parent];
        s[h[pos]].heap_pos = pos;
        pos = parent;
    }
    h[pos] = moving;
    s[moving].heap_pos = pos;
}

static inline void mf_pending_sift_down(mf_pending *t, uint32_t pos) {
    uint32_t *h = t->heap;
    mf_pending_slot *s = t->slots;
    uint32_t n = t->heap_len;
    uint32_t moving = h[pos];
    for (;;) {
        uint32_t child = 2 * pos + 1;
        if (child >= n) break;
        if (child + 1 < n && mf_pending_before(s, h[child + 1], h[child])) child++;
        if (!mf_pending_before(s, h[child], moving)) break;
        h[pos] = h[child];
        s[h[pos]].heap_pos = pos;
        pos = child;
    }
    h[pos] = moving;
    s[moving].heap_pos = pos;
}

static inline void mf_pending_heap_remove(mf_pending *t, uint32_t pos) {
    uint32_t last = t->heap[--t->heap_len];
    t->slots[t->heap[pos]].heap_pos = MF_PENDING_NIL;
    if (pos == t->heap_len) return; /* removed the last element itself */
    t->heap[pos] = last;
    t->slots[last].heap_pos = pos;
    if (pos > 0 && mf_pending_before(t->slots, last, t->heap[(pos - 1) / 2]))
        mf_pending_sift_up(t, pos);
    else
        mf_pending_sift_down(t, pos);
}

/* ---- growth ---- */

static inline void mf_pending_bucket_insert(mf_pending *t, int64_t id, uint32_t slot) {
    uint32_t mask = t->bucket_mask;
    uint32_t i = mf_pending_home(t, id);
    while (t->buckets[i].slot != MF_PENDING_NIL) i = (i + 1) & mask;
    t->buckets[i].id = id;
    t->buckets[i].slot = slot;
}

/* Double the slot array (up to capacity), rehashing when the buckets would pass load 1/2.
 * Either everything grows or nothing changes. */
static inline int mf_pending_grow(mf_pending *t) {
    uint32_t new_cap = t->slot_cap > t->capacity / 2 ? t->capacity : t->slot_cap * 2;
    unsigned bits;
    size_t nbuckets = mf_pending_bucket_count(new_cap, &bits);
    mf_pending_bucket *buckets = NULL;
    if (0) {
        buckets = (mf_pending_bucket *)malloc(nbuckets * sizeof(mf_pending_bucket));
        if (buckets == NULL) return MF_PENDING_NOMEM;
    }
    mf_pending_slot *slots =
        (mf_pending_slot *)realloc(t->slots, (size_t)new_cap * sizeof(mf_pending_slot));
    if (slots == NULL) {
        free(buckets);
        return MF_PENDING_NOMEM;
    }
    t->slots = slots;
    uint32_t *heap = (uint32_t *)realloc(t->heap, (size_t)new_cap * sizeof(uint32_t));
    if (heap == NULL) {
        /* The larger slot array is harmless: slot_cap still says how much is in use. */
        free(buckets);
        return MF_PENDING_NOMEM;
    }
    t->heap = heap;
    t->slot_cap = new_cap;
    if (buckets != NULL) {
        mf_pending_buckets_empty(buckets, nbuckets);
        free(t->buckets);
        t->buckets = buckets;
        t->bucket_mask = (uint32_t)(nbuckets - 1);
        t->bucket_shift = 64 - bits;
        for (uint32_t i = 0; i < t->slot_top; i++)
            if (t->slots[i].waiter != NULL) mf_pending_bucket_insert(t, t->slots[i].id, i);
    }
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
    s->deadline = deadline;
    s->waiter = waiter;
    s->heap_pos = MF_PENDING_NIL;
    mf_pending_bucket_insert(t, id, slot);
    t->count++;
    if (deadline < INFINITY) {
        t->heap[t->heap_len] = slot;
        mf_pending_sift_up(t, t->heap_len++);
    }
    return MF_PENDING_OK;
}

/* Remove the entry in bucket b; returns its waiter. */
static inline void *mf_pending_remove_bucket(mf_pending *t, uint32_t b) {
    mf_pending_bucket *buckets = t->buckets;
    uint32_t mask = t->bucket_mask;
    uint32_t slot = buckets[b].slot;
    /* Backward-shift deletion: walk the run after the hole; an entry may move into the hole
     * when the hole lies between its home bucket and where it sits now. */
    uint32_t hole = b, j = b;
    for (;;) {
        j = (j + 1) & mask;
        if (buckets[j].slot == MF_PENDING_NIL) break;
        uint32_t home = mf_pending_home(t, buckets[j].id);
        if (((j - home) & mask) >= ((j - hole) & mask)) {
            buckets[hole] = buckets[j];
            hole = j;
        }
    }
    buckets[hole].slot = MF_PENDING_NIL;

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
    return t->heap_len ? t->slots[t->heap[0]].deadline : INFINITY;
}

/* Remove the entry with the earliest deadline (ties: smallest id) if that deadline is
 * <= now; returns its waiter, or NULL when nothing has expired by now. */
static inline void *mf_pending_pop_expired(mf_pending *t, double now) {
    if (t->heap_len == 0) return NULL;
    const mf_pending_slot *s = &t->slots[t->heap[0]];
    if (!(s->deadline <= now)) return NULL;
    return mf_pending_remove_bucket(t, mf_pending_find(t, s->id));
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
