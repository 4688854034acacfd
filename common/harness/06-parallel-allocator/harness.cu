/* Lab 06 harness (kit-owned): checks the student's bounded counter and typed pool under full-GPU
 * contention, collects Lab 04's Bezier vertices into one pool through the student's dynamic
 * kernels, measures per-object device malloc against one bulk allocation and against the pool,
 * and times the student's counter against the kit's one-atomic-per-thread counter.
 *
 *   ./allocator [--name value ...] [--json result.json]      (options[] below; ./allocator --help)
 *
 * A size of 0 skips that part (--capacity 0: no uniqueness run; --wrap-requests 0: no run past
 * 2^32; --lines 0: no Part C; --objects 0 or --repeats 0: no timing). --blocks 0 fills the GPU.
 * The uniqueness run's own shape: blocks of --block-x x --block-y threads (2-D, warps formed x
 * fastest: a block-x that is not a multiple of 32 makes threadIdx.x a wrong lane number, and a
 * block size that is not one leaves a partial last warp); --lanes scattered makes seeded groups of
 * lanes with gaps ask at once instead of whole warps; --many M asks pool_alloc_many for 1 .. M
 * slots per request (seeded) instead of pool_alloc for one. A slot array larger than the GPU's free
 * memory allows is not allocated: the run is reported as not run, with the reason.
 * --fit P gives the vertex pool P% of the vertices the lines need (below 100: some lines must be
 * told "full"). --heap-mib 0 sizes the device heap for --objects; --heap-mib 8 keeps the default
 * and shows per-object malloc failing. --seed draws Part C's lines and the uniqueness run's lane
 * groups and request sizes.
 *
 * Part C uses the kit's Bezier lines (common/src/bezier_lines.cu, linked into every program), so
 * that its lines, vertex counts, bezier_point, gather kernel and double-precision check are the very
 * ones Lab 04 grades with.
 *
 * The grader sends several cases to one process, one after another (kit_harness.h); a case whose
 * device heap differs from the process's, once a malloc kernel has run, is run again in a fresh one.
 */
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "allocator.h"
#include "bezier_lines.h"
#include "kit_args.h"
#include "kit_check.h"
#include "kit_harness.h"
#include "kit_result.h"
#include "kit_timing.h"

#define THREADS 256                 /* per block, in every kit kernel that calls the student's code */
#define MAX_REQUESTS (1LL << 28)    /* uniqueness run: one answer word per request on the host */
#define MAX_WRAP_REQUESTS (1LL << 34)
#define ANSWER_FULL 0xffffffffu     /* pool_alloc said NULL */
#define ANSWER_OUT_OF_RANGE 0xfffffffeu
#define ANSWER_MISALIGNED 0xfffffffdu
#define RECORD_TAG 0x6b697430u
#define GUARD_VERTICES 4096         /* after the vertex pool, beyond any overrun: must read as GUARD_WORD */
#define GUARD_WORD 0xffffffffu      /* a NaN no vertex computation produces */
#define LANES_CONTIGUOUS 0          /* --lanes: whole warps ask at once */
#define LANES_SCATTERED 1           /* --lanes: groups of lanes with gaps ask at once */
static const char *const lanes_names[] = {"contiguous", "scattered", NULL}; /* --lanes, by LANES_* */
#define MAX_MANY 4096               /* --many: the most slots one pool_alloc_many request asks for */
#define MEMORY_MARGIN ((size_t)512 << 20) /* left free on the GPU beside the uniqueness run's arrays */
/* The uniqueness run's largest block (--block-x times --block-y). Not 1024: kit_request_slots takes 64
 * registers a thread on sm_90 and 72 on sm_75 (ptxas -v) before the student's functions add theirs, and
 * a block of 1024 threads gets at most 64 (the register file is 65,536): it would not launch. */
#define MAX_BLOCK_THREADS 512

/* What the uniqueness run writes into the slot it was given. 12 bytes: a slot size that is not a
 * power of two, so that an index scaled by a shift instead of slot_bytes shows. */
typedef struct {
    unsigned int request;
    unsigned int tag;
    unsigned int block;
} kit_record_t;
#define KIT_RECORD_BYTES 12 /* sizeof(kit_record_t): the smallest --slot-bytes (the grader's contract reads it) */
static_assert(sizeof(kit_record_t) == KIT_RECORD_BYTES, "KIT_RECORD_BYTES must be sizeof(kit_record_t)");

/* ---------------- kit-owned device code ---------------- */

typedef struct {
    unsigned long long calls, failures;
} malloc_stats_t;
static __device__ malloc_stats_t kit_malloc_stats;

__device__ void *kit_device_malloc(size_t bytes)
{
    void *p = malloc(bytes);
    atomicAdd(&kit_malloc_stats.calls, 1ULL);
    if (p == NULL)
        atomicAdd(&kit_malloc_stats.failures, 1ULL);
    return p;
}

/* A 64-bit mix (splitmix64's finalizer): the harness's seeded choices, the same on host and device. */
static __host__ __device__ unsigned long long kit_mix(unsigned long long x)
{
    x += 0x9e3779b97f4a7c15ULL;
    x = (x ^ (x >> 30)) * 0xbf58476d1ce4e5b9ULL;
    x = (x ^ (x >> 27)) * 0x94d049bb133111ebULL;
    return x ^ (x >> 31);
}

/* --many M: how many consecutive slots request r asks pool_alloc_many for, 1 .. M. */
static __host__ __device__ unsigned int many_slots(unsigned long long seed, unsigned long long r, unsigned int many)
{
    return 1u + (unsigned int)(kit_mix(kit_mix(seed) ^ r) % many);
}

/* --lanes scattered: the lanes of one warp that ask first in one round (the others ask after them).
 * Groups with gaps, seeded: odd or even lanes, one lane inside the warp (the rest then has a gap),
 * its two ends, random masks, runs of eight with gaps, all lanes but one. A rank taken as
 * lane - leader, a leader taken as lane 0, or a count taken as 32 is wrong for such a group. */
static __device__ unsigned int scattered_mask(unsigned long long seed, unsigned long long warp,
                                              unsigned long long round)
{
    unsigned long long h = kit_mix(kit_mix(kit_mix(seed) ^ warp) ^ round);
    unsigned int r = (unsigned int)(h >> 32);
    switch (h & 7u) {
    case 0: return 0xaaaaaaaau;                          /* odd lanes */
    case 1: return 0x55555555u;                          /* even lanes */
    case 2: return 1u << (1u + r % 30u);                 /* one lane: the others have a gap */
    case 3: return 0x80000001u;                          /* lanes 0 and 31 */
    case 4: return r;                                    /* random */
    case 5: return r & (unsigned int)kit_mix(r);         /* random, sparse */
    case 6: return 0x00ff00ffu << (r % 9u);              /* runs of eight with gaps */
    default: return ~(1u << (1u + r % 30u));             /* all lanes but one */
    }
}

/* The lanes of this thread's warp that exist: the last warp of a block whose size is not a multiple
 * of 32 is partial. */
static __device__ unsigned int kit_warp_lanes(void)
{
    unsigned int threads = blockDim.x * blockDim.y * blockDim.z;
    unsigned int first = (threadIdx.x + blockDim.x * (threadIdx.y + blockDim.y * threadIdx.z)) & ~31u;
    return threads - first >= 32u ? 0xffffffffu : (1u << (threads - first)) - 1u;
}

/* One request of the uniqueness run: one slot (pool_alloc) or, with --many, 1 .. many consecutive
 * slots (pool_alloc_many). The answer is the first slot's index, or why there is none. The range
 * check uses the kit's own copy of the slot array. Each slot given gets the request's record, one
 * 4-byte word at a time. */
static __device__ unsigned int serve_request(typed_pool_t *pool, const char *slots, unsigned int capacity,
                                             unsigned int slot_bytes, unsigned int many, unsigned long long seed,
                                             unsigned long long r)
{
    unsigned int n = many ? many_slots(seed, r, many) : 1u;
    char *slot = many ? (char *)pool_alloc_many(pool, n) : (char *)pool_alloc(pool);
    if (slot == NULL)
        return ANSWER_FULL;
    const char *end = slots + (size_t)capacity * slot_bytes;
    if ((const char *)slot < slots || (const char *)slot >= end || (size_t)(end - slot) / slot_bytes < n)
        return ANSWER_OUT_OF_RANGE;
    if ((size_t)((const char *)slot - slots) % slot_bytes != 0)
        return ANSWER_MISALIGNED;
    for (unsigned int k = 0; k < n; k++) {
        kit_record_t *rec = (kit_record_t *)(slot + (size_t)k * slot_bytes);
        rec->request = (unsigned int)r;
        rec->tag = RECORD_TAG;
        rec->block = blockIdx.x;
    }
    return (unsigned int)((size_t)((const char *)slot - slots) / slot_bytes);
}

