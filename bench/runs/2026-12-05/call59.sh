#!/usr/bin/env bash
# 2026-12-05 (eighteenth session), call 59, ran on an H100 (output in call59/: the
# source view as gzipped CSV; the .ncu-rep files were not kept, 7 MB each). Planned: where the stalls sit,
# per SASS instruction (ncu's source counters), in the NTT pass r2x3 (run
# 35: bound by the math pipe and dispatch; frlow's fewer IMADs did not
# shorten it) and in the G1 MSM's bucket accumulation (the partition's
# main cost). Binaries: .carry/tiled.tgz (.gpu, main 0c4aef9's kernels).
# carry [".carry/tiled.tgz"], ~150 s plus the start. Nothing to predict:
# a measurement for the next change. The .ncu-rep files come back too.
set -u
. bench/runs/lib.sh 170 /tmp/sass
tar -xzf .carry/tiled.tgz
/usr/local/cuda/bin/ncu --version | tail -1
prof() {  # name kernel-regex "VAR=value ..." "bench arguments"
  local name=$1 k=$2 vars=$3 args=$4
  stamp "ncu source counters: $name"
  env $vars timeout "$(lim 60)" /usr/local/cuda/bin/ncu --clock-control none -k "regex:$k" --launch-skip 1 --launch-count 1 \
    --section SourceCounters --section WarpStateStats --section InstructionStats --import-source no -o "$w/$name" -f \
    ./.gpu/bench_kernels --reps 1 $args > "$w/$name.log" 2>&1
  echo "rc $?"; tail -3 "$w/$name.log" | cut -c1-200
  timeout "$(lim 30)" /usr/local/cuda/bin/ncu --import "$w/$name.ncu-rep" --page source --csv --print-source sass > "$w/$name-sass.csv" 2> "$w/$name-sass.err"
  echo "rc $? ($(wc -l < "$w/$name-sass.csv") lines)"; head -c 600 "$w/$name-sass.csv"; echo; head -3 "$w/$name-sass.err"
  timeout "$(lim 20)" /usr/local/cuda/bin/ncu --import "$w/$name.ncu-rep" --page details > "$w/$name-details.txt" 2>&1
}
prof ntt-pass '^ntt_pass_r2x3$' "CUZK_NTT_BENCH_LOGS=24 CUZK_NTT_BENCH_PASSES=r2x3" "--filter ntt"
prof msm-acc-g1 '^msm_accumulate_g1$' "CUZK_MSM_BENCH_LOGS=24" "--filter msm_g1"
grep -E "page|print-source" <(/usr/local/cuda/bin/ncu --help) | head -6
stamp done
tar -C "$w" -czf "$out/logs.tgz" .
