# run8c.sh: the third device call of this session (2026-11-26), after run8.sh/run8b.sh:
# the emulated cluster with the GPU (OMPI_MCA_plm no longer isolated), then
# duct-tune --quick at 4 and 2 ranks (16 and 8 ran in run8.sh).
RUN=run8c source "$(dirname "${BASH_SOURCE[0]}")/gpu-lib.sh"
step 100 "row 7 / issue 25: emulated cluster with the GPU" && CT=75 CB=60 CF=64 cluster
for np in 4 2; do step 60 "issue 27: duct-tune --quick, $np ranks, host buffers" && tune $np 60 45; done
echo "total $(( $(date +%s) - t0 )) s"
