"""Unit tests for benches/compare (parsing, statistics, ratios, targets,
rendering).  Run from the repository root:

    python3 -m unittest discover -s benches -p 'test_*.py'
"""

import importlib.machinery
import importlib.util
import os
import tempfile
import unittest
import xml.etree.ElementTree as ET

HERE = os.path.dirname(os.path.abspath(__file__))


def _load_compare():
    path = os.path.join(HERE, "compare")
    loader = importlib.machinery.SourceFileLoader("hympi_bench_compare", path)
    spec = importlib.util.spec_from_loader(loader.name, loader)
    mod = importlib.util.module_from_spec(spec)
    loader.exec_module(mod)
    return mod


C = _load_compare()
KiB = 1024
MiB = 1024 * 1024

LATENCY_OUT = """\
# hympi-bench Latency Test (ping-pong, one-way)
# Size          Latency (us)
0                      0.450
8                      0.440
1024                   0.783
1048576               54.367
"""

BW_OUT = """\
--------------------------------------------------------------------------
WARNING: some launcher noise 12 on stdout
--------------------------------------------------------------------------
# hympi-bench Bandwidth Test (window 64)
# Size      Bandwidth (MB/s)    Bandwidth (GB/s)
1                       7.85               0.008
1048576             20132.61              20.133
4194304             11702.71              11.703
[host:12345] 1 more process has sent help message help-mpi-btl.txt
"""

CALLGRIND_FILE = """\
# callgrind format
version: 1
creator: callgrind-3.19.0
pid: 6161
cmd:  ./mpich/self_overhead 1000 single
part: 1

desc: I1 cache:
positions: line
events: Ir
summary: 22276045

fl=(1) ???
fn=(1) 0x0000000000001140
0 3
totals: 22276045
"""

CALLGRIND_STDERR = """\
==6175== Callgrind, a call-graph generating cache profiler
==6175== Command: ./openmpi/self_overhead 1000 single
hwloc x86 backend cannot work under Valgrind, disabling.
==6175==
==6175== Events    : Ir
==6175== Collected : 44799366
==6175==
==6175== I   refs:      44,799,366
"""


class ParseOsuTest(unittest.TestCase):
    def test_latency(self):
        cols, rows = C.parse_osu(LATENCY_OUT)
        self.assertEqual(cols, ["Latency (us)"])
        self.assertEqual(sorted(rows), [0, 8, 1024, 1048576])
        self.assertAlmostEqual(rows[8][0], 0.440)
        self.assertAlmostEqual(rows[1048576][0], 54.367)

    def test_bandwidth_two_columns_and_noise(self):
        cols, rows = C.parse_osu(BW_OUT)
        self.assertEqual(cols, ["Bandwidth (MB/s)", "Bandwidth (GB/s)"])
        self.assertEqual(sorted(rows), [1, MiB, 4 * MiB])  # noise lines ignored
        self.assertEqual(rows[MiB], [20132.61, 20.133])
        gb = C.osu_column(cols, rows, "Bandwidth (GB/s)")
        self.assertAlmostEqual(gb[4 * MiB], 11.703)
        mb = C.osu_column(cols, rows, "Bandwidth (MB/s)")
        self.assertAlmostEqual(mb[1], 7.85)

    def test_unknown_column_falls_back_to_first(self):
        cols, rows = C.parse_osu(LATENCY_OUT)
        self.assertAlmostEqual(C.osu_column(cols, rows, "nope")[0], 0.45)

    def test_empty_and_garbage(self):
        self.assertEqual(C.parse_osu(""), ([], {}))
        cols, rows = C.parse_osu("# Size  Latency (us)\nhello 1 2\n12abc 3\n")
        self.assertEqual(rows, {})

    def test_original_osu_header(self):
        text = "# OSU MPI Latency Test v7.2\n# Size       Avg Latency(us)\n0                       0.21\n"
        cols, rows = C.parse_osu(text)
        self.assertEqual(cols, ["Avg Latency(us)"])
        self.assertEqual(rows, {0: [0.21]})

    def test_provided(self):
        self.assertEqual(C.parse_provided(
            "# hympi-bench self_overhead iterations 10 required multiple provided single\n"),
            "single")
        self.assertIsNone(C.parse_provided("nothing here"))


    def test_unsupported(self):
        out = "# hympi-bench Multithreaded Message Rate\n# unsupported: dup mode (MPI_Comm_dup failed)\n"
        self.assertEqual(C.parse_unsupported(out), "dup mode (MPI_Comm_dup failed)")
        self.assertEqual(C.parse_osu(out), ([], {}))
        self.assertIsNone(C.parse_unsupported(LATENCY_OUT))

    def test_threads_header_falls_back_to_metric(self):
        cols, rows = C.parse_osu("# Threads       Messages/s\n2      5442004\n")
        self.assertEqual(cols, ["Messages/s"])
        self.assertEqual(rows, {2: [5442004.0]})
        # a header that names neither sizes nor threads gives no column names
        cols, rows = C.parse_osu("# Windows       Messages/s\n2      5442004\n")
        self.assertEqual((cols, rows), ([], {2: [5442004.0]}))
        self.assertEqual(C.osu_column(cols, rows, "Messages/s"), {2: 5442004.0})


