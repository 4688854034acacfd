"""The kit's check of tessellated Bezier lines (check_lines in common/, shared by the harnesses of
labs 04 and 06), as the rubrics report it."""


def first_wrong_vertex(check):
    """"vertex I is (x, y), expected (x, y)" for the first wrong vertex a check_lines result found, or ""."""
    if check.get("first_bad_line", -1) < 0 or check.get("first_bad_what") != "wrong vertices":
        return ""
    return "vertex %d is (%g, %g), expected (%g, %g)" % (check["first_bad_index"], check["first_got_x"],
                                                         check["first_got_y"], check["first_want_x"],
                                                         check["first_want_y"])
