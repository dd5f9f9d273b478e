#!/usr/bin/env bash
# 2026-12-06 (twenty-seventh session), call 90: call 61 again with main's kernels since run 48 (the Karatsuba Fq product), for the next product's instruction count (output in call90/: the
# source view as gzipped CSV, no .ncu-rep). Planned: call 59's second half,
# which ran out of its 60 s (the G1 bench makes its 2^24 points and runs
# its variant rows under ncu before the launch profiled): ncu's source
# counters of the G1 MSM's bucket accumulation (msm_accumulate_g1, the
# partition's main cost), ncu stopping the program once the launch is
# profiled (--kill yes). Binaries: .gpu/bench_kernels (main; the MSM
# kernels are main's). carry [".gpu/bench_kernels"], ~160 s plus the
# start. A measurement for the next change, nothing to predict.
set -u
. bench/runs/lib.sh 170 /tmp/sass-msm

name=msm-acc-g1
stamp "ncu source counters: $name"
CUZK_MSM_BENCH_LOGS=24 timeout "$(lim 140)" /usr/local/cuda/bin/ncu --clock-control none -k "regex:^msm_accumulate_g1\$" --launch-count 1 --kill yes \
  --section SourceCounters --section WarpStateStats --section InstructionStats --section SpeedOfLight --section Occupancy --import-source no -o "$w/$name" -f \
  ./.gpu/bench_kernels --reps 1 --filter msm_g1 > "$w/$name.log" 2>&1
echo "rc $?"; tail -3 "$w/$name.log" | cut -c1-200
timeout "$(lim 30)" /usr/local/cuda/bin/ncu --import "$w/$name.ncu-rep" --page source --csv --print-source sass > "$w/$name-sass.csv" 2> "$w/$name-sass.err"
echo "rc $? ($(wc -l < "$w/$name-sass.csv") lines)"
/usr/local/cuda/bin/ncu --import "$w/$name.ncu-rep" --page details > "$w/$name-details.txt" 2>&1
grep -E "Duration|Registers|Achieved Occupancy|Warp Cycles Per Issued|Executed Instructions  " "$w/$name-details.txt" | head -8
stamp done
tar -C "$w" -czf "$out/logs.tgz" .