/* Part B: every request asks the student's pool; answers[r] is the first slot's index, or why there
 * is none. Blocks may be 2-D (--block-x, --block-y): request numbers follow the thread's index in
 * its block, x fastest, as warps are formed. --lanes contiguous: a grid-stride loop, whole warps
 * asking at once but for the last requests. --lanes scattered: every thread makes the same number
 * of rounds; in each, the lanes of a seeded mask ask first and the other lanes after them, each
 * group on its own (a __syncwarp between them), so counter_take sees active masks with gaps. */
__global__ void kit_request_slots(typed_pool_t *pool, const char *slots, unsigned int capacity, unsigned int slot_bytes,
                                  unsigned long long requests, int lanes, unsigned int many, unsigned long long seed,
                                  unsigned int *answers)
{
    unsigned long long per_block = (unsigned long long)blockDim.x * blockDim.y;
    unsigned long long linear = threadIdx.x + (unsigned long long)blockDim.x * threadIdx.y;
    unsigned long long stride = (unsigned long long)gridDim.x * per_block;
    unsigned long long tid = (unsigned long long)blockIdx.x * per_block + linear;
    if (lanes == LANES_CONTIGUOUS) {
        for (unsigned long long r = tid; r < requests; r += stride)
            answers[r] = serve_request(pool, slots, capacity, slot_bytes, many, seed, r);
        return;
    }
    unsigned int present = kit_warp_lanes();
    unsigned int lane = kit_lane_id();
    unsigned long long warp = (unsigned long long)blockIdx.x * ((per_block + 31) / 32) + linear / 32;
    unsigned long long rounds = (requests + stride - 1) / stride;
    for (unsigned long long k = 0; k < rounds; k++) {
        unsigned long long r = k * stride + tid;
        int first = (scattered_mask(seed, warp, k) >> lane) & 1u;
        __syncwarp(present);
        if (r < requests && first)
            answers[r] = serve_request(pool, slots, capacity, slot_bytes, many, seed, r);
        __syncwarp(present);
        if (r < requests && !first)
            answers[r] = serve_request(pool, slots, capacity, slot_bytes, many, seed, r);
    }
}

/* The walk: slot i's record (slot i is at slots + i * slot_bytes) into records[i], i < used, so that
 * the host reads 12 bytes a slot, not the whole slot array (which may pass 4 GiB). */
__global__ void kit_gather_records(const char *slots, unsigned int slot_bytes, unsigned long long used,
                                   kit_record_t *records)
{
    unsigned long long stride = (unsigned long long)gridDim.x * blockDim.x;
    for (unsigned long long i = (unsigned long long)blockIdx.x * blockDim.x + threadIdx.x; i < used; i += stride) {
        const kit_record_t *rec = (const kit_record_t *)(slots + i * slot_bytes);
        records[i].request = rec->request;
        records[i].tag = rec->tag;
        records[i].block = rec->block;
    }
}

/* Part B, past 2^32: rounds requests per thread straight to counter_take; each index handed out
 * is counted in hits[], the others in tally[] (0: full, 1: out of range). */
__global__ void kit_request_many(bounded_counter_t *counter, unsigned int capacity, unsigned int rounds,
                                 unsigned int *hits, unsigned long long *tally)
{
    unsigned long long full = 0, out_of_range = 0;
    for (unsigned int k = 0; k < rounds; k++) {
        unsigned int index = counter_take(counter);
        if (index == COUNTER_FULL)
            full++;
        else if (index >= capacity)
            out_of_range++;
        else
            atomicAdd(&hits[index], 1u);
    }
    atomicAdd(&tally[0], full);
    atomicAdd(&tally[1], out_of_range);
}

/* The kit's baseline: a bounded counter with one atomic per thread. A plain
 * atomicAdd(&counter->next, 1) would not do: the compiler sees that the whole warp adds to one
 * address and merges the warp's atomics into one by itself (cuobjdump -sass shows VOTE, POPC and a
 * single ATOMG). request >> 63 is 0 for every request here, but the compiler cannot prove it, so it
 * cannot prove the address is the same for the whole warp, and each thread issues its own ATOMG. */
static __device__ unsigned int kit_take_one_per_thread(bounded_counter_t *counter, unsigned long long request)
{
    unsigned int *next = &counter->next + (unsigned int)(request >> 63);
    if (*(volatile unsigned int *)next >= counter->capacity)
        return COUNTER_FULL;
    unsigned int index = atomicAdd(next, 1u);
    return index < counter->capacity ? index : COUNTER_FULL;
}

#define TAKE_STUDENT 0
#define TAKE_PER_THREAD 1
/* rounds requests per thread, to the student's counter_take or the kit's per-thread counter. The
 * answers are summed so that the compiler keeps every request. */
__global__ void kit_take_timed(bounded_counter_t *counter, unsigned int rounds, int which, unsigned int *sink)
{
    unsigned long long threads = (unsigned long long)gridDim.x * blockDim.x;
    unsigned long long tid = (unsigned long long)blockIdx.x * blockDim.x + threadIdx.x;
    unsigned int sum = 0;
    if (which == TAKE_STUDENT) {
        for (unsigned int k = 0; k < rounds; k++)
            sum += counter_take(counter);
    } else {
        for (unsigned int k = 0; k < rounds; k++)
            sum += kit_take_one_per_thread(counter, k * threads + tid);
    }
    sink[tid] = sum;
}

/* Part A. One object per thread: per-object device malloc, a bulk allocation carved into slots,
 * or the student's pool. Every version writes the object's number into it. */
__global__ void kit_objects_malloc(void **objects, unsigned int n, unsigned int bytes)
{
    for (unsigned int i = blockIdx.x * blockDim.x + threadIdx.x; i < n; i += gridDim.x * blockDim.x) {
        unsigned int *p = (unsigned int *)kit_device_malloc(bytes);
        if (p != NULL)
            *p = i;
        objects[i] = p;
    }
}

static __device__ char *kit_bulk_block;

__global__ void kit_bulk_malloc(unsigned int n, unsigned int bytes)
{
    kit_bulk_block = (char *)kit_device_malloc((size_t)n * bytes);
}

__global__ void kit_objects_bulk(void **objects, unsigned int n, unsigned int bytes)
{
    char *bulk = kit_bulk_block;
    for (unsigned int i = blockIdx.x * blockDim.x + threadIdx.x; i < n; i += gridDim.x * blockDim.x) {
        unsigned int *p = bulk == NULL ? NULL : (unsigned int *)(bulk + (size_t)i * bytes);
        if (p != NULL)
            *p = i;
        objects[i] = p;
    }
}

__global__ void kit_objects_pool(typed_pool_t *pool, void **objects, unsigned int n)
{
    for (unsigned int i = blockIdx.x * blockDim.x + threadIdx.x; i < n; i += gridDim.x * blockDim.x) {
        unsigned int *p = (unsigned int *)pool_alloc(pool);
        if (p != NULL)
            *p = i;
        objects[i] = p;
    }
}

/* Frees what kit_objects_malloc and kit_bulk_malloc allocated (device-heap memory: only the device
 * can free it). */
__global__ void kit_objects_free(void **objects, unsigned int n)
{
    for (unsigned int i = blockIdx.x * blockDim.x + threadIdx.x; i < n; i += gridDim.x * blockDim.x) {
        if (objects[i] != NULL)
            free(objects[i]);
        objects[i] = NULL;
    }
}

__global__ void kit_bulk_free(void)
{
    if (kit_bulk_block != NULL)
        free(kit_bulk_block);
    kit_bulk_block = NULL;
}

/* Objects the version left without memory, and objects whose first word is not their number. */
__global__ void kit_objects_verify(void **objects, unsigned int n, unsigned long long *missing_and_wrong)
{
    for (unsigned int i = blockIdx.x * blockDim.x + threadIdx.x; i < n; i += gridDim.x * blockDim.x) {
        const unsigned int *p = (const unsigned int *)objects[i];
        if (p == NULL)
            atomicAdd(&missing_and_wrong[0], 1ULL);
        else if (*p != i)
            atomicAdd(&missing_and_wrong[1], 1ULL);
    }
}

/* ---------------- host side ---------------- */

/* Blocks of threads_per_block threads of kernel that fit on the GPU at once: a full grid. */
static int full_grid_blocks(const void *kernel, int threads_per_block)
{
    int dev = 0, per_sm = 0;
    struct cudaDeviceProp prop;
    KIT_CHECK(cudaGetDevice(&dev));
    KIT_CHECK(cudaGetDeviceProperties(&prop, dev));
    KIT_CHECK(cudaOccupancyMaxActiveBlocksPerMultiprocessor(&per_sm, kernel, threads_per_block, 0));
    if (per_sm < 1)
        per_sm = 1;
    return prop.multiProcessorCount * per_sm;
}

