"""The kit's check of tessellated Bezier lines (check_lines in common/, shared by the harnesses of
labs 04 and 06), as the rubrics report it."""


def first_wrong_vertex(check):
    """"vertex I is (x, y), expected (x, y)" for the first wrong vertex a check_lines result found, or ""."""
    if check.get("first_bad_line", -1) < 0 or check.get("first_bad_what") != "wrong vertices":
        return ""
    return "vertex %d is (%s, %s), expected (%s, %s)" % (check["first_bad_index"], *(
        _coordinate(check[k]) for k in ("first_got_x", "first_got_y", "first_want_x", "first_want_y")))


def _coordinate(value):
    """A coordinate as %g writes it; the harness writes one that is not finite (NaN) as null."""
    return "NaN" if value is None else "%g" % value