LATENCY_MT_OUT = """\
# hympi-bench Multithreaded Latency (8 B ping-pong per thread pair, MPI_COMM_WORLD, tag = thread)
# Threads       Latency (us)    Max pair (us)
2                      2.091            2.501
"""

BARRIER_OUT = """\
# hympi-bench MPI_Barrier, 4 ranks, median of 15 blocks of back-to-back calls
# Size      Time/op (us)
0                      9.711
"""


class NewBenchOutputTest(unittest.TestCase):
    def test_latency_mt_columns(self):
        cols, rows = C.parse_osu(LATENCY_MT_OUT)
        self.assertEqual(cols, ["Latency (us)", "Max pair (us)"])
        self.assertEqual(rows, {2: [2.091, 2.501]})
        self.assertEqual(C.osu_column(cols, rows, "Max pair (us)"), {2: 2.501})

    def test_barrier_single_row(self):
        cols, rows = C.parse_osu(BARRIER_OUT)
        self.assertEqual(C.osu_column(cols, rows, "Time/op (us)"), {0: 9.711})

    def _fake(self, tmp, body):
        path = os.path.join(tmp, "fake")
        with open(path, "w") as f:
            f.write("#!/bin/sh\n" + body)
        os.chmod(path, 0o755)
        return path

    def test_run_osu_variants_take_the_case_key(self):
        # A singleton stand-in for latency_mt: prints the row of the -t it was given.
        b = C.Bench("x", "x.c", "Latency (us)", "lower", "us", "x", np=0,
                    variants=C.LATENCY_MT_VARIANTS)
        with tempfile.TemporaryDirectory() as tmp:
            exe = self._fake(tmp, 'echo "# Threads  Latency (us)  Max pair (us)"\n'
                                  'for a; do t=$a; done\n'
                                  'echo "$t  1.5  2.5"\n')
            res = C.run_osu(b, "mpich", exe, [], 10)
        self.assertEqual(list(res), ["T=1", "T=2", "dup T=1", "dup T=2"])
        self.assertEqual(res["dup T=2"], {"Latency (us)": 1.5, "Max pair (us)": 2.5})

    def test_run_osu_unsupported_and_failure(self):
        b = C.Bench("x", "x.c", "Latency (us)", "lower", "us", "x", np=0)
        with tempfile.TemporaryDirectory() as tmp:
            exe = self._fake(tmp, 'echo "# unsupported: MPI_THREAD_MULTIPLE not provided"\n')
            self.assertEqual(C.run_osu(b, "mpich", exe, [], 10),
                             {None: {"unsupported": "MPI_THREAD_MULTIPLE not provided"}})
            exe = self._fake(tmp, 'echo "# Size  Time/op (us)"\nexit 4\n')
            with self.assertRaises(C.RunError):
                C.run_osu(b, "mpich", exe, [], 10)

    def test_run_osu_a_crashing_variant_keeps_the_others(self):
        b = C.Bench("x", "x.c", "Latency (us)", "lower", "us", "x", np=0,
                    variants=C.LATENCY_MT_VARIANTS)
        with tempfile.TemporaryDirectory() as tmp:
            # Dies on "-d" (the dup variants), answers the others.
            exe = self._fake(tmp, 'for a; do [ "$a" = -d ] && exit 139; t=$a; done\n'
                                  'echo "# Threads  Latency (us)"\necho "$t  1.5"\n')
            res = C.run_osu(b, "mpich", exe, [], 10)
        self.assertEqual(res["T=2"], {"Latency (us)": 1.5})
        self.assertEqual(res["dup T=1"], {"unsupported": "the run failed (exit 139)"})

    def test_run_osu_sizes(self):
        b = C.Bench("x", "x.c", "Time/op (us)", "lower", "us", "x", np=0)
        with tempfile.TemporaryDirectory() as tmp:
            exe = self._fake(tmp, 'echo "# Size  Time/op (us)"\necho "8  0.3"\n'
                                  'echo "1048576  64.5"\n')
            res = C.run_osu(b, "mpich", exe, [], 10)
        self.assertEqual(res, {8: {"Time/op (us)": 0.3}, MiB: {"Time/op (us)": 64.5}})


