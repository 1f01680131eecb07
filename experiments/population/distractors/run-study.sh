#!/usr/bin/env bash
# The distractor dose-response study, one command (issue 39; docs/population.md "On-topic
# distractors", docs/sweeps.md "The distractor study on SLURM"):
#
#   experiments/population/distractors/run-study.sh SWEEP_DIR [OVERRIDE...]
#
# Jobs land in SWEEP_DIR/baseline/s<seed>_d0 (no distractor: dose 0 of every kind) and
# SWEEP_DIR/distracted/s<seed>_<kind>_d<dose>. OVERRIDEs are Hydra overrides given to every
# job (e.g. hydra.launcher.partition=cpu). The environment chooses the rest:
#   LAUNCHER  place_joblib (default: two worker processes here) or place_slurm (one job array
#             per sweep; configs/hydra/launcher/place_slurm.yaml)
#   SEEDS     generator seeds as a Hydra sweep (default range(0,30))
#   KINDS     distractor kinds (default: all seven)
#   DOSES     distractor doses above 0 (default 4,16,64)
#   PLACE     the command that runs place (default: place)
#
# Answer-free (experiment=state): no model server. Run the same command again to resume:
# complete jobs are skipped, interrupted ones resume from their journals. Then
#   place compare --dose-response SWEEP_DIR/baseline SWEEP_DIR/distracted --out OUT
set -euo pipefail
dir=${1:?usage: run-study.sh SWEEP_DIR [OVERRIDE...]}
shift
launcher=${LAUNCHER:-place_joblib}
seeds=${SEEDS:-range(0,30)}
kinds=${KINDS:-entity,topic,hypothetical,reported,negated,restate,neutral}
doses=${DOSES:-4,16,64}
read -r -a place <<<"${PLACE:-place}"
common=(experiment=state trajectory=generated design=population plots=false progress=false
  "hydra/launcher=$launcher" "$@")
# The seed is the first swept key, so jobs run seed by seed: an interrupted study holds whole
# seeds (every kind and dose), which `place compare` can already summarise.
"${place[@]}" run -m "trajectory.seed=$seeds" "${common[@]}" \
  "hydra.sweep.dir=$dir/baseline" 'hydra.sweep.subdir=s${trajectory.seed}_d0'
"${place[@]}" run -m "trajectory.seed=$seeds" "trajectory.distract=$kinds" \
  "trajectory.dose=$doses" "${common[@]}" "hydra.sweep.dir=$dir/distracted" \
  'hydra.sweep.subdir=s${trajectory.seed}_${trajectory.distract}_d${trajectory.dose}'
