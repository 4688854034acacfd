/* Connects to a port on this machine where the kit's test listens (a stand-in for any server the
 * grading machine can reach) and reports whether it got through. */
#include <arpa/inet.h>
#include <netinet/in.h>
#include <sys/socket.h>

#ifndef HOSTILE_PORT
#define HOSTILE_PORT 47613  /* the kit's hostile test defines the port it listens on (grader/selftest.py) */
#endif

__attribute__((constructor)) static void hostile_attack(void)
{
    struct sockaddr_in to;
    int s = socket(AF_INET, SOCK_STREAM, 0);
    if (s < 0)
        return;
    memset(&to, 0, sizeof to);
    to.sin_family = AF_INET;
    to.sin_port = htons(HOSTILE_PORT);
    to.sin_addr.s_addr = htonl(INADDR_LOOPBACK);
    if (connect(s, (struct sockaddr *)&to, sizeof to) == 0) {
        const char *hello = "hostile submission connected\n";
        if (write(s, hello, strlen(hello)) < 0)
            perror("write");
        printf("HOSTILE connected to 127.0.0.1:%d\n", HOSTILE_PORT);
    } else {
        perror("HOSTILE connect");
    }
    close(s);
}
