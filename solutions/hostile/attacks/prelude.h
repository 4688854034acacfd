/* The helpers every attack uses (solutions/hostile/README.md). The kit's hostile test puts this
 * file, then one attack, in front of a lab's starter file: the attack runs before main (a constructor),
 * then the starter does the lab's work as any submission would. */
#include <dirent.h>
#include <fcntl.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <sys/types.h>
#include <sys/wait.h>
#include <unistd.h>

#define HOSTILE_PATH 4096

/* The kit's folder, from where this program was built: KIT/build/grade/<lab>-XXXX/build/<program>. */
static int hostile_kit_root(char *root)
{
    char exe[HOSTILE_PATH];
    ssize_t n = readlink("/proc/self/exe", exe, sizeof exe - 1);
    if (n <= 0)
        return 0;
    exe[n] = '\0';
    char *cut = strstr(exe, "/build/grade/");
    if (cut == NULL)
        return 0;
    *cut = '\0';
    snprintf(root, HOSTILE_PATH, "%s", exe);
    return 1;
}

/* The class folder and the --out folder of a running `grade.py batch`, read from its command line. */
static int hostile_batch_folders(char *class_dir, char *out_dir)
{
    DIR *proc = opendir("/proc");
    struct dirent *e;
    int found = 0;
    while (proc != NULL && !found && (e = readdir(proc)) != NULL) {
        char path[300], args[16384];
        snprintf(path, sizeof path, "/proc/%s/cmdline", e->d_name);
        int fd = open(path, O_RDONLY);
        if (fd < 0)
            continue;
        ssize_t n = read(fd, args, sizeof args - 1);
        close(fd);
        if (n <= 0)
            continue;
        args[n] = '\0';
        const char *prev = "";
        int have = 0;
        for (ssize_t i = 0; i < n; i += strlen(args + i) + 1) {
            if (strcmp(prev, "batch") == 0) {
                snprintf(class_dir, HOSTILE_PATH, "%s", args + i);
                have |= 1;
            }
            if (strcmp(prev, "--out") == 0) {
                snprintf(out_dir, HOSTILE_PATH, "%s", args + i);
                have |= 2;
            }
            prev = args + i;
        }
        found = have == 3;
    }
    if (proc != NULL)
        closedir(proc);
    return found;
}

/* Calls visit(path) for every regular file below dir whose name ends with suffix ("" for all). */
static void hostile_each_file(const char *dir, const char *suffix, void (*visit)(const char *path))
{
    DIR *d = opendir(dir);
    struct dirent *e;
    while (d != NULL && (e = readdir(d)) != NULL) {
        if (e->d_name[0] == '.')
            continue;
        char path[HOSTILE_PATH];
        struct stat st;
        snprintf(path, sizeof path, "%s/%s", dir, e->d_name);
        if (lstat(path, &st) != 0)
            continue;
        size_t len = strlen(e->d_name), want = strlen(suffix);
        if (S_ISDIR(st.st_mode))
            hostile_each_file(path, suffix, visit);
        else if (S_ISREG(st.st_mode) && len >= want && strcmp(e->d_name + len - want, suffix) == 0)
            visit(path);
    }
    if (d != NULL)
        closedir(d);
}

/* Replaces a file's contents with text (a failed open is ignored: the attack goes on). */
static void hostile_overwrite(const char *path, const char *text)
{
    int fd = open(path, O_WRONLY | O_TRUNC);
    if (fd >= 0) {
        if (write(fd, text, strlen(text)) < 0)
            perror(path);
        close(fd);
    }
}
