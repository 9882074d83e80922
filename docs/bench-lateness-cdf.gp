# Lateness CDF of the steady scenario (docs/benchmarks.md): relay vs the events-only and fixed-poll
# baselines. Drawn by `scripts/bench.sh --plot`, which passes datadir (the bench's steady-cdf-*.dat:
# "lateness_ms fraction_of_all_tasks" lines) and out (the PNG).
if (!exists("datadir")) datadir = "."
if (!exists("out")) out = "docs/bench-lateness-cdf.png"
set terminal pngcairo size 900,520 noenhanced
set output out
set title "steady scenario: lateness = fired_ms - due_ms (0 ms drawn at 0.5 ms)"
set xlabel "lateness (ms, log scale)"
set ylabel "fraction of tasks forwarded"
set logscale x
set xrange [0.4:100000]
set yrange [0:1.02]
set key center right
set grid
clip(x) = x < 0.5 ? 0.5 : x
plot datadir."/steady-cdf-relay.dat" using (clip($1)):2 with steps lw 2 title "relay", \
     datadir."/steady-cdf-fixed-poll.dat" using (clip($1)):2 with steps lw 2 title "fixed-poll (1 s)", \
     datadir."/steady-cdf-events-only.dat" using (clip($1)):2 with steps lw 2 title "events-only (expired events)"