static typed_pool_t *new_device_pool(char *slots, unsigned int capacity, unsigned int slot_bytes)
{
    typed_pool_t h, *d = NULL;
    memset(&h, 0, sizeof h);
    h.counter.next = 0;
    h.counter.capacity = capacity;
    h.slot_bytes = slot_bytes;
    h.slots = slots;
    KIT_CHECK(cudaMalloc((void **)&d, sizeof h));
    KIT_CHECK(cudaMemcpy(d, &h, sizeof h, cudaMemcpyHostToDevice));
    return d;
}

static typed_pool_t read_pool(const typed_pool_t *d)
{
    typed_pool_t h;
    KIT_CHECK(cudaMemcpy(&h, d, sizeof h, cudaMemcpyDeviceToHost));
    return h;
}

static malloc_stats_t read_malloc_stats(void)
{
    malloc_stats_t s;
    KIT_CHECK(cudaMemcpyFromSymbol(&s, kit_malloc_stats, sizeof s));
    return s;
}

static void reset_malloc_stats(void)
{
    malloc_stats_t zero = {0, 0};
    KIT_CHECK(cudaMemcpyToSymbol(kit_malloc_stats, &zero, sizeof zero));
}

/* The kit's own __device__ state as a fresh process has it: no device malloc counted, no bulk
 * block. Nothing to free: every case that makes a bulk block frees it again (time_objects), so one
 * left over would mean that an earlier case died, and this process with it. */
static void reset_kit_state(void)
{
    char *none = NULL;
    reset_malloc_stats();
    KIT_CHECK(cudaMemcpyToSymbol(kit_bulk_block, &none, sizeof none));
}

/* ---- Part B: uniqueness and bounds ---- */

typedef struct {
    int block_x, block_y; /* threads per block: block_x * block_y, warps formed x fastest */
    int lanes;            /* LANES_CONTIGUOUS or LANES_SCATTERED */
    unsigned int many;    /* 0: pool_alloc; M: pool_alloc_many of 1 .. M slots per request */
    unsigned long long seed;
} request_shape_t;

typedef struct {
    int ran;
    char not_run_reason[160]; /* set when the run was left out for want of GPU memory */
    unsigned int capacity, slot_bytes;
    long long requests;
    int blocks;
    request_shape_t shape;
    long long successes, unique, duplicates, out_of_range, misaligned, full;
    long long first_duplicate_index, first_duplicate_request;
    long long min_refused_slots; /* the fewest slots a request answered full asked for (-1: none) */
    unsigned int counter_next; /* the counter's `next` after the run, as the student's code left it */
    long long walked, unowned, first_unowned_slot;
} uniqueness_t;

static uniqueness_t run_uniqueness(unsigned int capacity, long long requests, unsigned int slot_bytes, int blocks,
                                   request_shape_t shape)
{
    uniqueness_t u;
    memset(&u, 0, sizeof u);
    u.capacity = capacity;
    u.slot_bytes = slot_bytes;
    u.requests = requests;
    u.shape = shape;
    u.first_duplicate_index = u.first_duplicate_request = u.first_unowned_slot = u.min_refused_slots = -1;
    int threads = shape.block_x * shape.block_y;
    u.blocks = blocks > 0 ? blocks : full_grid_blocks((const void *)kit_request_slots, threads);

    /* A pool past 4 GiB does not fit every GPU: leave the run out, saying why, rather than fail. */
    size_t slot_array = (size_t)capacity * slot_bytes;
    size_t need = slot_array + sizeof(unsigned int) * (size_t)requests + sizeof(kit_record_t) * (size_t)capacity +
                  MEMORY_MARGIN;
    size_t free_bytes = 0, total_bytes = 0;
    KIT_CHECK(cudaMemGetInfo(&free_bytes, &total_bytes));
    if (need > free_bytes) {
        snprintf(u.not_run_reason, sizeof u.not_run_reason,
                 "needs %.2f GiB of GPU memory, %.2f GiB of %.2f GiB free", need / 1073741824.0,
                 free_bytes / 1073741824.0, total_bytes / 1073741824.0);
        return u;
    }
    u.ran = 1;

    char *d_slots = NULL;
    unsigned int *d_answers = NULL;
    KIT_CHECK(cudaMalloc((void **)&d_slots, slot_array));
    KIT_CHECK(cudaMemset(d_slots, 0, slot_array));
    KIT_CHECK(cudaMalloc((void **)&d_answers, sizeof(unsigned int) * (size_t)requests));
    typed_pool_t *d_pool = new_device_pool(d_slots, capacity, slot_bytes);

    dim3 block((unsigned int)shape.block_x, (unsigned int)shape.block_y);
    kit_request_slots<<<u.blocks, block>>>(d_pool, d_slots, capacity, slot_bytes, (unsigned long long)requests,
                                           shape.lanes, shape.many, shape.seed, d_answers);
    KIT_CHECK_KERNEL();

    unsigned int *answers = (unsigned int *)kit_host_alloc(sizeof(unsigned int) * (size_t)requests);
    unsigned char *seen = (unsigned char *)kit_host_alloc(((size_t)capacity + 7) / 8);
    KIT_CHECK(cudaMemcpy(answers, d_answers, sizeof(unsigned int) * (size_t)requests, cudaMemcpyDeviceToHost));
    for (long long r = 0; r < requests; r++) {
        unsigned int a = answers[r];
        unsigned int n = shape.many ? many_slots(shape.seed, (unsigned long long)r, shape.many) : 1u;
        if (a == ANSWER_FULL) {
            u.full++;
            if (u.min_refused_slots < 0 || n < u.min_refused_slots)
                u.min_refused_slots = n;
            continue;
        }
        u.successes++;
        if (a == ANSWER_OUT_OF_RANGE) {
            u.out_of_range++;
            continue;
        }
        if (a == ANSWER_MISALIGNED) {
            u.misaligned++;
            continue;
        }
        if (a >= capacity || n > capacity - a) { /* the device checked; this keeps the bitmap safe */
            u.out_of_range++;
            continue;
        }
        /* Slots a .. a + n - 1 (inside the pool: the device checked). A request any of whose slots
         * another request got first counts once as a duplicate. */
        long long twice = -1;
        for (unsigned long long i = a; i < (unsigned long long)a + n; i++) {
            if (seen[i / 8] & (1u << (i % 8))) {
                if (twice < 0)
                    twice = (long long)i;
            } else {
                seen[i / 8] |= (unsigned char)(1u << (i % 8));
                u.unique++;
            }
        }
        if (twice >= 0) {
            u.duplicates++;
            if (u.first_duplicate_index < 0) {
                u.first_duplicate_index = twice;
                u.first_duplicate_request = r;
            }
        }
    }

    /* The host walks the allocated slots, 0 .. min(next, capacity) - 1, as a user of the pool would:
     * each must hold the record of a request that was given it. The device gathers the records. */
    typed_pool_t after = read_pool(d_pool);
    u.counter_next = after.counter.next;
    long long used = after.counter.next < capacity ? after.counter.next : capacity;
    kit_record_t *d_records = NULL;
    kit_record_t *records = (kit_record_t *)kit_host_alloc(sizeof(kit_record_t) * (size_t)(used > 0 ? used : 1));
    if (used > 0) {
        KIT_CHECK(cudaMalloc((void **)&d_records, sizeof(kit_record_t) * (size_t)used));
        kit_gather_records<<<(unsigned int)((used + 255) / 256 < 65536 ? (used + 255) / 256 : 65536), 256>>>(
            d_slots, slot_bytes, (unsigned long long)used, d_records);
        KIT_CHECK_KERNEL();
        KIT_CHECK(cudaMemcpy(records, d_records, sizeof(kit_record_t) * (size_t)used, cudaMemcpyDeviceToHost));
        KIT_CHECK(cudaFree(d_records));
    }
    for (long long i = 0; i < used; i++) {
        const kit_record_t *rec = &records[i];
        int owned = rec->tag == RECORD_TAG && (long long)rec->request < requests;
        if (owned) {
            unsigned int a = answers[rec->request];
            unsigned int n = shape.many ? many_slots(shape.seed, rec->request, shape.many) : 1u;
            owned = a < ANSWER_MISALIGNED && (unsigned long long)i >= a &&
                    (unsigned long long)i < (unsigned long long)a + n;
        }
        u.walked++;
        if (!owned) {
            u.unowned++;
            if (u.first_unowned_slot < 0)
                u.first_unowned_slot = i;
        }
    }
    free(records);
    free(seen);
    free(answers);
    KIT_CHECK(cudaFree(d_pool));
    KIT_CHECK(cudaFree(d_answers));
    KIT_CHECK(cudaFree(d_slots));
    return u;
}