class CallgrindTest(unittest.TestCase):
    def test_out_file(self):
        self.assertEqual(C.parse_callgrind_total(CALLGRIND_FILE), 22276045)

    def test_totals_only(self):
        self.assertEqual(C.parse_callgrind_total("events: Ir\ntotals: 123\n"), 123)

    def test_summary_wins_over_totals(self):
        self.assertEqual(C.parse_callgrind_total("totals: 5\nsummary: 7\n"), 7)

    def test_stderr_collected(self):
        self.assertEqual(C.parse_callgrind_total(CALLGRIND_STDERR), 44799366)

    def test_stderr_irefs_with_commas(self):
        self.assertEqual(C.parse_callgrind_total("==1== I   refs:      1,234,567\n"), 1234567)

    def test_nothing(self):
        self.assertIsNone(C.parse_callgrind_total("==1== Command: foo\n"))

    def test_per_iteration(self):
        # the MPICH figures measured on the dev machine
        self.assertAlmostEqual(C.per_iteration(1000, 22276045, 11000, 34536746), 1226.0701)
        self.assertAlmostEqual(C.per_iteration(11000, 34536746, 1000, 22276045), 1226.0701)
        with self.assertRaises(ValueError):
            C.per_iteration(5, 1, 5, 2)


class StatsTest(unittest.TestCase):
    def test_odd(self):
        st = C.stats([3.0, 1.0, 2.0])
        self.assertEqual((st["median"], st["min"], st["max"], st["n"]), (2.0, 1.0, 3.0, 3))

    def test_even(self):
        self.assertEqual(C.stats([4, 1, 3, 2])["median"], 2.5)

    def test_empty(self):
        self.assertIsNone(C.stats([]))
        self.assertIsNone(C.stats([None]))

    def test_ratio(self):
        self.assertAlmostEqual(C.ratio(0.2, 0.25), 0.8)
        self.assertIsNone(C.ratio(None, 1.0))
        self.assertIsNone(C.ratio(1.0, None))
        self.assertIsNone(C.ratio(1.0, 0.0))

    def test_summarise(self):
        samples = {"latency": {
            "mpich": {0: {"Latency (us)": [0.5, 0.3, 0.4]}},
            "hympi": {0: {"Latency (us)": [0.1, 0.2]}},
        }}
        summ = C.summarise(samples, {"latency": "Latency (us)"})
        self.assertAlmostEqual(summ["latency"][0]["mpich"]["median"], 0.4)
        self.assertAlmostEqual(summ["latency"][0]["hympi"]["median"], 0.15)
        self.assertEqual(summ["latency"][0]["mpich"]["max"], 0.5)

    def test_check_failures(self):
        same = {"hympi": {64: {"Checksum": [1.5, 1.5]}}, "mpich": {64: {"Checksum": [1.5]}}}
        self.assertEqual(C.check_failures("halo3d", same, "Checksum"), [])
        diff = {"hympi": {64: {"Checksum": [1.5]}}, "mpich": {64: {"Checksum": [1.25]}},
                "openmpi": {64: {"Time/iter (us)": [3.0]}}}
        fl = C.check_failures("halo3d", diff, "Checksum")
        self.assertEqual(len(fl), 1)
        self.assertEqual(fl[0]["lib"], "hympi,mpich")
        self.assertIn("Checksum mismatch at 64", fl[0]["error"])

    def test_sort_keys(self):
        self.assertEqual(C.sort_keys([8, 0, 1024, 2]), [0, 2, 8, 1024])
        self.assertEqual(C.sort_keys(["multiple", "single"], ["single", "multiple"]),
                         ["single", "multiple"])

    def test_key_from_json(self):
        self.assertEqual(C.key_from_json("1048576"), MiB)
        self.assertEqual(C.key_from_json("single"), "single")


