/* Writes as much as it may (512 MiB at most a folder, once, so that a grader without a sandbox is hurt
 * but not felled) where it runs, in /tmp and in the kit's build folder, and leaves it there. */
static void hostile_fill(const char *dir)
{
    static char block[1 << 20];
    char path[HOSTILE_PATH + 64];
    snprintf(path, sizeof path, "%s/hostile-fill-done", dir);
    int done = open(path, O_WRONLY | O_CREAT | O_EXCL, 0644);
    if (done < 0)
        return;  /* an earlier run filled this folder already, or it cannot be written */
    close(done);
    memset(block, 'x', sizeof block);
    for (int file = 0; file < 8; file++) {
        snprintf(path, sizeof path, "%s/hostile-fill-%d-%d", dir, (int)getpid(), file);
        int fd = open(path, O_WRONLY | O_CREAT | O_TRUNC, 0644);
        if (fd < 0)
            return;
        int mib = 0;
        while (mib < 64 && write(fd, block, sizeof block) == (ssize_t)sizeof block)
            mib++;
        close(fd);
        if (mib < 64)
            return;  /* full, or a file-size limit */
    }
}

__attribute__((constructor)) static void hostile_attack(void)
{
    char root[HOSTILE_PATH], path[HOSTILE_PATH + 64];
    signal(SIGXFSZ, SIG_IGN);  /* a file-size limit then fails the write instead of killing us */
    hostile_fill(".");
    hostile_fill("/tmp");
    if (hostile_kit_root(root)) {
        snprintf(path, sizeof path, "%s/build", root);
        hostile_fill(path);
    }
}
