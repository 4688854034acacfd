"""The lab registry. Each lab is a module grader/labs/labNN.py that defines LAB = Lab(...)."""
import importlib
import os
import pkgutil

from . import checks as chk


class Lab:
    """What the grader needs to know about one lab.

    name            folder name, e.g. "01-divergent-counter"
    title           for reports
    handout         path of the handout, relative to the kit
    make_cases      rng -> list of parameter dicts; one harness run per dict
    harness_args    params -> list of command-line arguments for the harness
    checks          the lab's own checks (after the kit's "compiles" and "runs cleanly")
    build_points    points for "compiles"; build_hint its hint
    run_points      points for "runs cleanly"; run_hint its hint
    run_problem     optional (params, doc) -> str or None: a lab-specific reason a run is not clean
    starter_must_fail  names of static checks the starter must fail (the kit's own tests use it)
    """

    def __init__(self, name, title, handout, make_cases, harness_args, checks,
                 build_points=1, run_points=1, build_hint="", run_hint="", run_problem=None,
                 starter_must_fail=()):
        self.name = name
        self.title = title
        self.handout = handout
        self.make_cases = make_cases
        self.harness_args = harness_args
        self.lab_checks = list(checks)
        self.build_points = build_points
        self.run_points = run_points
        self.build_hint = build_hint
        self.run_hint = run_hint
        self.run_problem = run_problem
        self.starter_must_fail = tuple(starter_must_fail)

    @property
    def number(self):
        return self.name.split("-", 1)[0]

    def check_named(self, name):
        for c in self.lab_checks:
            if c.name == name:
                return c
        return None


COMPILES = "compiles"
RUNS_CLEANLY = "runs cleanly"


def hint(lab_handout, section):
    """A hint line that names the handout and section."""
    return "read %s, section %s" % (lab_handout, section)


def _load_all():
    import labs as lab_package  # grader/labs, on sys.path beside gradelib
    found = {}
    for info in pkgutil.iter_modules(lab_package.__path__):
        if not info.name.startswith("lab"):
            continue
        module = importlib.import_module("labs." + info.name)
        lab = getattr(module, "LAB", None)
        if isinstance(lab, Lab):
            found[lab.name] = lab
    return dict(sorted(found.items()))


_REGISTRY = None


def all_labs():
    global _REGISTRY
    if _REGISTRY is None:
        _REGISTRY = _load_all()
    return _REGISTRY


def resolve(spec):
    """'4', '04' or '04-bezier-streams' -> Lab. Raises KeyError with the choices."""
    labs = all_labs()
    spec = spec.strip().rstrip("/")
    spec = os.path.basename(spec)
    if spec.isdigit():
        spec = "%02d" % int(spec)
    for name, lab in labs.items():
        if name == spec or lab.number == spec:
            return lab
    raise KeyError("no lab %r; labs are: %s" % (spec, ", ".join(labs)))


def kind_of_check(lab, name):
    if name == COMPILES:
        return chk.BUILD
    if name == RUNS_CLEANLY:
        return chk.RUNTIME
    c = lab.check_named(name)
    return c.kind if c else None
