#!/bin/sh
# student-flags.sh FILE - check a lab's student flags file (e.g. nvcc.flags) against the kit's
# whitelist and print the accepted options on one line, for kit.mk to add to the compile of the
# student's .cu files. Exits 1, naming the first refused option, when the file asks for anything
# else; the compiler never sees a refused option.
#
# Allowed: the default-stream option in any of nvcc's spellings, once:
#   --default-stream per-thread   --default-stream=per-thread   -default-stream per-thread
#   -default-stream=per-thread    (and the same with legacy)
# plus blank lines and comments: '#' to the end of a line (so the kit's "#ifdef KIT_STARTER"
# marker lines are comments too).
if [ $# -ne 1 ] || [ ! -f "$1" ]; then
    echo "usage: student-flags.sh FLAGS_FILE" >&2
    exit 2
fi
exec awk -v name="$(basename "$1")" '
function refuse(why) {
    printf "%s:%d: error: %s\n", name, NR, why > "/dev/stderr"
    allowed = "--default-stream per-thread or legacy (also written --default-stream=VALUE"
    allowed = allowed " or -default-stream VALUE), comments (#...) and blank lines"
    printf "%s: allowed here: %s\n", name, allowed > "/dev/stderr"
    failed = 1
    exit 1
}
function accept(value) {
    if (value != "per-thread" && value != "legacy")
        refuse("\"" value "\" is not a value this lab allows for --default-stream (per-thread or legacy)")
    if (chosen != "")
        refuse("--default-stream is given twice (first as " chosen "); give it once")
    chosen = value
}
{
    sub(/\r$/, "")
    sub(/#.*/, "")
    n = split($0, word, /[ \t]+/)
    for (i = 1; i <= n; i++) {
        w = word[i]
        if (w == "")
            continue
        if (w == "--default-stream" || w == "-default-stream") {
            if (i == n || word[i + 1] == "")
                refuse(w " needs its value on the same line (per-thread or legacy)")
            accept(word[++i])
        } else if (w ~ /^--?default-stream=/) {
            sub(/^--?default-stream=/, "", w)
            accept(w)
        } else {
            refuse("\"" w "\" is not an option this lab allows in its flags file")
        }
    }
}
END {
    if (failed)
        exit 1
    if (chosen != "")
        print "--default-stream=" chosen
    else
        print ""
}' "$1"
