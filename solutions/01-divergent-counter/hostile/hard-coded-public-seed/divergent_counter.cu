/* Hostile submission for the kit's integrity tests: returns the totals of the public seed's cases (grade.py --seed 1) from a table instead of counting */
#include <stdio.h>
#include <stdlib.h>
#include <unistd.h>

#include "divergent_counter.h"

/* (K, M, N) -> total for the cases `grade.py --seed 1` draws without the instructor's salt. */
__global__ void diverge_cta(unsigned long long *foo, int n)
{
    const unsigned long long table[7][4] = {
        {1, 1, 1, 1ULL}, {1, 32, 1000, 32155ULL}, {3, 32, 1048576, 100663761ULL}, {1000, 17, 64, 1168000ULL},
        {62, 18, 1484, 1661414ULL}, {491, 14, 768, 5311147ULL}, {626, 12, 1530, 11527790ULL}};
    if (blockIdx.x == 0 && threadIdx.x == 0) {
        entry_kernel<<<gridDim.x, blockDim.x / 32>>>(foo, 0); /* looks like a launch, does no counting */
        KIT_CHECK_LAUNCH();
        for (int i = 0; i < 7; i++)
            if (table[i][0] == gridDim.x && table[i][1] == blockDim.x / 32 && table[i][2] == (unsigned long long)n)
                atomicAdd(foo, table[i][3]);
    }
}