def _summary(**per):
    """_summary(latency={0: {'hympi': 0.2, 'openmpi': 0.3}}) -> summary."""
    out = {}
    for bench, keys in per.items():
        for key, libs in keys.items():
            for lib, v in libs.items():
                out.setdefault(bench, {}).setdefault(key, {})[lib] = {
                    "median": v, "min": v, "max": v, "n": 1}
    return out


def _target(bench, key):
    return [t for t in C.TARGETS if t["bench"] == bench and t["key"] == key][0]


class TargetTest(unittest.TestCase):
    def test_latency_vs_openmpi(self):
        t = _target("latency", 8)
        self.assertEqual(C.evaluate_target(t, _summary(latency={8: {"hympi": 0.2, "openmpi": 0.25}}))[0], "PASS")
        # exactly at the limit passes (<=)
        self.assertEqual(C.evaluate_target(t, _summary(latency={8: {"hympi": 0.2, "openmpi": 0.25}}))[1], 0.8)
        self.assertEqual(C.evaluate_target(t, _summary(latency={8: {"hympi": 0.21, "openmpi": 0.25}}))[0], "MISS")
        # MPICH does not matter for this target
        self.assertEqual(C.evaluate_target(t, _summary(latency={8: {"hympi": 0.1, "mpich": 1.0}}))[0], "n/a")

    def test_bandwidth_best_peer(self):
        t = _target("bandwidth", MiB)
        s = _summary(bandwidth={MiB: {"hympi": 30.0, "mpich": 19.0, "openmpi": 21.0}})
        status, value = C.evaluate_target(t, s)
        self.assertEqual(status, "MISS")  # 30/21 = 1.43 < 1.5 (best peer is openmpi)
        self.assertAlmostEqual(value, 30.0 / 21.0)
        s = _summary(bandwidth={MiB: {"hympi": 31.5, "mpich": 19.0, "openmpi": 21.0}})
        self.assertEqual(C.evaluate_target(t, s)[0], "PASS")
        s = _summary(bandwidth={MiB: {"hympi": 31.5}})
        self.assertEqual(C.evaluate_target(t, s), ("n/a", None))
        t4 = _target("bandwidth", 4 * MiB)
        s = _summary(bandwidth={4 * MiB: {"hympi": 13.0, "mpich": 10.0}})
        self.assertEqual(C.evaluate_target(t4, s)[0], "PASS")

    def test_instructions(self):
        ts, tm = _target("self_overhead", "single"), _target("self_overhead", "multiple")
        s = _summary(self_overhead={"single": {"hympi": 280.0}, "multiple": {"hympi": 330.0}})
        self.assertEqual(C.evaluate_target(ts, s), ("PASS", 280.0))
        status, value = C.evaluate_target(tm, s)
        self.assertEqual(status, "MISS")  # 330/280 = 1.18 > 1.15
        self.assertAlmostEqual(value, 330.0 / 280.0)
        s = _summary(self_overhead={"single": {"hympi": 301.0}, "multiple": {"hympi": 310.0}})
        self.assertEqual(C.evaluate_target(ts, s)[0], "MISS")
        self.assertEqual(C.evaluate_target(tm, s)[0], "PASS")
        s = _summary(self_overhead={"single": {"mpich": 1221.0}})
        self.assertEqual(C.evaluate_target(ts, s)[0], "n/a")