static void print_uniqueness(uniqueness_t u)
{
    printf("Part B, uniqueness: %lld requests (%s) from %d blocks of %dx%d, lanes %s, for %u slots of %u bytes\n",
           u.requests, u.shape.many ? "pool_alloc_many" : "pool_alloc", u.blocks, u.shape.block_x, u.shape.block_y,
           lanes_names[u.shape.lanes], u.capacity, u.slot_bytes);
    if (!u.ran) {
        printf("  not run: %s\n", u.not_run_reason);
        return;
    }
    if (u.shape.many) {
        printf("  1 to %u slots per request: %lld requests got their slots, %lld slots distinct; %lld answered full "
               "(the fewest slots asked for by one of them: %lld)\n", u.shape.many, u.successes, u.unique, u.full,
               u.min_refused_slots);
    } else {
        long long expected = u.requests < (long long)u.capacity ? u.requests : (long long)u.capacity;
        printf("  %lld got a slot (%lld expected), %lld distinct; %lld answered full (%lld expected)\n", u.successes,
               expected, u.unique, u.full, u.requests - expected);
    }
    if (u.duplicates)
        printf("  WRONG: %lld requests given a slot already handed out (first: slot %lld, again to request %lld)\n",
               u.duplicates, u.first_duplicate_index, u.first_duplicate_request);
    if (u.out_of_range || u.misaligned)
        printf("  WRONG: %lld pointers outside the slot array, %lld not at the start of a slot\n", u.out_of_range,
               u.misaligned);
    printf("  counter.next after the run: %u; the host walked %lld slots, %lld without their owner's record",
           u.counter_next, u.walked, u.unowned);
    if (u.unowned)
        printf(" (first: slot %lld)", u.first_unowned_slot);
    printf("\n");
}

static void json_uniqueness(kit_json_t *j, uniqueness_t u)
{
    kit_json_begin_object(j, "uniqueness");
    kit_json_bool(j, "ran", u.ran);
    kit_json_string(j, "not_run_reason", u.not_run_reason);
    kit_json_uint(j, "capacity", u.capacity);
    kit_json_uint(j, "slot_bytes", u.slot_bytes);
    kit_json_int(j, "requests", u.requests);
    kit_json_int(j, "blocks", u.blocks);
    kit_json_int(j, "threads", (long long)u.shape.block_x * u.shape.block_y);
    kit_json_int(j, "block_x", u.shape.block_x);
    kit_json_int(j, "block_y", u.shape.block_y);
    kit_json_string(j, "lanes", lanes_names[u.shape.lanes]);
    kit_json_uint(j, "many", u.shape.many);
    kit_json_int(j, "successes", u.successes);
    kit_json_int(j, "unique", u.unique);
    kit_json_int(j, "duplicates", u.duplicates);
    kit_json_int(j, "out_of_range", u.out_of_range);
    kit_json_int(j, "misaligned", u.misaligned);
    kit_json_int(j, "full", u.full);
    kit_json_int(j, "min_refused_slots", u.min_refused_slots);
    kit_json_int(j, "first_duplicate_index", u.first_duplicate_index);
    kit_json_int(j, "first_duplicate_request", u.first_duplicate_request);
    kit_json_uint(j, "counter_next", u.counter_next);
    kit_json_int(j, "walked", u.walked);
    kit_json_int(j, "unowned", u.unowned);
    kit_json_int(j, "first_unowned_slot", u.first_unowned_slot);
    kit_json_end_object(j);
}

/* ---- Part B: past 2^32 requests ---- */

typedef struct {
    int ran;
    unsigned int capacity, rounds;
    long long requests, threads;
    long long missing, duplicated, first_duplicated_index, full, out_of_range;
    unsigned int counter_next;
} wrap_t;

static wrap_t run_wrap(unsigned int capacity, long long min_requests, int blocks)
{
    wrap_t w;
    memset(&w, 0, sizeof w);
    w.ran = 1;
    w.capacity = capacity;
    w.threads = (long long)blocks * THREADS;
    w.rounds = (unsigned int)((min_requests + w.threads - 1) / w.threads);
    w.requests = (long long)w.rounds * w.threads;
    w.first_duplicated_index = -1;
    bounded_counter_t h = {0, capacity}, *d_counter = NULL;
    unsigned int *d_hits = NULL;
    unsigned long long *d_tally = NULL, tally[2];
    KIT_CHECK(cudaMalloc((void **)&d_counter, sizeof h));
    KIT_CHECK(cudaMemcpy(d_counter, &h, sizeof h, cudaMemcpyHostToDevice));
    KIT_CHECK(cudaMalloc((void **)&d_hits, sizeof(unsigned int) * (size_t)capacity));
    KIT_CHECK(cudaMemset(d_hits, 0, sizeof(unsigned int) * (size_t)capacity));
    KIT_CHECK(cudaMalloc((void **)&d_tally, sizeof tally));
    KIT_CHECK(cudaMemset(d_tally, 0, sizeof tally));
    kit_request_many<<<blocks, THREADS>>>(d_counter, capacity, w.rounds, d_hits, d_tally);
    KIT_CHECK_KERNEL();
    unsigned int *hits = (unsigned int *)kit_host_alloc(sizeof(unsigned int) * (size_t)capacity);
    KIT_CHECK(cudaMemcpy(hits, d_hits, sizeof(unsigned int) * (size_t)capacity, cudaMemcpyDeviceToHost));
    KIT_CHECK(cudaMemcpy(tally, d_tally, sizeof tally, cudaMemcpyDeviceToHost));
    KIT_CHECK(cudaMemcpy(&h, d_counter, sizeof h, cudaMemcpyDeviceToHost));
    for (unsigned int i = 0; i < capacity; i++) {
        if (hits[i] == 0)
            w.missing++;
        else if (hits[i] > 1) {
            w.duplicated++;
            if (w.first_duplicated_index < 0)
                w.first_duplicated_index = i;
        }
    }
    w.full = (long long)tally[0];
    w.out_of_range = (long long)tally[1];
    w.counter_next = h.next;
    free(hits);
    KIT_CHECK(cudaFree(d_tally));
    KIT_CHECK(cudaFree(d_hits));
    KIT_CHECK(cudaFree(d_counter));
    return w;
}

static void print_wrap(wrap_t w)
{
    printf("Part B, past 2^32: %lld requests (%u per thread, %lld threads) for %u indices\n", w.requests, w.rounds,
           w.threads, w.capacity);
    printf("  %lld answered full (%lld expected); %lld indices never handed out, %lld handed out more than once",
           w.full, w.requests - w.capacity, w.missing, w.duplicated);
    if (w.duplicated)
        printf(" (first: %lld)", w.first_duplicated_index);
    printf("; %lld out of range; counter.next ended at %u\n", w.out_of_range, w.counter_next);
}

static void json_wrap(kit_json_t *j, wrap_t w)
{
    kit_json_begin_object(j, "wrap");
    kit_json_bool(j, "ran", w.ran);
    kit_json_uint(j, "capacity", w.capacity);
    kit_json_int(j, "requests", w.requests);
    kit_json_uint(j, "rounds", w.rounds);
    kit_json_int(j, "threads", w.threads);
    kit_json_int(j, "missing", w.missing);
    kit_json_int(j, "duplicated", w.duplicated);
    kit_json_int(j, "first_duplicated_index", w.first_duplicated_index);
    kit_json_int(j, "full", w.full);
    kit_json_int(j, "out_of_range", w.out_of_range);
    kit_json_uint(j, "counter_next", w.counter_next);
    kit_json_end_object(j);
}

/* ---- Part C: Lab 04's vertices in one pool ---- */

typedef struct {
    int ran, lines, fit_percent;
    unsigned int capacity;
    long long total_vertices, pooled_vertices;
    int full_lines, outside_pool, misaligned, overlapping, guard_damaged;
    int first_outside_line, first_overlapping_line;
    int lines_with_vertices;    /* lines the student's code gave vertices (each must have launched a child) */
    long long claimed_vertices; /* their n_vertices, summed: each must be computed exactly once */
    point_calls_t points;       /* bezier_point calls during collect_vertices and its children */
    grid_census_t grids;        /* the child grids that ran and computed lines (their %gridid) */
    unsigned long long device_mallocs;
    long long allocations; /* the pool, plus every line whose vertices are not in it, plus device mallocs */
    check_t check;         /* Lab 04's check of every vertex against its double-precision reference */
    kit_launch_log_t log;
} collect_t;

__global__ void kit_fill_guard(float2 *guard, long long n)
{
    long long i = (long long)blockIdx.x * blockDim.x + threadIdx.x;
    if (i < n) {
        float2 g;
        g.x = __uint_as_float(GUARD_WORD);
        g.y = __uint_as_float(GUARD_WORD);
        guard[i] = g;
    }
}

