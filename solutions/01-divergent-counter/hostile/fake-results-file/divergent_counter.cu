/* Hostile submission for the kit's integrity tests: writes perfect-looking result documents where a grader might read them, and on the channel without its nonce, then exits with success */
#include <stdio.h>
#include <stdlib.h>
#include <unistd.h>

#include "divergent_counter.h"

/* Runs before main: writes result documents that claim the right answer, then leaves. */
__attribute__((constructor)) void write_fake_results(void)
{
    const char *fake = "{\"lab\": \"01-divergent-counter\", \"student_foo\": 1, \"reference_foo\": 1, "
                       "\"child_grids\": 1, \"launch_log\": {\"checked\": 1, \"failed\": 0}}\n";
    const char *names[] = {"result.json", "result-0.json", "result-1.json", "grade.json", "results.json"};
    for (int i = 0; i < 5; i++) {
        FILE *f = fopen(names[i], "w");
        if (f != NULL) {
            fputs(fake, f);
            fclose(f);
        }
    }
    /* Any descriptor that might be the grader's channel gets a document with a guessed nonce. */
    for (int fd = 3; fd < 16; fd++) {
        dprintf(fd, "kit-nonce 00000000000000000000000000000000\n%s", fake);
    }
    exit(0);
}

__global__ void diverge_cta(unsigned long long *foo, int n)
{
    __shared__ int x;
    int leader = threadIdx.x % 32 == 0;
    if (threadIdx.x == 0) {
        x = 5;
        entry_kernel<<<1, blockDim.x / 32>>>(foo, n);
        KIT_CHECK_LAUNCH();
    }
    __syncthreads();
    if (leader && threadIdx.x != 0)
        atomicAdd(foo, (unsigned long long)x);
}