class RenderTest(unittest.TestCase):
    def setUp(self):
        self.summary = _summary(
            latency={0: {"hympi": 0.2, "mpich": 0.4, "openmpi": 0.3},
                     8: {"hympi": 0.3, "mpich": 0.4, "openmpi": 0.3}},
            bandwidth={MiB: {"hympi": 40.0, "mpich": 20.0, "openmpi": 19.0}})

    def test_rows_and_ratios(self):
        header, rows = C.table_rows("latency", self.summary, ["hympi", "mpich", "openmpi"])
        self.assertIn("hympi/openmpi", header)
        self.assertEqual(rows[0][0], "0")
        i = header.index("hympi/openmpi")
        self.assertEqual(rows[0][i], "0.67")
        self.assertEqual(rows[1][i], "1.00")
        self.assertTrue(rows[0][-1].startswith("PASS"))
        self.assertTrue(rows[1][-1].startswith("MISS"))

    def test_markdown(self):
        md = C.render_markdown(self.summary, ["hympi", "mpich", "openmpi"],
                               ["latency", "bandwidth"], 5)
        self.assertIn("| 1M | 40 [40-40] | 20 [20-20] | 19 [19-19] | 2.00 | 2.11 | PASS", md)
        self.assertIn("over 5 reps", md)
        text = C.render_text(self.summary, ["hympi", "mpich", "openmpi"], ["latency"], 5)
        self.assertIn("== latency", text)

    def test_fmt(self):
        self.assertEqual(C.fmt_size(4 * MiB), "4M")
        self.assertEqual(C.fmt_size(8192), "8K")
        self.assertEqual(C.fmt_size(12), "12")
        self.assertEqual(C.fmt_size("single"), "single")
        self.assertEqual(C.fmt_num(1226.07), "1226.1")
        self.assertEqual(C.fmt_num(0.44), "0.44")
        self.assertEqual(C.fmt_num(None), "-")
        self.assertEqual(C.fmt_ratio(0.6667), "0.67")
        self.assertEqual(C.fmt_ratio(0.000238), "0.00024")
        self.assertEqual(C.fmt_ratio(0.0), "0.00")
        self.assertEqual(C.fmt_ratio(None), "-")

    def test_svg_is_xml(self):
        svg = C.svg_plot("latency <test>", "Latency (us)", {
            "mpich": [(0, 0.4, 0.3, 0.5), (8, 0.4, 0.4, 0.4), (MiB, 55.0, 54.0, 60.0)],
            "openmpi": [(0, 0.25, 0.2, 0.3), (MiB, 54.0, 50.0, 170.0)]})
        root = ET.fromstring(svg)
        self.assertTrue(root.tag.endswith("svg"))
        self.assertEqual(len([e for e in root.iter() if e.tag.endswith("polyline")]), 2)

    def _plots(self, tmp):
        summary = _summary(reduce={8: {"hympi": 0.3, "mpich": 0.4},
                                   MiB: {"hympi": 64.0, "mpich": 110.0}})
        return C.write_plots(summary, ["hympi", "mpich"], ["reduce", "barrier"],
                             os.path.join(tmp, "r"))

    @unittest.skipUnless(C.pyplot() is not None, "matplotlib not importable")
    def test_png_with_matplotlib(self):
        with tempfile.TemporaryDirectory() as tmp:
            paths = self._plots(tmp)
            self.assertEqual([os.path.basename(p) for p in paths], ["r-reduce.svg", "r-reduce.png"])
            with open(paths[1], "rb") as f:
                self.assertEqual(f.read(8), b"\x89PNG\r\n\x1a\n")

    def test_svg_only_without_matplotlib(self):
        import sys
        from unittest import mock
        # None in sys.modules makes "import matplotlib" raise ImportError.
        with mock.patch.dict(sys.modules, {"matplotlib": None, "matplotlib.pyplot": None}):
            self.assertIsNone(C.pyplot())
            with tempfile.TemporaryDirectory() as tmp:
                paths = self._plots(tmp)
                self.assertEqual([os.path.basename(p) for p in paths], ["r-reduce.svg"])

    def test_readme_markers(self):
        text = "a\n%s\nold\n%s\nb\n" % (C.BEGIN_MARK, C.END_MARK)
        new = C.replace_between(text, "NEW TABLE")
        self.assertIn("NEW TABLE", new)
        self.assertNotIn("old", new)
        self.assertTrue(new.startswith("a\n") and new.endswith("b\n"))
        with self.assertRaises(ValueError):
            C.replace_between("no markers", "x")


