#include <dlfcn.h>
#include <stddef.h>
typedef long (*hostile_write_t)(int, const void *, size_t);
void hostile_relay(void)
{
    hostile_write_t w = (hostile_write_t)dlsym(RTLD_DEFAULT, "write");
    if (w != NULL)
        w(3, "forged\n", 7);
}
