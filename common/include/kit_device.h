/* kit_device.h - small device-side helpers the kit's harnesses share.
 *
 *   if (kit_first_thread_of_grid()) ...        once per grid, whatever its shape
 *   unsigned long long t = kit_globaltimer_ns();
 *   t = kit_spin_ns(t, 5000);                    busy-wait 5 us from t; returns the time it stopped
 *   unsigned long long g = kit_grid_id();        which grid launch this thread belongs to
 */
#ifndef KIT_DEVICE_H
#define KIT_DEVICE_H

/* The GPU's global timer in nanoseconds, the same clock on every SM, for stamping when kit-owned
 * code ran (its resolution is about a microsecond on some GPUs). */
static __device__ __forceinline__ unsigned long long kit_globaltimer_ns(void)
{
    unsigned long long t;
    asm volatile("mov.u64 %0, %%globaltimer;" : "=l"(t));
    return t;
}

/* Spins on the global timer until ns nanoseconds have passed since start (a reading of
 * kit_globaltimer_ns); returns the last reading, start itself when ns <= 0. On the global timer,
 * not on clock cycles, so the wait does not depend on the GPU's clock. */
static __device__ __forceinline__ unsigned long long kit_spin_ns(unsigned long long start, long long ns)
{
    unsigned long long now = start;
    while ((long long)(now - start) < ns)
        now = kit_globaltimer_ns();
    return now;
}

/* 1 in thread (0, 0, 0) of block (0, 0, 0), 0 elsewhere: one thread per grid, whatever its shape. */
static __device__ __forceinline__ int kit_first_thread_of_grid(void)
{
    return threadIdx.x == 0 && threadIdx.y == 0 && threadIdx.z == 0 && blockIdx.x == 0 && blockIdx.y == 0 &&
           blockIdx.z == 0;
}

/* The running grid's identity (PTX %gridid): one 64-bit number per grid launch in the context, the
 * same in every thread of the grid, host- or device-launched. Kit code that a student's code calls
 * reads it to count the grids that actually ran, each once however often it calls: a count of calls
 * would count a loop in one grid as many grids. */
static __device__ __forceinline__ unsigned long long kit_grid_id(void)
{
    unsigned long long id;
    asm volatile("mov.u64 %0, %%gridid;" : "=l"(id));
    return id;
}

#endif /* KIT_DEVICE_H */
