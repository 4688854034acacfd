#!/usr/bin/env bash
# Grade a class on a Slurm cluster: a job array runs one shard of `grade.py batch` per task (each
# on a node with a GPU), then one job merges the shards' sheets.
#
#   grader/slurm/grade-class.sh SUBMISSIONS_DIR LAB OUT_DIR [SHARDS] [extra sbatch options...]
#
# SUBMISSIONS_DIR and OUT_DIR must be on a file system every node sees. All shards use one batch
# seed (SEED=..., else the one OUT_DIR's shards already used, else drawn here; printed), so the
# merged sheet is one class graded alike.
# GRADE_SBATCH_GPU holds the GPU request (default --gres=gpu:1; set it empty for a cluster
# without GRES). Re-running the same command resumes: each shard skips what it already graded.
# The merged sheet is OUT_DIR/merged/scores.csv; logs are in OUT_DIR/logs/.
set -euo pipefail
if [ $# -lt 3 ]; then
    awk 'NR > 1 && !/^#/ { exit } NR > 1 { sub(/^# ?/, ""); print }' "$0"
    exit 2
fi
SUBMISSIONS=$(realpath "$1")
LAB=$2
OUT=$(realpath -m "$3")
SHARDS=${4:-4}
shift $(( $# < 4 ? $# : 4 ))
KIT=$(cd "$(dirname "$0")/../.." && pwd)
# Without SEED, the seed of this OUT_DIR's earlier shards where they used one, so that the same command
# resumes (a new seed would grade every submission again); else a new one.
SEED=${SEED:-$(python3 -c 'import glob, json, random, sys
seeds = {json.load(open(p)).get("seed") for p in glob.glob(sys.argv[1] + "/shard-*/batch.json")} - {None}
print(seeds.pop() if len(seeds) == 1 else random.SystemRandom().randrange(1, 10 ** 6))' "$OUT")}
GPU_REQUEST=${GRADE_SBATCH_GPU---gres=gpu:1}
mkdir -p "$OUT/logs"

shards=$(sbatch --parsable --array="1-$SHARDS" --job-name="grade-lab$LAB" \
    --output="$OUT/logs/shard-%a.log" $GPU_REQUEST "$@" \
    --wrap "python3 '$KIT/grader/grade.py' batch '$SUBMISSIONS' --lab '$LAB' --seed $SEED \
            --out '$OUT/shard-'\$SLURM_ARRAY_TASK_ID --shard \$SLURM_ARRAY_TASK_ID/$SHARDS")
shards=${shards%%;*}
merge=$(sbatch --parsable --dependency="afterany:$shards" --job-name="merge-lab$LAB" \
    --output="$OUT/logs/merge.log" "$@" \
    --wrap "python3 '$KIT/grader/grade.py' merge '$OUT'/shard-* --out '$OUT/merged'")
echo "batch seed $SEED; shards: job $shards (tasks 1-$SHARDS); merge: job $merge"
echo "when done: $OUT/merged/scores.csv (and summary.txt; logs in $OUT/logs/)"