static collect_t run_collect(int n_lines, int heavy, int max_vertices, float factor, unsigned long long seed,
                             int fit_percent)
{
    collect_t c;
    memset(&c, 0, sizeof c);
    c.ran = 1;
    c.lines = n_lines;
    c.fit_percent = fit_percent;
    c.first_outside_line = c.first_overlapping_line = -1;
    workload_t w;
    workload_init(&w, n_lines, heavy, max_vertices, factor, seed, 0);
    c.total_vertices = w.total;
    long long capacity = w.total * fit_percent / 100;
    if (capacity < 1)
        capacity = 1;
    if (capacity > KIT_MAX_CAPACITY) {
        fprintf(stderr, "Part C: %lld vertices is more than the kit's largest pool (%u)\n", capacity, KIT_MAX_CAPACITY);
        exit(KIT_EXIT_USAGE);
    }
    c.capacity = (unsigned int)capacity;

    /* The one bulk allocation: capacity vertices, then a guard that must stay untouched. The guard
     * is long enough to take every vertex the lines need, so that a pool handing out slots past
     * its end writes into the guard (and is caught) rather than into unmapped memory. */
    long long guard_vertices = w.total - capacity + GUARD_VERTICES;
    if (guard_vertices < GUARD_VERTICES)
        guard_vertices = GUARD_VERTICES;
    float2 *d_vertices = NULL;
    KIT_CHECK(cudaMalloc((void **)&d_vertices, sizeof(float2) * (size_t)(capacity + guard_vertices)));
    kit_fill_guard<<<(unsigned int)((guard_vertices + 255) / 256), 256>>>(d_vertices + capacity, guard_vertices);
    KIT_CHECK_KERNEL();
    typed_pool_t *d_pool = new_device_pool((char *)d_vertices, c.capacity, (unsigned int)sizeof(float2));

    reset_lines(&w, 0);
    reset_malloc_stats();
    kit_launch_log_reset();
    point_calls_start(); /* every bezier_point call from here: each vertex must be computed once */
    grid_probe_start(&w); /* and the grid that computed each line: the launches that really ran */
    collect_vertices<<<(n_lines + COLLECT_THREADS - 1) / COLLECT_THREADS, COLLECT_THREADS>>>(
        w.d_lines, n_lines, factor, max_vertices, d_pool);
    KIT_CHECK_KERNEL();
    c.points = point_calls_stop();
    c.grids = grid_probe_stop();
    c.log = kit_launch_log_read();
    c.device_mallocs = read_malloc_stats().calls;
    c.check = check_lines(&w, 0);

    /* Where each line's vertices are: inside the pool, at a slot boundary, not overlapping another
     * line's (a bitmap over the pool's slots). */
    bezier_line_t *got = (bezier_line_t *)kit_host_alloc(sizeof(bezier_line_t) * (size_t)n_lines);
    KIT_CHECK(cudaMemcpy(got, w.d_lines, sizeof(bezier_line_t) * (size_t)n_lines, cudaMemcpyDeviceToHost));
    unsigned char *used = (unsigned char *)kit_host_alloc((size_t)capacity);
    const char *base = (const char *)d_vertices;
    for (int l = 0; l < n_lines; l++) {
        const char *v = (const char *)got[l].vertices;
        long long n = w.h_counts[l];
        if (v == NULL) {
            c.full_lines++;
            continue;
        }
        c.lines_with_vertices++;
        c.claimed_vertices += got[l].n_vertices;
        if (v < base || v >= base + sizeof(float2) * (size_t)capacity ||
            (v - base) / (long long)sizeof(float2) + n > capacity) {
            c.outside_pool++;
            if (c.first_outside_line < 0)
                c.first_outside_line = l;
            continue;
        }
        if ((v - base) % sizeof(float2) != 0) {
            c.misaligned++;
            continue;
        }
        long long first = (v - base) / (long long)sizeof(float2);
        int overlap = 0;
        for (long long k = first; k < first + n; k++) {
            overlap |= used[k];
            used[k] = 1;
        }
        c.pooled_vertices += n;
        if (overlap) {
            c.overlapping++;
            if (c.first_overlapping_line < 0)
                c.first_overlapping_line = l;
        }
    }
    unsigned int *guard = (unsigned int *)kit_host_alloc(sizeof(float2) * (size_t)guard_vertices);
    KIT_CHECK(cudaMemcpy(guard, d_vertices + capacity, sizeof(float2) * (size_t)guard_vertices,
                         cudaMemcpyDeviceToHost));
    for (long long k = 0; k < 2 * guard_vertices; k++)
        c.guard_damaged |= guard[k] != GUARD_WORD;
    c.allocations = 1 + c.outside_pool + (long long)c.device_mallocs;

    /* Vertices outside the pool are not freed: the kit cannot tell device-heap memory (a malloc in
     * the student's code, which the lab forbids) from any other pointer, and free() of a pointer the
     * heap did not hand out is undefined. What such code took stays taken from the process's device
     * heap: a later case of the same process finds less of it free. */
    free(guard);
    free(used);
    free(got);
    KIT_CHECK(cudaFree(d_pool));
    KIT_CHECK(cudaFree(d_vertices));
    workload_free(&w);
    return c;
}

static void print_collect(collect_t c)
{
    printf("Part C: %d lines need %lld vertices; the pool holds %u (%d%%)\n", c.lines, c.total_vertices, c.capacity,
           c.fit_percent);
    print_check("vertices", c.check, c.lines);
    printf("  %d lines answered full (no vertices); %lld vertices taken from the pool; allocations: %lld "
           "(the pool, %d lines outside it, %llu device mallocs)\n", c.full_lines, c.pooled_vertices, c.allocations,
           c.outside_pool, c.device_mallocs);
    if (c.outside_pool || c.misaligned || c.overlapping || c.guard_damaged)
        printf("  WRONG: %d lines outside the pool (first: %d), %d not at a slot boundary, %d overlapping another "
               "(first: %d); guard after the pool %s\n", c.outside_pool, c.first_outside_line, c.misaligned,
               c.overlapping, c.first_overlapping_line, c.guard_damaged ? "OVERWRITTEN" : "intact");
    printf("  bezier_point calls: %llu for the %lld vertices of the %d lines that got vertices (%llu for an index "
           "outside the line)\n", c.points.calls, c.claimed_vertices, c.lines_with_vertices, c.points.out_of_range);
    if (c.points.calls != (unsigned long long)c.claimed_vertices || c.points.out_of_range)
        printf("  WRONG: each vertex must be computed exactly once, by its line's child grid\n");
    kit_print_launch_log("  ", c.log);
    printf("  child grids that ran: %d, computing %d of the %d lines\n", c.grids.child_grids, c.grids.lines_in_child,
           c.lines);
    if (c.log.checked != (unsigned int)c.grids.child_grids + c.log.failed)
        printf("  WRONG: %u launches checked with KIT_CHECK_LAUNCH(), but %d child grids ran and %u launches failed\n",
               c.log.checked, c.grids.child_grids, c.log.failed);
    if (c.log.checked != (unsigned int)c.lines_with_vertices)
        printf("  WRONG: %u launches checked with KIT_CHECK_LAUNCH(), expected one per line that got vertices (%d)\n",
               c.log.checked, c.lines_with_vertices);
}

static void json_collect(kit_json_t *j, collect_t c)
{
    kit_json_begin_object(j, "collect");
    kit_json_bool(j, "ran", c.ran);
    kit_json_int(j, "lines", c.lines);
    kit_json_int(j, "fit_percent", c.fit_percent);
    kit_json_uint(j, "capacity", c.capacity);
    kit_json_int(j, "total_vertices", c.total_vertices);
    kit_json_int(j, "pooled_vertices", c.pooled_vertices);
    kit_json_int(j, "full_lines", c.full_lines);
    kit_json_int(j, "outside_pool", c.outside_pool);
    kit_json_int(j, "first_outside_line", c.first_outside_line);
    kit_json_int(j, "misaligned", c.misaligned);
    kit_json_int(j, "overlapping", c.overlapping);
    kit_json_int(j, "first_overlapping_line", c.first_overlapping_line);
    kit_json_bool(j, "guard_damaged", c.guard_damaged);
    kit_json_int(j, "lines_with_vertices", c.lines_with_vertices);
    kit_json_int(j, "claimed_vertices", c.claimed_vertices);
    kit_json_uint(j, "point_calls", c.points.calls);
    kit_json_uint(j, "point_calls_out_of_range", c.points.out_of_range);
    kit_json_uint(j, "device_mallocs", c.device_mallocs);
    kit_json_int(j, "allocations", c.allocations);
    json_check(j, "check", c.check);
    kit_json_launch_log(j, "log", c.log);
    json_grid_census(j, "grids", c.grids);
    kit_json_end_object(j);
}

/* ---- Part A and the counter's speed ---- */

#define OBJECTS_MALLOC 0
#define OBJECTS_BULK 1
#define OBJECTS_POOL 2

/* Every run of a timing loop (warm-up included) is checked, outside the timed region: a run that did
 * no work (a flag set once, state kept across runs) fails its timing check instead of passing with a
 * fast time. */
typedef struct {
    int runs, runs_wrong;  /* runs checked, and of those, runs that did not do their work */
    int first_wrong_run;   /* 1-based, warm-up first; 0: none */
    unsigned long long first_wrong_detail[3]; /* objects: missing, wrong, slots used; take: sum, next */
} run_checks_t;

