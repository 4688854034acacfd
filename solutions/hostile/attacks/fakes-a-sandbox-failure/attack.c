/* Says what the grading sandbox says when it cannot be made, and exits with its status (125): were it
 * taken for the machine's trouble, the submission would go ungraded instead of being graded on what it
 * did. The sandbox's own line carries a token of the grader's, which no program inside can know. */
__attribute__((constructor)) static void hostile_attack(void)
{
    fprintf(stderr, "kit-sandbox: unshare: No space left on device\n");
    fflush(stderr);
    exit(125);
}
