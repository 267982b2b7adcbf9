cd /work/main
N=$1; S=$2; shift 2
for w in "$@"; do
  W=$w SEG=${SEG:-2} DUCT_SIM_REDUCE_BW=0 DUCT_SIM_SHARED_SCRATCH=1M timeout 900 /usr/bin/time -f "W=$w wall %e s" mpi_launch_scripts/duct-sim run -s ompi -N $N -ppn 8 -- -d host -n 1 -w 0 -I 0 -c 0 -m 0 -C allreduce -b $S -e $S > /tmp/sw-$N-$S-$w-${SEG:-2}.txt 2>&1
  echo "N=$N S=$S W=$w SEG=${SEG:-2} $(grep -v '^#' /tmp/sw-$N-$S-$w-${SEG:-2}.txt | awk '{print $6}' | head -1) $(tail -1 /tmp/sw-$N-$S-$w-${SEG:-2}.txt)"
done
