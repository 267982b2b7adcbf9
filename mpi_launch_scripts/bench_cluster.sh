#!/usr/bin/env bash
# bench_cluster.sh: duct beside the MPI library on an emulated cluster of
# network namespaces (netns-cluster.sh), host buffers, where the network and
# not the cores is the bottleneck. Needs root.
#
# For each collective, duct-bench runs twice on the same cluster: once with
# the MPI library's defaults and once with Open MPI's hierarchical coll/han
# (--mca coll_han_priority 100, its documented alternative across nodes);
# each run times duct and the MPI library on the same buffers, taking turns
# (-R ROUNDS blocks, medians). Prints per size: duct's time, the MPI
# library's time with each setting, the ratio of the better MPI time to
# duct's time in that same run (above 1: duct faster), duct's algbw and, where
# there is one, the share of the link bound (N nodes of L links of b
# bytes/s, P ranks per node: allreduce algbw <= L b N / (2 (N-1)); bcast,
# reduce <= L b; allgather, reduce_scatter <= L b N / (N-1); alltoall
# <= L b N / (P (N-1)), since each of a node's P ranks sends (N-1)/N of its
# own data off the node, so the node's L links carry P (N-1)/N of the
# message: L b on 2 nodes x 2 ranks with 2 rails, 0.75 L b on 3 x 2). Ends
# with the slowest ratio.
#
# --raw DIR: also keep each duct-bench run's whole output for duct-plot
# (apps/duct-plot.py), as DIR/<collective>.txt: the run with the MPI
# library's defaults, then the coll/han run marked "# reference: Open MPI
# coll/han", so duct-plot draws both MPI lines beside duct's.
#
# Environment: NODES (2), PPN ranks per node (2), RAILS links per node (2),
# RATE per link (1gbit; "" unshaped), COLLS (allreduce bcast reduce
# allgather reduce_scatter alltoall gather scatter), SIZES (duct-bench size
# options, default "-b 8 -e 16M -f 8") and MAXSIZE (one more row, default
# 64M), ROUNDS (3), HAN (1: also run coll/han).
set -euo pipefail
here=$(cd "$(dirname "$0")" && pwd)
source "$here/common.sh"
raw=""
if [ "${1:-}" = --raw ]; then raw=${2:?--raw needs a directory}; shift 2; mkdir -p "$raw"; raw=$(cd "$raw" && pwd); fi
duct_setup >/dev/null
NODES=${NODES:-2} PPN=${PPN:-2} RAILS=${RAILS:-2} RATE=${RATE-1gbit} ROUNDS=${ROUNDS:-3} HAN=${HAN:-1}
COLLS=${COLLS:-"allreduce bcast reduce allgather reduce_scatter alltoall gather scatter"}
SIZES=${SIZES:-"-b 8 -e 16M -f 8"} MAXSIZE=${MAXSIZE:-64M}
export NETNS_CLUSTER_ID=${NETNS_CLUSTER_ID:-$((200 + $$ % 50))}
export OMPI_MCA_op=^avx
cluster=$here/netns-cluster.sh
trap '"$cluster" down' EXIT
"$cluster" --rails "$RAILS" --rate "$RATE" up "$NODES" >/dev/null
read -r -a args <<<"$("$cluster" args)"
np=$((NODES * PPN))

# Link rate in GB/s (10^9 bytes/s) from tc's notation.
gbps=$(awk -v r="${RATE:-0}" 'BEGIN {
  n = r + 0; u = tolower(substr(r, length(n "") + 1));
  m = u ~ /^g/ ? 1e9 : u ~ /^m/ ? 1e6 : u ~ /^k/ ? 1e3 : 1;
  if (u ~ /bit/) m /= 8; else if (u ~ /bps/) m *= 1;
  print n * m / 1e9 }')

echo "# $(date -u +%Y-%m-%dT%H:%MZ) $(uname -n): $NODES nodes x $PPN ranks, $RAILS rail(s) per node at ${RATE:-unshaped}" \
     "($gbps GB/s per link), host buffers, duct-bench $SIZES (and $MAXSIZE) -n 0 -w 2 -R $ROUNDS"
