"""The kit's grading library (Python 3 standard library only).

Modules:
  paths       where the kit's folders are
  exits       the kit's exit statuses (77: not run)
  process     run a command in its own process group, with a time limit and an output cap
  checks      checks with points and parents; scoring; skip logic
  failures    why a submission did not build or run cleanly, as kinds; the score sheet's verdicts
  registry    the Lab class and the lab registry (one rubric module per lab in grader/rubrics/)
  harness     a lab's harness contract (options, result keys); building and running a harness
  build       stage a submission next to pristine kit files and build it with the kit's make rules
  gpu         is there a GPU that can run dynamic parallelism? (the kit's probe)
  ptx         what a PTX file calls, and its control flow
  grading     grade one submission of one lab; the kit's checks and helpers the rubrics share
  bezier_lines  the shared Bezier line check (labs 04 and 06) as the rubrics report it
  diff        a readable difference of two lists of records
  report      text, JSON and Gradescope output
  starters    generate labs/ starter files from solutions/ by markers
  archives    submissions as they arrive: folders and archives, unpacked safely; fingerprints
  sheets      a class's verdicts, scores.csv and summary.txt
  batch       grade a class (grade.py batch, grade.py merge)
"""
