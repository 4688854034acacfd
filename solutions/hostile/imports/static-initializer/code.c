#include <stdio.h>
static int hostile_start(void) { return printf("HOSTILE ran before main\n"); }
int hostile_started = hostile_start();
