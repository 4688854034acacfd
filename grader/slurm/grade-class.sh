#!/usr/bin/env bash
# Grade a class on a Slurm cluster: a job array runs one shard of `grade.py batch` per task (each
# on a node with a GPU), then one job merges the shards' sheets.
#
#   grader/slurm/grade-class.sh SUBMISSIONS_DIR LAB OUT_DIR [SHARDS] [extra sbatch options...]
#
# SUBMISSIONS_DIR and OUT_DIR must be on a file system every node sees. All shards use one batch
# seed (SEED=..., else drawn here and printed), so the merged sheet is one class graded alike.
# GRADE_SBATCH_GPU holds the GPU request (default --gres=gpu:1; set it empty for a cluster
# without GRES). Re-running the same command resumes: each shard skips what it already graded.
# The merged sheet is OUT_DIR/merged/scores.csv; logs are in OUT_DIR/logs/.
set -euo pipefail
if [ $# -lt 3 ]; then
    sed -n '2,12p' "$0" | sed 's/^# \{0,1\}//'
    exit 2
fi
SUBMISSIONS=$(realpath "$1")
LAB=$2
OUT=$(realpath -m "$3")
SHARDS=${4:-4}
shift $(( $# < 4 ? $# : 4 ))
KIT=$(cd "$(dirname "$0")/../.." && pwd)
SEED=${SEED:-$(python3 -c 'import random; print(random.SystemRandom().randrange(1, 10 ** 6))')}
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
