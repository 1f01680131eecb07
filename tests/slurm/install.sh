#!/usr/bin/env bash
# The one-node SLURM cluster of the SLURM tests needs Debian's slurmctld, slurmd, the client
# commands and munge (22.05 on bookworm). `make test` runs this: as root with apt it installs
# whatever is missing; anyone else is told what to install (docs/sweeps.md, "Testing against
# a real SLURM cluster"). The daemons are started by the tests (tests/slurm_cluster.py), not
# here: the packages' own services stay off.
set -euo pipefail
NEEDED=(slurmctld slurmd sbatch scontrol sinfo squeue munged munge)
missing=()
for cmd in "${NEEDED[@]}"; do
  command -v "$cmd" >/dev/null 2>&1 || [ -x "/usr/sbin/$cmd" ] || missing+=("$cmd")
done
[ ${#missing[@]} -eq 0 ] && exit 0
if [ "$(id -u)" = 0 ] && command -v apt-get >/dev/null 2>&1; then
  echo "SLURM test cluster: installing slurmctld slurmd slurm-client munge (missing: ${missing[*]})"
  export DEBIAN_FRONTEND=noninteractive
  apt-get update -qq
  apt-get install -y -qq --no-install-recommends slurmctld slurmd slurm-client munge >/dev/null
else
  echo "SLURM test cluster: ${missing[*]} missing and this is not root with apt; the SLURM" \
    "tests will skip (in CI they fail). Install slurmctld, slurmd, slurm-client and munge" \
    "(docs/sweeps.md)." >&2
fi
