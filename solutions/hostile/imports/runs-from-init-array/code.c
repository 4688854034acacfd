#include <stdio.h>
static void hostile_early(void) { printf("HOSTILE ran before main\n"); }
__attribute__((used, section(".init_array"))) static void (*hostile_entry)(void) = hostile_early;
