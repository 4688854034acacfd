"""The kit's exit statuses, each with one meaning in every command (grade.py, selftest.py, tools/)."""
OK = 0           # grade.py: full marks with every check run; a tool: done
FAILED = 1       # grade.py: points lost; a test or tool: something failed
USAGE = 2        # a bad command line
# Not run: it needs a GPU (or another tool) this machine lacks. Never a pass: CTest reports it as "Not
# Run" (SKIP_RETURN_CODE in tests/CMakeLists.txt); the C side names it KIT_EXIT_NOT_RUN (kit_check.h).
NOT_RUN = 77
# make sanitize (compute-sanitizer --error-exitcode): memcheck found errors. None of the harnesses'
# statuses (0, 1, 2, 3 and 77: kit_check.h), so that a memory error is told from the harness's own failure.
MEMCHECK_ERRORS = 86