typedef struct {
    int version;
    unsigned int n, bytes;
    int blocks;
    void **d_objects;
    typed_pool_t *d_pool;
    char *d_pool_slots;
    unsigned long long *d_counts;
    int launched; /* runs launched so far, of which the last is not yet checked */
    run_checks_t checks;
} objects_t;

static void note_run(run_checks_t *c, int wrong, unsigned long long a, unsigned long long b, unsigned long long d)
{
    c->runs++;
    if (wrong && c->runs_wrong++ == 0) {
        c->first_wrong_run = c->runs;
        c->first_wrong_detail[0] = a;
        c->first_wrong_detail[1] = b;
        c->first_wrong_detail[2] = d;
    }
}

/* Objects the last run left without memory (counts[0]) and with a wrong number (counts[1]). */
static void count_bad_objects(objects_t *o, unsigned long long counts[2])
{
    KIT_CHECK(cudaMemset(o->d_counts, 0, 2 * sizeof(unsigned long long)));
    kit_objects_verify<<<o->blocks, THREADS>>>(o->d_objects, o->n, o->d_counts);
    KIT_CHECK_KERNEL();
    KIT_CHECK(cudaMemcpy(counts, o->d_counts, 2 * sizeof(unsigned long long), cudaMemcpyDeviceToHost));
}

/* The last run: every object has memory holding its number, and the pool handed out every slot. */
static void check_objects_run(objects_t *o)
{
    if (o->launched <= o->checks.runs)
        return;
    unsigned long long counts[2];
    count_bad_objects(o, counts);
    unsigned long long used = o->n;
    if (o->version == OBJECTS_POOL) {
        typed_pool_t after = read_pool(o->d_pool);
        used = after.counter.next < o->n ? after.counter.next : o->n;
    }
    note_run(&o->checks, counts[0] || counts[1] || used != o->n, counts[0], counts[1], used);
}

static void objects_reset(void *p)
{
    objects_t *o = (objects_t *)p;
    check_objects_run(o);
    if (o->version == OBJECTS_MALLOC) {
        kit_objects_free<<<o->blocks, THREADS>>>(o->d_objects, o->n);
        KIT_CHECK_KERNEL();
    } else if (o->version == OBJECTS_BULK) {
        kit_bulk_free<<<1, 1>>>();
        KIT_CHECK_KERNEL();
    } else {
        bounded_counter_t fresh = {0, o->n};
        KIT_CHECK(cudaMemcpy(&o->d_pool->counter, &fresh, sizeof fresh, cudaMemcpyHostToDevice));
    }
    KIT_CHECK(cudaMemset(o->d_objects, 0, sizeof(void *) * (size_t)o->n));
}

static void objects_launch(void *p)
{
    objects_t *o = (objects_t *)p;
    o->launched++;
    if (o->version == OBJECTS_MALLOC) {
        kit_objects_malloc<<<o->blocks, THREADS>>>(o->d_objects, o->n, o->bytes);
    } else if (o->version == OBJECTS_BULK) {
        kit_bulk_malloc<<<1, 1>>>(o->n, o->bytes);
        kit_objects_bulk<<<o->blocks, THREADS>>>(o->d_objects, o->n, o->bytes);
    } else {
        kit_objects_pool<<<o->blocks, THREADS>>>(o->d_pool, o->d_objects, o->n);
    }
}

typedef struct {
    int ran;
    unsigned int objects, object_bytes;
    int repeats;
    kit_timing_t version[3];
    unsigned long long mallocs[3], malloc_failures[3], missing[3], wrong[3];
    run_checks_t version_checks[3];
    unsigned int take_rounds;
    long long take_requests;
    kit_timing_t take_student, take_per_thread;
    run_checks_t take_student_checks, take_per_thread_checks;
} timing_t;

static void time_objects(timing_t *t, int version, int blocks)
{
    objects_t o;
    memset(&o, 0, sizeof o);
    o.version = version;
    o.n = t->objects;
    o.bytes = t->object_bytes;
    o.blocks = blocks;
    KIT_CHECK(cudaMalloc((void **)&o.d_objects, sizeof(void *) * (size_t)o.n));
    KIT_CHECK(cudaMemset(o.d_objects, 0, sizeof(void *) * (size_t)o.n));
    KIT_CHECK(cudaMalloc((void **)&o.d_counts, 2 * sizeof(unsigned long long)));
    if (version == OBJECTS_POOL) {
        KIT_CHECK(cudaMalloc((void **)&o.d_pool_slots, (size_t)o.n * o.bytes));
        o.d_pool = new_device_pool(o.d_pool_slots, o.n, o.bytes);
    }
    reset_malloc_stats();
    t->version[version] = kit_time_kernel(objects_reset, objects_launch, &o, 1, t->repeats);
    /* The last repetition's objects are still there: count what it left without memory. */
    malloc_stats_t stats = read_malloc_stats();
    t->mallocs[version] = stats.calls;
    t->malloc_failures[version] = stats.failures;
    unsigned long long counts[2];
    count_bad_objects(&o, counts);
    t->missing[version] = counts[0];
    t->wrong[version] = counts[1];
    check_objects_run(&o); /* the last run, as every run before it was checked */
    t->version_checks[version] = o.checks;
    KIT_CHECK(cudaFree(o.d_counts));
    if (version != OBJECTS_POOL)
        objects_reset(&o); /* free the device-heap memory: later cases of this process share the heap */
    if (o.d_pool != NULL) {
        KIT_CHECK(cudaFree(o.d_pool));
        KIT_CHECK(cudaFree(o.d_pool_slots));
    }
    KIT_CHECK(cudaFree(o.d_objects));
}

typedef struct {
    bounded_counter_t *d_counter;
    unsigned int *d_sink, *h_sink;
    unsigned int rounds;
    int which, blocks;
    int launched; /* runs launched so far, of which the last is not yet checked */
    run_checks_t checks;
} take_t;

/* The last run: every request took an index (room for all), so the indices handed out are exactly
 * 0 .. R - 1: the counter ends at R and the answers, summed in 32 bits (the sink), sum to R(R-1)/2
 * modulo 2^32. A run that handed out nothing, or stale answers, does not. */
static void check_take_run(take_t *t)
{
    if (t->launched <= t->checks.runs)
        return;
    unsigned long long threads = (unsigned long long)t->blocks * THREADS, requests = threads * t->rounds;
    unsigned int want = (unsigned int)(requests * (requests - 1) / 2), sum = 0;
    bounded_counter_t after;
    KIT_CHECK(cudaMemcpy(t->h_sink, t->d_sink, sizeof(unsigned int) * threads, cudaMemcpyDeviceToHost));
    KIT_CHECK(cudaMemcpy(&after, t->d_counter, sizeof after, cudaMemcpyDeviceToHost));
    for (unsigned long long k = 0; k < threads; k++)
        sum += t->h_sink[k];
    note_run(&t->checks, sum != want || after.next != requests, sum, after.next, want);
}

static void take_reset(void *p)
{
    take_t *t = (take_t *)p;
    check_take_run(t);
    KIT_CHECK(cudaMemset(t->d_sink, 0xff, sizeof(unsigned int) * (size_t)t->blocks * THREADS));
    bounded_counter_t fresh = {0, KIT_MAX_CAPACITY}; /* room for every request: each one takes an index */
    KIT_CHECK(cudaMemcpy(t->d_counter, &fresh, sizeof fresh, cudaMemcpyHostToDevice));
}

static void take_launch(void *p)
{
    take_t *t = (take_t *)p;
    t->launched++;
    kit_take_timed<<<t->blocks, THREADS>>>(t->d_counter, t->rounds, t->which, t->d_sink);
}

static kit_timing_t time_take(int which, unsigned int rounds, int blocks, int repeats, run_checks_t *checks)
{
    take_t t;
    memset(&t, 0, sizeof t);
    t.rounds = rounds;
    t.which = which;
    t.blocks = blocks;
    KIT_CHECK(cudaMalloc((void **)&t.d_counter, sizeof(bounded_counter_t)));
    KIT_CHECK(cudaMalloc((void **)&t.d_sink, sizeof(unsigned int) * (size_t)blocks * THREADS));
    t.h_sink = (unsigned int *)kit_host_alloc(sizeof(unsigned int) * (size_t)blocks * THREADS);
    kit_timing_t result = kit_time_kernel(take_reset, take_launch, &t, 1, repeats);
    check_take_run(&t); /* the last run */
    *checks = t.checks;
    free(t.h_sink);
    KIT_CHECK(cudaFree(t.d_sink));
    KIT_CHECK(cudaFree(t.d_counter));
    return result;
}

static const char *const object_version_names[3] = {"per-object device malloc (kit)", "one bulk malloc, carved (kit)",
                                                    "your pool_alloc"};
static const char *const object_version_keys[3] = {"per_object_malloc", "bulk", "pool"};

