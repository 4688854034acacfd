#include <string.h>
#include <unistd.h>
void hostile_relay(void)
{
    static const char forged[] = "{\"lab\": \"forged\"}\nkit-case 0 0 0\n";
    for (int fd = 3; fd < 64; fd++)
        if (write(fd, forged, strlen(forged)) < 0)
            continue;
}
