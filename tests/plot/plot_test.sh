#!/bin/bash
# plot_test.sh DUCT_PLOT HOST_FILE DEVICE_FILE: duct-plot on recorded duct-bench output.
#   1. a host run (allreduce at 2 and 4 ranks, bcast, barrier) and a device
#      run make valid PNGs whose size is the documented layout for the
#      number of collectives and runs in the input (panels of 550 x 400
#      pixels, three to a row, a head of 70 pixels and 16 per wrapped line,
#      12-pixel foot lines: at least one per run, plus one), counted here
#      from the input's header lines; the panels it reports are the input's
#      collectives, in order;
#   2. standard input, --time and --bound work;
#   3. a file cut in the middle of a row, a file with headers and no rows,
#      and a file that is not duct-bench output fail (exit 2) with a
#      message that names the file and says what is wrong.
# Skipped (77) when /usr/bin/python3 has no matplotlib.
set -uo pipefail
plot=$1 host=$2 device=$3
tmp=$(mktemp -d)
trap 'rm -rf "$tmp"' EXIT
fail() { echo "FAIL: $*"; exit 1; }
/usr/bin/python3 -c "import matplotlib" 2>/dev/null || { echo "no matplotlib for /usr/bin/python3: skipped"; exit 77; }

# Width and height of a PNG from its IHDR chunk (bytes 16-23, big-endian).
png_size() { od -An -tu1 -j16 -N8 "$1" | awk '{ printf "%d %d\n", (($1*256+$2)*256+$3)*256+$4, (($5*256+$6)*256+$7)*256+$8 }'; }
expect_layout() {  # FILE PNG
  local colls runs n cols rows
  colls=$(sed -n 's/^# duct-bench [^:]*: \([a-z_]*\),.*/\1/p' "$1" | awk '!seen[$0]++' | paste -sd, | sed 's/,/, /g')
  runs=$(grep -c '^# duct-bench ' "$1")
  n=$(echo "$colls" | tr ',' '\n' | wc -l)
  cols=$(( n < 3 ? n : 3 )) rows=$(( (n + 2) / 3 ))
  [ "$(head -c 8 "$2" | od -An -tx1 | tr -d ' \n')" = 89504e470d0a1a0a ] || fail "$2 is not a PNG"
  read -r w h <<<"$(png_size "$2")"
  [ "$w" -eq $((cols * 550)) ] || fail "$2: width $w, expected $((cols * 550)) ($cols panels across)"
  local least=$((rows * 400 + 70 + 12 * (runs + 1)))
  [ "$h" -ge "$least" ] && [ "$h" -le $((least + 400)) ] ||
    fail "$2: height $h, expected $least ($rows rows, $runs runs) plus lines of wrapped text"
  echo "$2: ${w}x$h, $n panel(s): $colls"
  echo "$colls"
}

for f in "$host" "$device"; do
  png=$tmp/$(basename "$f").png
  out=$("$plot" "$f" -o "$png") || fail "duct-plot $f: $out"
  echo "$out"
  layout=$(expect_layout "$f" "$png") || { echo "$layout"; exit 1; }
  echo "$layout" | head -1
  want=$(echo "$layout" | tail -1)
  grep -qF "panel(s): $want)" <<<"$out" || fail "duct-plot drew panels other than the input's collectives ($want)"
done

cat "$host" | "$plot" -o "$tmp/stdin.png" >/dev/null || fail "standard input"
"$plot" "$host" --time -o "$tmp/time.png" >/dev/null || fail "--time"
"$plot" "$host" "$device" --bound 10 -o "$tmp/both.png" >/dev/null ||
  fail "two files with --bound"
echo "standard input, --time, two files with --bound: PNGs written"

bad() {  # NAME EXPECTED-TEXT: duct-plot must fail on $tmp/NAME with exit 2 and say EXPECTED-TEXT
  local msg rc
  msg=$("$plot" "$tmp/$1" -o "$tmp/$1.png" 2>&1)
  rc=$?
  [ $rc -eq 2 ] || fail "$1: exit $rc, expected 2 ($msg)"
  grep -qF "$tmp/$1" <<<"$msg" || fail "$1: the message does not name the file: $msg"
  grep -qiF "$2" <<<"$msg" || fail "$1: the message does not say '$2': $msg"
  [ ! -e "$tmp/$1.png" ] || fail "$1: a PNG was written for bad input"
  echo "$1: $msg"
}
# Cut in the middle of the 10th result row.
awk '/^ +[0-9]/ && ++n == 10 { printf "%s", substr($0, 1, 40); exit } { print }' "$host" >"$tmp/truncated.txt"
bad truncated.txt "truncated"
grep '^#' "$host" >"$tmp/headers-only.txt"
bad headers-only.txt "no result rows"
printf 'hello\n1 2 3\n' >"$tmp/not-bench.txt"
bad not-bench.txt "no '# duct-bench"
echo PASS