static void print_timing(timing_t t)
{
    printf("Part A: %u objects of %u bytes, one per thread, median of %d runs\n", t.objects, t.object_bytes, t.repeats);
    for (int v = 0; v < 3; v++) {
        printf("  %-32s %10.3f ms (min %.3f, max %.3f)", object_version_names[v], t.version[v].median_ms,
               t.version[v].min_ms, t.version[v].max_ms);
        if (t.missing[v] || t.wrong[v])
            printf("; %llu objects got no memory, %llu wrong", t.missing[v], t.wrong[v]);
        if (v != OBJECTS_POOL && t.malloc_failures[v])
            printf("; %llu of %llu device mallocs failed: the heap is too small", t.malloc_failures[v], t.mallocs[v]);
        run_checks_t c = t.version_checks[v];
        if (c.runs_wrong)
            printf("; WRONG: %d of its %d runs checked did not do their work (first: run %d, %llu objects without "
                   "memory, %llu wrong, %llu slots used)", c.runs_wrong, c.runs, c.first_wrong_run,
                   c.first_wrong_detail[0], c.first_wrong_detail[1], c.first_wrong_detail[2]);
        printf("\n");
    }
    if (t.version[OBJECTS_BULK].median_ms > 0 && t.version[OBJECTS_POOL].median_ms > 0)
        printf("  per-object malloc / bulk: %.1fx; per-object malloc / your pool: %.1fx\n",
               t.version[OBJECTS_MALLOC].median_ms / t.version[OBJECTS_BULK].median_ms,
               t.version[OBJECTS_MALLOC].median_ms / t.version[OBJECTS_POOL].median_ms);
    if (t.take_rounds) {
        printf("Part B, counter speed: %lld requests (%u per thread), all within capacity, median of %d runs\n",
               t.take_requests, t.take_rounds, t.repeats);
        printf("  %-32s %10.3f ms (min %.3f, max %.3f)\n", "one atomic per thread (kit)", t.take_per_thread.median_ms,
               t.take_per_thread.min_ms, t.take_per_thread.max_ms);
        printf("  %-32s %10.3f ms (min %.3f, max %.3f)\n", "your counter_take", t.take_student.median_ms,
               t.take_student.min_ms, t.take_student.max_ms);
        run_checks_t c = t.take_student_checks;
        printf("  your runs: %d checked (1 warm-up), %d did not hand out indices 0 .. %lld - 1", c.runs, c.runs_wrong,
               t.take_requests);
        if (c.runs_wrong)
            printf(" (first: run %d, answers summing to %llu, counter.next %llu; expected sum %llu, next %lld)",
                   c.first_wrong_run, c.first_wrong_detail[0], c.first_wrong_detail[1], c.first_wrong_detail[2],
                   t.take_requests);
        printf("\n");
        if (t.take_per_thread_checks.runs_wrong)
            printf("  WRONG (the kit's counter): %d of its runs did not hand out indices 0 .. R - 1\n",
                   t.take_per_thread_checks.runs_wrong);
        if (t.take_student.median_ms > 0)
            printf("  one atomic per thread / yours: %.1fx\n", t.take_per_thread.median_ms / t.take_student.median_ms);
    }
}

/* What the checks of a timing loop's runs found (run_checks_t); detail names its first wrong run's
 * numbers. */
static void json_run_checks(kit_json_t *j, run_checks_t c, const char *const detail[3])
{
    kit_json_int(j, "runs_checked", c.runs);
    kit_json_int(j, "runs_wrong", c.runs_wrong);
    kit_json_int(j, "first_wrong_run", c.first_wrong_run);
    for (int k = 0; k < 3; k++)
        kit_json_uint(j, detail[k], c.first_wrong_detail[k]);
}

static const char *const take_detail[3] = {"first_wrong_sum", "first_wrong_next", "expected_sum"};

static void json_timing_entry(kit_json_t *j, const char *key, kit_timing_t t, run_checks_t c)
{
    kit_json_begin_object(j, key);
    kit_json_double(j, "median_ms", t.median_ms);
    kit_json_double(j, "min_ms", t.min_ms);
    kit_json_double(j, "max_ms", t.max_ms);
    json_run_checks(j, c, take_detail);
    kit_json_end_object(j);
}

static void json_timing(kit_json_t *j, timing_t t)
{
    kit_json_begin_object(j, "timing");
    kit_json_bool(j, "ran", t.ran);
    kit_json_uint(j, "objects", t.objects);
    kit_json_uint(j, "object_bytes", t.object_bytes);
    kit_json_int(j, "repeats", t.repeats);
    for (int v = 0; v < 3; v++) {
        kit_json_begin_object(j, object_version_keys[v]);
        kit_json_double(j, "median_ms", t.version[v].median_ms);
        kit_json_double(j, "min_ms", t.version[v].min_ms);
        kit_json_double(j, "max_ms", t.version[v].max_ms);
        kit_json_uint(j, "device_mallocs", t.mallocs[v]);
        kit_json_uint(j, "malloc_failures", t.malloc_failures[v]);
        kit_json_uint(j, "objects_missing", t.missing[v]);
        kit_json_uint(j, "objects_wrong", t.wrong[v]);
        static const char *const detail[3] = {"first_wrong_missing", "first_wrong_objects_wrong",
                                              "first_wrong_slots_used"};
        json_run_checks(j, t.version_checks[v], detail);
        kit_json_end_object(j);
    }
    kit_json_int(j, "threads", THREADS);
    kit_json_uint(j, "take_rounds", t.take_rounds);
    kit_json_int(j, "take_requests", t.take_requests);
    json_timing_entry(j, "take_per_thread", t.take_per_thread, t.take_per_thread_checks);
    json_timing_entry(j, "take_student", t.take_student, t.take_student_checks);
    kit_json_end_object(j);
}

/* --workload's words: the index is workload_init's heavy. */
static const char *const workload_names[] = {"chained", "heavy", NULL};

/* --requests: its default here is that of the default --capacity; not given, it is 4 x --capacity. */
#define DEFAULT_CAPACITY (1 << 20)
static const kit_option_t options[] = {
    {"--capacity", "Part B: slots of the uniqueness run's pool (0: no uniqueness run)", DEFAULT_CAPACITY, 0,
     KIT_MAX_CAPACITY, NULL},
    {"--requests", "Part B: the uniqueness run's requests (not given: 4 x --capacity; 0: no run)",
     4 * DEFAULT_CAPACITY, 0, MAX_REQUESTS, NULL},
    {"--slot-bytes", "Part B: bytes of each slot of the uniqueness run, a multiple of 4", KIT_RECORD_BYTES,
     KIT_RECORD_BYTES, 4096, NULL},
    {"--blocks", "blocks of the kit's kernels (0: as many as fill the GPU)", 0, 0, 1 << 20, NULL},
    {"--block-x", "the uniqueness run's blocks: threads in x (x times y at most 512)", THREADS, 1,
     MAX_BLOCK_THREADS, NULL},
    {"--block-y", "the uniqueness run's blocks: threads in y", 1, 1, MAX_BLOCK_THREADS, NULL},
    {"--lanes", "the uniqueness run: whole warps ask at once, or seeded groups of lanes with gaps",
     LANES_CONTIGUOUS, 0, 0, lanes_names},
    {"--many", "the uniqueness run asks pool_alloc_many for 1 .. this many slots (0: pool_alloc, one)", 0, 0,
     MAX_MANY, NULL},
    {"--wrap-capacity", "Part B past 2^32: the counter's capacity", 4096, 1, 1 << 24, NULL},
    {"--wrap-requests", "Part B past 2^32: at least this many requests to counter_take (0: no run)", 0, 0,
     MAX_WRAP_REQUESTS, NULL},
    {"--lines", "Part C's lines (0: no Part C)", 1000, 0, MAX_LINES, NULL},
    {"--workload", "Part C's lines: Lab 04's chain, or one line in 256 at --max and the rest short", 0, 0, 0,
     workload_names},
    {"--factor", "a line's vertex count is its curvature times this, clamped", 16, 1, 1000000, NULL},
    {"--max", "the most vertices a line may have", 32, MIN_VERTICES, MAX_MAX_VERTICES, NULL},
    {"--fit", "the vertex pool, in percent of the vertices the lines need", 100, 1, 1000, NULL},
    {"--objects", "objects of the malloc timing (0: none)", 1000000, 0, 1 << 24, NULL},
    {"--object-bytes", "bytes of each object, a multiple of 4", 128, 4, 4096, NULL},
    {"--heap-mib", "the device heap in MiB (0: sized for --objects)", 0, 0, 65536, NULL},
    {"--take-rounds", "requests per thread of the counter timing (0: none)", 32, 0, 1024, NULL},
    {"--repeats", "timed runs of each version (medians; 0: no timing)", 3, 0, 100, NULL},
    {"--seed", "draws Part C's lines and the uniqueness run's lane groups and request sizes", 1, 0,
     2000000000L, NULL},
    KIT_OPTIONS_END};

