"""The kit's grading library (Python 3 standard library only).

Modules:
  paths     where the kit's folders are
  process   run a command in its own process group, with a time limit and an output cap
  checks    checks with points and parents; scoring; skip logic
  labs      the lab registry and lab specifications (one module per lab in grader/rubrics/)
  build     stage a submission next to pristine kit files and build it with the kit's make rules
  gpu       is there a GPU that can run dynamic parallelism? (the kit's probe)
  ptx       what a PTX file calls
  report    text, JSON and Gradescope output
  starters  generate labs/ starter files from solutions/ by markers
  grading   grade one submission of one lab
"""