echo "# mpirun ${args[*]} -np $np -npernode $PPN $DUCTBUILD/apps/duct-bench -d host -C <coll> ..."
printf '%-15s %9s %11s %11s %11s %7s %8s %6s %6s\n' collective size "duct(us)" "MPI(us)" "han(us)" ratio \
       "algbw" "bound" "#wrong"
tmp=$(mktemp -d)
trap 'rm -rf "$tmp"; "$cluster" down' EXIT
for c in $COLLS; do
  [ -z "$raw" ] || : >"$raw/$c.txt"
  settings=(default)
  [ "$HAN" = 1 ] && settings+=(han)
  for s in "${settings[@]}"; do
    extra=()
    [ "$s" = han ] && extra=(--mca coll_han_priority 100)
    : >"$tmp/$c.$s"
    for sizes in "$SIZES" "-b $MAXSIZE -e $MAXSIZE"; do
      [ -n "$raw" ] && [ "$s" = han ] && echo "# reference: Open MPI coll/han" >>"$raw/$c.txt"
      # shellcheck disable=SC2086
      timeout 1800 mpirun "${args[@]}" "${extra[@]}" -np "$np" -npernode "$PPN" "$DUCTBUILD/apps/duct-bench" -d host \
        -C "$c" $sizes -n 0 -w 2 -R "$ROUNDS" 2>"$tmp/$c.$s.err" |
        { if [ -n "$raw" ]; then tee -a "$raw/$c.txt"; else cat; fi; } | grep -v '^#' >>"$tmp/$c.$s" ||
        { echo "duct-bench $c ($s) failed:"; tail -5 "$tmp/$c.$s.err"; }
    done
  done
  [ -f "$tmp/$c.han" ] || cp "$tmp/$c.default" "$tmp/$c.han"
  # Columns of duct-bench: 1 size, 6 duct time, 7 duct algbw, 9 #wrong, 10 in-place time, 14 MPI time.
  awk -v c="$c" -v b="$gbps" -v N="$NODES" -v L="$RAILS" -v P="$PPN" -v han="$HAN" '
    FNR == 1 { f++ }
    NF >= 18 {
      if (f == 1) { size[FNR] = $1; d1[FNR] = $6; a1[FNR] = $7; w[FNR] = $9; m1[FNR] = $14; n = FNR }
      else { d2[FNR] = $6; a2[FNR] = $7; w[FNR] += $9; m2[FNR] = $14 }
    }
    END {
      bound = 0
      if (b > 0) {
        if (c == "allreduce") bound = L * b * N / (2 * (N - 1))
        else if (c == "bcast" || c == "reduce") bound = L * b
        else if (c == "alltoall") bound = L * b * N / (P * (N - 1))
        else if (c == "allgather" || c == "reduce_scatter") bound = L * b * N / (N - 1)
      }
      for (i = 1; i <= n; i++) {
        # duct against the better MPI setting, both from that setting'"'"'s run.
        d = d1[i]; a = a1[i]; m = m1[i]
        if (han == 1 && m2[i] < m1[i]) { d = d2[i]; a = a2[i]; m = m2[i] }
        hs = "-"; if (han == 1) hs = sprintf("%.1f", m2[i])
        bs = "-"; if (bound > 0) bs = sprintf("%.0f%%", 100 * a / bound)
        printf "%-15s %9s %11.1f %11.1f %11s %7.2f %8.3f %6s %6d\n", c, size[i], d, m1[i], hs, m / d, a, bs, w[i]
      }
    }' "$tmp/$c.default" "$tmp/$c.han"
done | tee "$tmp/all"
# (rows whose blocks round to 0 bytes left out: 8 B over 4 ranks)
awk '$6 > 0 && $2 > 0 {print $6, $1, $2}' "$tmp/all" | sort -g | head -n 1 | awk '{printf "# slowest ratio %s (%s, %s bytes)\n", $1, $2, $3}'