/* One case (kit_harness.h): its options, the limits it needs, Parts B, C and A, the document. */
static int run_case(int argc, char **argv)
{
    long long capacity = kit_option_long(argc, argv, options, "--capacity");
    long long requests = kit_option_long(argc, argv, options, "--requests");
    if (kit_arg_string(argc, argv, "--requests", NULL) == NULL)
        requests = 4 * capacity;
    unsigned int slot_bytes = (unsigned int)kit_option_long(argc, argv, options, "--slot-bytes");
    int blocks = (int)kit_option_long(argc, argv, options, "--blocks");
    request_shape_t shape;
    shape.block_x = (int)kit_option_long(argc, argv, options, "--block-x");
    shape.block_y = (int)kit_option_long(argc, argv, options, "--block-y");
    shape.lanes = kit_option_word(argc, argv, options, "--lanes");
    shape.many = (unsigned int)kit_option_long(argc, argv, options, "--many");
    unsigned int wrap_capacity = (unsigned int)kit_option_long(argc, argv, options, "--wrap-capacity");
    long long wrap_requests = kit_option_long(argc, argv, options, "--wrap-requests");
    int n_lines = (int)kit_option_long(argc, argv, options, "--lines");
    int heavy = kit_option_word(argc, argv, options, "--workload");
    const char *workload_name = workload_names[heavy];
    int max_vertices = (int)kit_option_long(argc, argv, options, "--max");
    float factor = (float)kit_option_long(argc, argv, options, "--factor");
    int fit_percent = (int)kit_option_long(argc, argv, options, "--fit");
    unsigned int objects = (unsigned int)kit_option_long(argc, argv, options, "--objects");
    unsigned int object_bytes = (unsigned int)kit_option_long(argc, argv, options, "--object-bytes");
    long heap_mib = kit_option_long(argc, argv, options, "--heap-mib");
    unsigned int take_rounds = (unsigned int)kit_option_long(argc, argv, options, "--take-rounds");
    int repeats = (int)kit_option_long(argc, argv, options, "--repeats");
    unsigned long long seed = (unsigned long long)kit_option_long(argc, argv, options, "--seed");
    const char *json_path = kit_arg_string(argc, argv, "--json", NULL);
    shape.seed = seed;
    if (shape.block_x * shape.block_y > MAX_BLOCK_THREADS) {
        fprintf(stderr, "--block-x times --block-y must be at most %d threads\n", MAX_BLOCK_THREADS);
        return KIT_EXIT_USAGE;
    }
    if (requests > MAX_REQUESTS) {
        fprintf(stderr, "--requests (4 x --capacity unless given) must be at most %lld\n", MAX_REQUESTS);
        return KIT_EXIT_USAGE;
    }
    if (object_bytes % 4 != 0 || slot_bytes % 4 != 0) {
        fprintf(stderr, "--object-bytes and --slot-bytes must be multiples of 4 (the kit writes 4-byte words)\n");
        return KIT_EXIT_USAGE;
    }

    /* Each case asks for its own limits before any kernel runs and before it allocates anything
     * (kit_case_limit: a later case whose heap size the runtime refuses to change, once a malloc
     * kernel has run, is deferred to a fresh process).
     * The device heap (default 8 MiB) must hold every object of the per-object run and the bulk
     * block; device malloc keeps bookkeeping of its own, hence the margin. */
    size_t heap = heap_mib > 0 ? (size_t)heap_mib << 20
                               : 2 * (size_t)objects * (object_bytes + 64) + (size_t)objects * object_bytes + ((size_t)64 << 20);
    if (!kit_case_limit(cudaLimitMallocHeapSize, heap))
        return KIT_CASE_DEFERRED;
    size_t pending = (size_t)n_lines + 64 > 2048 ? (size_t)n_lines + 64 : 2048; /* a child per line (Lab 04) */
    if (!kit_case_limit(cudaLimitDevRuntimePendingLaunchCount, pending))
        return KIT_CASE_DEFERRED;
    KIT_CHECK(cudaDeviceGetLimit(&heap, cudaLimitMallocHeapSize));
    KIT_CHECK(cudaDeviceGetLimit(&pending, cudaLimitDevRuntimePendingLaunchCount));
    reset_kit_state(); /* an earlier case of this process may have left its counts */
    int uniqueness_blocks = blocks; /* 0: a full grid of the uniqueness run's own block shape */
    if (blocks == 0)
        blocks = full_grid_blocks((const void *)kit_take_timed, THREADS); /* the timed kernel fills it */

    struct cudaDeviceProp prop;
    KIT_CHECK(cudaGetDeviceProperties(&prop, 0));
    printf("device: %s (compute capability %d.%d, %d SMs); device heap %.1f MiB, pending-launch limit %zu; "
           "kit kernels: %d blocks of %d\n", prop.name, prop.major, prop.minor, prop.multiProcessorCount,
           heap / 1048576.0, pending, blocks, THREADS);

    uniqueness_t uniq;
    memset(&uniq, 0, sizeof uniq);
    if (capacity > 0 && requests > 0) {
        uniq = run_uniqueness((unsigned int)capacity, requests, slot_bytes, uniqueness_blocks, shape);
        print_uniqueness(uniq);
    }
    wrap_t wrap;
    memset(&wrap, 0, sizeof wrap);
    if (wrap_requests > 0) {
        wrap = run_wrap(wrap_capacity, wrap_requests, blocks);
        print_wrap(wrap);
    }
    collect_t collect;
    memset(&collect, 0, sizeof collect);
    if (n_lines > 0) {
        collect = run_collect(n_lines, heavy, max_vertices, factor, seed, fit_percent);
        print_collect(collect);
    }
    timing_t timing;
    memset(&timing, 0, sizeof timing);
    if (repeats > 0 && (objects > 0 || take_rounds > 0)) {
        timing.ran = 1;
        timing.objects = objects;
        timing.object_bytes = object_bytes;
        timing.repeats = repeats;
        timing.take_rounds = take_rounds;
        if (objects > 0) {
            /* The bulk block first, while the heap is still in one piece: after a million small
             * blocks have come and gone, one large block may no longer find room. (An earlier case
             * of this process may have run them already: freed, the heap may still be in pieces.) */
            time_objects(&timing, OBJECTS_BULK, blocks);
            time_objects(&timing, OBJECTS_MALLOC, blocks);
            time_objects(&timing, OBJECTS_POOL, blocks);
        }
        if (take_rounds > 0) {
            timing.take_requests = (long long)take_rounds * blocks * THREADS;
            if (timing.take_requests > KIT_MAX_CAPACITY) {
                fprintf(stderr, "--take-rounds %u: %lld requests is more than the counter's capacity %u\n",
                        take_rounds, timing.take_requests, KIT_MAX_CAPACITY);
                return KIT_EXIT_USAGE;
            }
            timing.take_per_thread = time_take(TAKE_PER_THREAD, take_rounds, blocks, repeats,
                                               &timing.take_per_thread_checks);
            timing.take_student = time_take(TAKE_STUDENT, take_rounds, blocks, repeats, &timing.take_student_checks);
        }
        print_timing(timing);
    }

    if (json_path != NULL) {
        kit_json_t j;
        kit_json_open(&j, json_path);
        kit_json_begin_object(&j, NULL);
        kit_json_string(&j, "lab", "06-parallel-allocator");
        kit_json_device(&j);
        kit_json_begin_object(&j, "params");
        kit_json_int(&j, "capacity", capacity);
        kit_json_int(&j, "requests", requests);
        kit_json_uint(&j, "slot_bytes", slot_bytes);
        kit_json_int(&j, "blocks", blocks);
        kit_json_int(&j, "block_x", shape.block_x);
        kit_json_int(&j, "block_y", shape.block_y);
        kit_json_string(&j, "lanes", lanes_names[shape.lanes]);
        kit_json_uint(&j, "many", shape.many);
        kit_json_uint(&j, "wrap_capacity", wrap_capacity);
        kit_json_int(&j, "wrap_requests", wrap_requests);
        kit_json_int(&j, "lines", n_lines);
        kit_json_string(&j, "workload", workload_name);
        kit_json_double(&j, "factor", factor);
        kit_json_int(&j, "max", max_vertices);
        kit_json_int(&j, "fit", fit_percent);
        kit_json_uint(&j, "objects", objects);
        kit_json_uint(&j, "object_bytes", object_bytes);
        kit_json_uint(&j, "take_rounds", take_rounds);
        kit_json_int(&j, "repeats", repeats);
        kit_json_int(&j, "seed", (long long)seed);
        kit_json_end_object(&j);
        kit_json_uint(&j, "heap_bytes", heap);
        kit_json_uint(&j, "pending_launch_limit", pending);
        json_uniqueness(&j, uniq);
        json_wrap(&j, wrap);
        json_collect(&j, collect);
        json_timing(&j, timing);
        kit_json_end_object(&j);
        kit_json_close(&j);
    }
    return 0;
}

int main(int argc, char **argv)
{
    return kit_harness_main(argc, argv, options, run_case);
}
