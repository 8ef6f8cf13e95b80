#!/bin/bash
# One shard of one evalsuite run per Slurm array task, into one shared PostgreSQL store
# (docs/scale.md, "Slurm job arrays"; docs/design/sharded-runs.md).
#
#   export EVALSUITE_STORE=postgresql://evals@db.example.org/evals
#   export EVALSUITE_ROOT="$PWD"                   # the project (tasks/, manifests/, holdout/), on a shared file system
#   sbatch --array=1-8 scripts/slurm/run_array.sh support@4.0.0 --model openai/gpt-4o \
#       --epochs 3 --seed 7
#
# Every argument is passed to `evalsuite run`; the script adds the run id (the same for every
# task of the array: RUN_ID, default run-<array job id>) and `--shard I/N` from Slurm's array
# variables. A requeued or re-submitted task runs the same command, which resumes its shard:
# only the attempts of its share that are not stored yet run. `evalsuite runs` shows each
# shard's progress meanwhile. Exit codes are `evalsuite run`'s (0: this shard's share is done).
#SBATCH --job-name=evalsuite-run
#SBATCH --array=1-8
#SBATCH --cpus-per-task=2
#SBATCH --requeue
#SBATCH --output=evalsuite-run-%A-%a.out
set -euo pipefail

fail() {
    echo "run_array.sh: $*" >&2
    exit 2
}

[[ -n "${SLURM_ARRAY_TASK_ID:-}" ]] ||
    fail "SLURM_ARRAY_TASK_ID is not set: submit with sbatch --array=1-N (or set it, and SLURM_ARRAY_TASK_COUNT, by hand)"
[[ -n "${SLURM_ARRAY_TASK_COUNT:-}" ]] ||
    fail "SLURM_ARRAY_TASK_COUNT is not set: submit with sbatch --array=1-N (Slurm sets it to N)"
[[ "${SLURM_ARRAY_TASK_ID}" =~ ^[0-9]+$ && "${SLURM_ARRAY_TASK_COUNT}" =~ ^[0-9]+$ ]] ||
    fail "SLURM_ARRAY_TASK_ID=${SLURM_ARRAY_TASK_ID} and SLURM_ARRAY_TASK_COUNT=${SLURM_ARRAY_TASK_COUNT} must be whole numbers"
[[ "${SLURM_ARRAY_TASK_ID}" -ge 1 && "${SLURM_ARRAY_TASK_MIN:-1}" == 1 ]] ||
    fail "the array must count from 1 (--array=1-N), as shards do (task ${SLURM_ARRAY_TASK_ID}, first task ${SLURM_ARRAY_TASK_MIN:-?})"
case "${EVALSUITE_STORE:-}" in
    postgresql*) ;;
    *) fail "EVALSUITE_STORE must name a PostgreSQL database every node reaches (postgresql://USER@HOST/DB), got '${EVALSUITE_STORE:-}': the tasks of an array run on many machines, which cannot share a SQLite file" ;;
esac
[[ $# -ge 1 ]] || fail "give the run's arguments: SUITE@X.Y.Z --model MODEL [--epochs K --seed N ...]"

RUN_ID="${RUN_ID:-run-${SLURM_ARRAY_JOB_ID:?set RUN_ID, or submit with sbatch (which sets SLURM_ARRAY_JOB_ID)}}"
# EVALSUITE names the program (default: `evalsuite` on PATH), e.g. a virtualenv's
read -r -a program <<<"${EVALSUITE:-evalsuite}"

exec "${program[@]}" --root "${EVALSUITE_ROOT:-.}" run "$@" \
    --run-id "${RUN_ID}" --shard "${SLURM_ARRAY_TASK_ID}/${SLURM_ARRAY_TASK_COUNT}" --json --no-progress
