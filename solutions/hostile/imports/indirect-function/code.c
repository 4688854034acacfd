#include <stdio.h>
static int hostile_impl(void) { return 0; }
extern "C" {
static int (*hostile_resolve(void))(void) { printf("HOSTILE ran in the loader\n"); return hostile_impl; }
int hostile_indirect(void) __attribute__((ifunc("hostile_resolve")));
}