class RegistryTest(unittest.TestCase):
    def test_sources_exist(self):
        for b in C.BENCHES:
            self.assertTrue(os.path.exists(os.path.join(HERE, "c", b.src)), b.src)

    def test_quick_subset(self):
        quick = [b.name for b in C.BENCHES if b.in_quick()]
        self.assertEqual(quick, ["latency", "bandwidth", "memcpy", "self_overhead",
                                 "msgrate_mt", "msgrate_self_mt", "comm_create", "reduce_local",
                                 "reduce_ceiling",
                                 "allreduce", "coll_move", "barrier", "reduce",
                                 "reduce_scatter", "latency_mt"])
        mr = C.BENCH_BY_NAME["msgrate_mt"]
        self.assertEqual([v[0] for v in mr.quick_variants], ["T=1", "T=2"])
        self.assertEqual([v[0] for v in mr.variants], ["T=1", "T=2", "dup T=1", "dup T=2"])

    def test_shared_communicator_rates(self):
        # One shared duplicate with the assertion (-s) and its baseline without (-S); full
        # runs only.
        self.assertEqual(C.BENCH_BY_NAME["msgrate_shared_mt"].full_args, ["-s"])
        self.assertEqual(C.BENCH_BY_NAME["msgrate_shared_nohint_mt"].full_args, ["-S"])
        for name in ("msgrate_shared_mt", "msgrate_shared_nohint_mt"):
            b = C.BENCH_BY_NAME[name]
            self.assertEqual((b.src, b.np), ("msgrate_self_mt.c", 0))
            self.assertFalse(b.in_quick())

    def test_coll_reduce_entries(self):
        for name, np in (("barrier", 2), ("barrier_4", 4), ("reduce", 2), ("reduce_4", 4),
                         ("reduce_scatter", 2), ("reduce_scatter_4", 4)):
            b = C.BENCH_BY_NAME[name]
            self.assertEqual((b.src, b.np), ("coll_reduce.c", np))
            for args in (b.full_args, b.quick_args or []):
                if "-s" in args:
                    sizes = [int(x) for x in args[args.index("-s") + 1].split(",")]
                    # doubles: every size a multiple of 8, from 8 B to 1 MiB per rank
                    self.assertTrue(all(n % 8 == 0 for n in sizes), sizes)
                    self.assertEqual((min(sizes), max(sizes)), (8, MiB))
        self.assertEqual(C.BENCH_BY_NAME["barrier"].full_args, ["-o", "barrier"])
        self.assertIn("reduce_scatter_block", C.BENCH_BY_NAME["reduce_scatter_4"].full_args)
        self.assertFalse(C.BENCH_BY_NAME["reduce_4"].in_quick())

    def test_latency_mt_entry(self):
        b = C.BENCH_BY_NAME["latency_mt"]
        self.assertEqual([v[0] for v in b.variants], ["T=1", "T=2", "dup T=1", "dup T=2"])
        self.assertEqual([v[0] for v in b.quick_variants], ["T=1", "T=2"])
        self.assertTrue(all("-d" in v[1] for v in b.variants[2:]))
        self.assertFalse(any("-d" in v[1] for v in b.variants[:2]))

    def test_hympi_dir(self):
        saved = C.HYMPI_DIR
        try:
            C.HYMPI_DIR = "/opt/hympi/bin"
            libs = C.make_libs()
            self.assertEqual(libs["hympi"].cc, ["/opt/hympi/bin/hympicc"])
            self.assertEqual(libs["hympi"].launch(2, ["./x"]),
                             ["/opt/hympi/bin/hympiexec", "-n", "2", "./x"])
        finally:
            C.HYMPI_DIR = saved

    def test_targets_reference_benches(self):
        for t in C.TARGETS:
            self.assertIn(t["bench"], C.BENCH_BY_NAME)

    def test_collective_targets_name_measured_cases(self):
        # A target keyed by a case the bench never runs would stay "n/a" for ever.
        moves = [v[0] for v in C.BENCH_BY_NAME["coll_move"].variants]
        rsb = C.BENCH_BY_NAME["reduce_scatter"].full_args
        rsb_sizes = [int(x) for x in rsb[rsb.index("-s") + 1].split(",")]
        for t in C.TARGETS:
            if t["bench"] == "coll_move":
                self.assertIn(t["key"], moves)
            elif t["bench"] == "reduce_scatter":
                self.assertIn(t["key"], rsb_sizes)
        keyed = {(t["bench"], t["key"]) for t in C.TARGETS}
        self.assertIn(("coll_move", "bcast 1MiB"), keyed)
        self.assertIn(("reduce_scatter", 64 * KiB), keyed)
        self.assertIn(("barrier", 0), keyed)

    def test_io_entries(self):
        group = C.BENCH_GROUPS["io"]
        self.assertEqual(group, ["io_coll3d", "io_coll3d_4", "io_strided", "io_strided_4",
                                 "io_ordered", "io_ordered_4", "io_ceiling", "io_ceiling_4"])
        for name in group:
            b = C.BENCH_BY_NAME[name]
            self.assertEqual((b.src, b.np), ("io.c", 4 if name.endswith("_4") else 2))
            self.assertFalse(b.in_quick())
            # every launch names its case
            for args in ([v[1] for v in b.variants] if b.variants else [b.full_args]):
                self.assertEqual(args[:2], ["-o", name.split("_")[1]])
        # one direction and edge per launch, so each row is one variant
        keys = [v[0] for v in C.BENCH_BY_NAME["io_coll3d"].variants]
        self.assertEqual(keys, ["write 64^3", "read 64^3", "write 128^3", "read 128^3"])
        self.assertTrue(all("-d" in v[1] and "-n" in v[1]
                            for v in C.BENCH_BY_NAME["io_coll3d"].variants))
        # the ceiling's keys are those of the coll3d case whose bytes it moves
        for v in C.BENCH_BY_NAME["io_ceiling"].variants:
            self.assertIn(v[0], keys)
        # the goal: coll3d bandwidth >= the best peer for every measured case, 2 and 4 ranks
        for bench in ("io_coll3d", "io_coll3d_4"):
            io = [t for t in C.TARGETS if t["bench"] == bench]
            self.assertEqual(sorted(t["key"] for t in io), sorted(keys))
            self.assertTrue(all(t["kind"] == "best_peer_ratio_ge" and t["limit"] == 1.0
                                for t in io))
        t = _target("io_coll3d", "write 128^3")
        s = _summary(io_coll3d={"write 128^3": {"hympi": 3000.0, "mpich": 2400.0,
                                                "openmpi": 3200.0}})
        self.assertEqual(C.evaluate_target(t, s)[0], "MISS")

    def test_io_output_parses(self):
        out = ("# hympi-bench MPI-IO coll3d: ...\n# file /tmp/hympi-io-1.dat\n"
               "# write: MPI_File_write_all, 2 ranks\n"
               "# Size      Bandwidth (MB/s)    Min (MB/s)    Max (MB/s)    With close (MB/s)\n"
               "16777216              3248.0        3184.6        3321.3               3199.8\n")
        cols, rows = C.parse_osu(out)
        self.assertEqual(cols, ["Bandwidth (MB/s)", "Min (MB/s)", "Max (MB/s)",
                                "With close (MB/s)"])
        self.assertEqual(C.osu_column(cols, rows, "Bandwidth (MB/s)"), {16 * MiB: 3248.0})
        cols, rows = C.parse_osu("# Size      Time/call (us)    Min (us)    Max (us)    "
                                 "Bandwidth (MB/s)\n1024                 19.79       13.20"
                                 "       23.18               103.5\n")
        self.assertEqual(C.osu_column(cols, rows, C.BENCH_BY_NAME["io_ordered"].metric),
                         {1024: 19.79})

    def test_collective_target_uses_fastest_peer(self):
        t = _target("coll_move", "alltoall 64KiB")
        s = _summary(coll_move={"alltoall 64KiB": {"hympi": 10.0, "mpich": 9.0,
                                                   "openmpi": 12.0}})
        self.assertEqual(C.evaluate_target(t, s)[0], "MISS")
        s = _summary(coll_move={"alltoall 64KiB": {"hympi": 9.0, "mpich": 9.0,
                                                   "openmpi": 12.0}})
        self.assertEqual(C.evaluate_target(t, s), ("PASS", 1.0))

    def test_launch(self):
        self.assertEqual(C.LIBS["mpich"].launch(2, ["./x"]), ["mpiexec.mpich", "-n", "2", "./x"])
        self.assertEqual(C.LIBS["mpich"].launch(0, ["./x", "5"]), ["./x", "5"])
        ompi = C.LIBS["openmpi"].launch(2, ["./x"])
        self.assertEqual(ompi[0], "mpiexec.openmpi")
        self.assertEqual(ompi[-3:], ["-n", "2", "./x"])

    def test_replot_roundtrip(self):
        doc = {"config": {"benches": ["latency"], "reps": 2, "quick": True},
               "machine": {"cpu_model": "x", "cpus": 2, "kernel": "k"},
               "git": {"rev": "abc", "dirty": False},
               "samples": {"latency": {"mpich": {"0": {"Latency (us)": [0.4, 0.5]},
                                                 "8": {"Latency (us)": [0.4, 0.6]}}}}}
        with tempfile.TemporaryDirectory() as tmp:
            import contextlib
            import io
            buf = io.StringIO()
            with contextlib.redirect_stdout(buf):
                C.emit(doc, os.path.join(tmp, "r"))
            self.assertTrue(os.path.exists(os.path.join(tmp, "r.md")))
            self.assertTrue(os.path.exists(os.path.join(tmp, "r-latency.svg")))
            self.assertIn("0.45 [0.4-0.5]", buf.getvalue())


if __name__ == "__main__":
    unittest.main()
