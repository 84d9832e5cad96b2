"""The papers' figures that the reproduction report compares against, as data, each with where it comes
from (paper, section, table or figure).

A :class:`Figure` is a ratio of two of a suite's cases (``num`` over ``den``, one metric; labels without
the ``@seed=`` suffix) and the paper's *band* for it: a point figure ``v`` stated by the paper becomes
``[v / (1 + tol), v * (1 + tol)]`` (:func:`point`, ``tol`` 0.2 unless a row says otherwise), cut at 1
where the paper names a winner (``v`` more than 2 % from 1); a range the
paper states (Dally's "19-36 %") is used as given. ``show="improvement"`` prints ``100 (1 - ratio)`` %
(Dally's "positive = Dally better"). A :class:`Trend` is a sweep: the same ratio at several points,
tested by the per-seed change from the first point to the last. The verdict rules are in
:mod:`schedlab.benchmarks.harness.report.reproduction`.

``TABLE2`` / ``TABLE3`` (Dally) and ``TABLE4`` (Rubick) are the papers' tables as printed; the suites'
own ``reproduce`` rows read them from here too.
"""

from __future__ import annotations

import dataclasses
from collections.abc import Callable
from dataclasses import dataclass

from schedlab.perfmodel.params import CALIBRATIONS, DEFAULT_CALIBRATION

# ---------------------------------------------------------------------------------------------- sources
TIRESIAS = "Tiresias (NSDI'19)"
DALLY = "Dally (Sharma et al.)"
RUBICK = "Rubick (MLSys'25)"

# Dally Table 2 (8 racks, batch) / Table 3 (8 racks, Poisson), seconds: {statistic: {system: value}}
TABLE2 = {"avg_jct": {"Gandiva": 5828719, "Tiresias": 4461998, "Dally-manual": 3128566, "Dally": 2828955},
          "median_jct": {"Gandiva": 183717, "Tiresias": 2547080, "Dally-manual": 2552189, "Dally": 2401390},
          "p95_jct": {"Gandiva": 17485823, "Tiresias": 17841606, "Dally-manual": 7097646, "Dally": 5983042},
          "p99_jct": {"Gandiva": 39214710, "Tiresias": 25696135, "Dally-manual": 8868401, "Dally": 8395214}}
TABLE3 = {"avg_jct": {"Gandiva": 17371514, "Tiresias": 4329941, "Dally-manual": 4960727, "Dally": 2831880},
          "median_jct": {"Gandiva": 22722917, "Tiresias": 4212795, "Dally-manual": 2787855, "Dally": 2595529},
          "p95_jct": {"Gandiva": 71362014, "Tiresias": 15059080, "Dally-manual": 39298828, "Dally": 16469069},
          "p99_jct": {"Gandiva": 208939883, "Tiresias": 15390860, "Dally-manual": 39817762, "Dally": 16681241}}
# Rubick Table 4 (hours): (avg JCT, P99 JCT, makespan) per trace and scheduler
TABLE4: dict[str, dict[str, tuple[float, float, float]]] = {
    "base": {"rubick": (0.96, 7.1, 15.3), "sia": (2.5, 12.2, 18.8), "synergy": (3.1, 13.5, 21.5),
             "rubick-e": (2.4, 10.9, 20.2), "rubick-r": (1.6, 9.9, 19.8), "rubick-n": (3.1, 12.8, 22.0)},
    "bp": {"rubick": (0.96, 7.1, 15.3), "sia": (1.8, 9.0, 16.5), "synergy": (2.3, 10.8, 20.5)},
    "mt": {"rubick": (1.1, 11.4, 17.9), "antman": (1.75, 13.4, 19.6)},
}
#: Rubick Table 4, MT per class (hours): (avg JCT, P99 JCT)
TABLE4_MT_CLASSES = {("rubick", "guaranteed"): (0.85, 10.9), ("rubick", "best-effort"): (1.34, 11.8),
                     ("antman", "guaranteed"): (1.41, 11.7), ("antman", "best-effort"): (2.1, 14.1)}
#: Rubick Fig. 8: total normalised speedup of RoBERTa + T5 on one 4-GPU server
MICRO_PAPER = {"equal split": 0.78, "rubick": 1.44}

TOL = 0.2
#: "<= 1" (no worse): no winner named, so up to 2 % above 1 counts as equal
AT_MOST_1 = (0.0, 1.02)


def point(v: float, tol: float = TOL) -> tuple[float, float]:
    """The band of a point figure: within a factor ``1 + tol`` of it, and on the paper's side of 1 where
    the paper names a winner (``v`` more than 2 % from 1: 1.11x says "slower", never "as fast")."""
    lo, hi = v / (1 + tol), v * (1 + tol)
    if v > 1.02:
        lo = max(lo, 1.0)
    elif v < 0.98:
        hi = min(hi, 1.0)
    return (lo, hi)


def improvement(lo_pct: float, hi_pct: float) -> tuple[float, float]:
    """The ratio band of an improvement range ``lo-hi %`` (``1 - ours / base``)."""
    return (1 - hi_pct / 100, 1 - lo_pct / 100)


@dataclass(frozen=True)
class Figure:
    """``num / den`` of ``metric`` (a dotted path into a replay's metrics: ``classes.guaranteed.avg_jct``)
    against the paper's ``band`` (``claim``: the paper's words; ``band`` ``None``: an experiment's row the
    paper has no figure for, shown without a verdict)."""

    suite: str
    table: str
    quantity: str
    source: str
    num: str
    den: str
    metric: str
    band: tuple[float, float] | None
    claim: str
    show: str = "ratio"
    exact: bool = False  # deterministic cases (the artifact's schedulers): one run is the figure, no interval
    optional: bool = False  # a table of such figures is left out of the report while none has a run
    #: the trace as recorded, shown beside its resampled figure (which carries the verdict): its verdict is
    #: printed as ``as recorded: ...`` and not counted
    as_recorded: bool = False


@dataclass(frozen=True)
class Trend:
    """A sweep: ``num(x) / den(x)`` at each ``x`` of ``points`` (``pattern`` formats the label with
    ``x`` and ``policy``); the paper says it ``grows`` (True) or falls."""

    suite: str
    table: str
    quantity: str
    source: str
    pattern: str
    points: tuple[str, ...]
    num: str
    den: str
    metric: str
    grows: bool
    claim: str


# ---------------------------------------------------------------------------------------------- Tiresias
def _per_semantics(prefix: str, what: str, rows: Callable[[str, str, str], list[Figure]]) -> list[Figure]:
    """``rows(title, case prefix, semantics)`` under both cost semantics, realistic first."""
    return [f for sem in ("realistic", "tiresias") for f in rows(f"{what}, {sem} semantics", f"{prefix}/{sem}/", sem)]


def _testbed(prefix: str, what: str) -> list[Figure]:
    def rows(t: str, p: str, sem: str) -> list[Figure]:
        out = [
            Figure("tiresias", t, "avg JCT YARN-CS / 2D-LAS", f"{TIRESIAS} §5.2, Fig. 8 / Table 3", p + "yarn-cs",
                   p + "2d-las", "avg_jct", point(5.5), "5.5x"),
            Figure("tiresias", t, "median JCT YARN-CS / 2D-LAS", f"{TIRESIAS} §5.2, Table 3", p + "yarn-cs",
                   p + "2d-las", "median_jct", point(27.0), "27x"),
            Figure("tiresias", t, "makespan YARN-CS / 2D-LAS", f"{TIRESIAS} §5.2 (33,270 s vs 27,400 s)",
                   p + "yarn-cs", p + "2d-las", "makespan", point(33270 / 27400, 0.05), "1.21x"),
            Figure("tiresias", t, "avg JCT 2D-Gittins / 2D-LAS", f"{TIRESIAS} §5.2, Table 3", p + "2d-gittins",
                   p + "2d-las", "avg_jct", point(1.06, 0.05), "1.06x"),
            Figure("tiresias", t, "avg JCT SRTF / 2D-LAS", f"{TIRESIAS} §5.2, Table 3", p + "srtf", p + "2d-las",
                   "avg_jct", point(0.74), "0.74x"),
            Figure("tiresias", t, "avg JCT Gandiva-like / 2D-LAS", f"{TIRESIAS} §5.3 (Philly simulation: 2x)",
                   p + "gandiva-like", p + "2d-las", "avg_jct", point(2.0), "2x"),
        ]
        if sem == "tiresias" and prefix == "testbed":
            out.append(Figure("tiresias", t, "avg JCT Gandiva (artifact port) / 2D-LAS",
                              f"{TIRESIAS} §5.3 (Philly simulation: 2x)", p + "gandiva", p + "2d-las", "avg_jct",
                              point(2.0), "2x"))
        return out

    return _per_semantics(prefix, what, rows)


def _philly(prefix: str, what: str, *, resampled: str | None = None) -> list[Figure]:
    """The Philly comparisons on the cases ``prefix/SEM/POLICY``; with ``resampled`` (the label prefix of
    the same part with the table bootstrapped per seed), each figure on the resampled cases (the verdict)
    followed by the same on the table as recorded (``as_recorded``)."""
    def rows(t: str, p: str, sem: str) -> list[Figure]:
        figs = _philly_rows(t, p)
        if resampled is None:
            return figs
        rs = _philly_rows(t, f"{resampled}/{sem}/")
        return [f for a, b in zip(rs, figs, strict=True)
                for f in (dataclasses.replace(a, quantity=f"{a.quantity}, resampled (bootstrap per seed)"),
                          dataclasses.replace(b, quantity=f"{b.quantity}, trace as recorded", as_recorded=True))]

    return _per_semantics(prefix, what, rows)


def _philly_rows(t: str, p: str) -> list[Figure]:
    return [
        Figure("tiresias", t, "avg JCT YARN-CS / 2D-LAS", f"{TIRESIAS} §5.3, Fig. 11", p + "yarn-cs",
               p + "2d-las", "avg_jct", point(2.4), "2.4x"),
        Figure("tiresias", t, "avg JCT Best-effort / 2D-LAS", f"{TIRESIAS} §5.3, Fig. 11",
               p + "best-effort", p + "2d-las", "avg_jct", point(1.5), "1.5x"),
        Figure("tiresias", t, "avg JCT Gandiva-like / 2D-LAS", f"{TIRESIAS} §5.3, Fig. 11",
               p + "gandiva-like", p + "2d-las", "avg_jct", point(2.0), "2x"),
        Figure("tiresias", t, "median JCT YARN-CS / 2D-LAS", f"{TIRESIAS} §5.3", p + "yarn-cs",
               p + "2d-las", "median_jct", point(30.8), "30.8x"),
        Figure("tiresias", t, "avg JCT 2D-Gittins / 2D-LAS", f"{TIRESIAS} §5.3, Fig. 12", p + "2d-gittins",
               p + "2d-las", "avg_jct", AT_MOST_1, "<= 1"),
        Figure("tiresias", t, "avg JCT 2D-Gittins / SRSF", f"{TIRESIAS} §5.3, Fig. 12", p + "2d-gittins",
               p + "srsf", "avg_jct", point(1.1, 0.1), "about 1.1"),
    ]


#: the compared policies whose ``realistic`` cases the ``costs=free`` experiment repeats with free preemption
FREE_POLICIES = (("2D-LAS", "2d-las"), ("2D-Gittins", "2d-gittins"), ("SRSF", "srsf"), ("Gandiva-like", "gandiva-like"),
                 ("YARN-CS", "yarn-cs"), ("Best-effort", "best-effort"))
FREE_TITLE = "realistic semantics, free preemption (experiment: the same draws and cases, preemption cost 0)"


def _free_preemption(resampled: str, what: str) -> list[Figure]:
    """The tiresias suite's ``costs=free`` experiment on the cases ``resampled/realistic-free/POLICY``: the
    paper's ratios without the preemption cost Tiresias measured, then what that cost does to each policy
    (avg JCT with the measured cost over the same draw's with free preemption: no paper figure). A table of
    its own, shown once it has runs."""
    t = f"{what}, {FREE_TITLE}"
    p = f"{resampled}/realistic-free/"
    figs = [dataclasses.replace(f, quantity=f"{f.quantity}, free preemption", optional=True) for f in _philly_rows(t, p)]
    figs += [Figure("tiresias", t, f"avg JCT {name}, measured cost (62 s per preemption) / free preemption",
                    "ours (the paper measures the cost, §5.2, but simulates without it)",
                    f"{resampled}/realistic/{pol}", p + pol, "avg_jct", None, "—", optional=True)
             for name, pol in FREE_POLICIES]
    figs += [Figure("tiresias", t, f"preemptions {name}, measured cost / free preemption", "ours",
                    f"{resampled}/realistic/{pol}", p + pol, "preemptions", None, "—", optional=True)
             for name, pol in FREE_POLICIES[:4]]
    return figs


#: Fig. 14's variants: (case suffix, band of avg JCT over the base's, the paper's words, where)
_SENSITIVITY = (
    ("K=3", point(0.99, 0.05), "0.99", "§5.4, Fig. 14a"),
    ("K=4", point(0.99, 0.05), "0.99", "§5.4, Fig. 14a"),
    ("threshold=0.5h", (1.0, 1.1), "slightly > 1", "§5.4, Fig. 14b"),
    ("threshold=2h", point(1.0, 0.05), "about 1", "§5.4, Fig. 14b"),
    ("threshold=4h", point(1.0, 0.05), "about 1", "§5.4, Fig. 14b"),
    *[(f"knob={k}", point(1.0, 0.05), "about 1", "§5.4, Fig. 14c (PROMOTEKNOB)") for k in (1, 2, 4, 8)],
)

#: the Tiresias artifact's virtual clusters of the suite's reference / philly-vc parts
VCS = ("0e4a51", "7f04ca", "2869ce", "103959")


def _tiresias() -> list[Figure]:
    out = _testbed("testbed", "Testbed (480 jobs on tiresias-60)")
    out += _testbed("testbed-philly", "Testbed, the paper's setting (480 jobs, durations drawn from the Philly table "
                                      "by GPU count, scaled to 2D-LAS makespan 27,400 s)")
    out += _philly("philly", "Philly table (82,247 jobs, own arrivals)")
    x5 = _philly("philly-x5", "Philly table, arrivals compressed 5x (ours)", resampled="philly-x5-rs")
    split = next(i for i, f in enumerate(x5) if f.table.endswith("tiresias semantics"))
    out += x5[:split] + _free_preemption("philly-x5-rs", "Philly table, arrivals compressed 5x (ours)") + x5[split:]
    out += _philly("philly-paper-load", "Philly table, the paper's load (compression where YARN-CS queues 4,102 s)",
                   resampled="philly-paper-load-rs")
    t = "Philly per virtual cluster (the paper's setting: the artifact's VCs and cluster specs, tiresias semantics)"
    for vc in VCS:
        p = f"philly-vc/{vc}/"
        out += [
            Figure("tiresias", t, f"VC {vc}: avg JCT YARN-CS / 2D-LAS", f"{TIRESIAS} §5.3, Fig. 11 (2.4x overall)",
                   p + "yarn-cs", p + "2d-las", "avg_jct", point(2.4), "2.4x"),
            Figure("tiresias", t, f"VC {vc}: avg JCT Best-effort / 2D-LAS", f"{TIRESIAS} §5.3, Fig. 11 (1.5x overall)",
                   p + "best-effort", p + "2d-las", "avg_jct", point(1.5), "1.5x"),
            Figure("tiresias", t, f"VC {vc}: avg JCT 2D-Gittins / 2D-LAS", f"{TIRESIAS} §5.3, Fig. 12",
                   p + "2d-gittins", p + "2d-las", "avg_jct", AT_MOST_1, "<= 1"),
        ]
    t = "Philly per virtual cluster, the artifact's own schedulers (reference part; deterministic, one run)"
    for vc in VCS[:3]:
        p = f"reference/{vc}/"
        out += [
            Figure("tiresias", t, f"VC {vc}: avg JCT fifo / dlas-gpu", f"{TIRESIAS} §5.3, Fig. 11 (2.4x overall)",
                   p + "fifo", p + "dlas-gpu", "avg_jct", point(2.4), "2.4x", exact=True),
            Figure("tiresias", t, f"VC {vc}: avg JCT dlas-gpu-gittins / dlas-gpu", f"{TIRESIAS} §5.3, Fig. 12",
                   p + "dlas-gpu-gittins", p + "dlas-gpu", "avg_jct", AT_MOST_1, "<= 1", exact=True),
        ]
        if vc in ("0e4a51", "2869ce"):  # the VCs the artifact's gandiva was measured on (gandiva-reference.md)
            out.append(Figure("tiresias", t, f"VC {vc}: avg JCT gandiva / dlas-gpu",
                              f"{TIRESIAS} §5.3, Fig. 11 (2x overall)", p + "gandiva", p + "dlas-gpu", "avg_jct",
                              point(2.0), "2x", exact=True))
    t = ("Sensitivity (sensitivity-x5): avg JCT over the same policy at K = 2, 1 GPU-hour, knob off (the Philly "
         "table x5 as recorded, tiresias semantics; deterministic, one run)")
    for pol in ("2d-las", "2d-gittins"):  # the base is the loaded part's case (the same parameters)
        for var, band, claim, src in _SENSITIVITY:
            out.append(Figure("tiresias", t, f"{pol} {var}", f"{TIRESIAS} {src}", f"sensitivity-x5/{pol}/{var}",
                              f"philly-x5/tiresias/{pol}", "avg_jct", band, claim, exact=True))
    t = ("Sensitivity (sensitivity-x5-rs): avg JCT over the same policy at K = 2, 1 GPU-hour, knob off (the Philly "
         "table x5 resampled per seed, as the loaded part, tiresias semantics)")
    for pol in ("2d-las", "2d-gittins"):  # the base: the loaded part's case of the same draw
        for var, band, claim, src in _SENSITIVITY:
            out.append(Figure("tiresias", t, f"{pol} {var}", f"{TIRESIAS} {src}", f"sensitivity-x5-rs/{pol}/{var}",
                              f"philly-x5-rs/tiresias/{pol}", "avg_jct", band, claim, optional=True))
    for prefix, base_of in (("sensitivity-testbed", "K=2"), ("sensitivity-testbed-realistic", "K=2")):
        t = f"Sensitivity ({prefix}): avg JCT over the same policy at K = 2, 1 GPU-hour, knob off"
        for pol in ("2d-las", "2d-gittins"):
            for var, band, claim, src in _SENSITIVITY:
                out.append(Figure("tiresias", t, f"{pol} {var}", f"{TIRESIAS} {src}", f"{prefix}/{pol}/{var}",
                                  f"{prefix}/{pol}/{base_of}", "avg_jct", band, claim))
        for k in (1, 2, 4, 8):  # the knob with our margin 0.5, over 2D-Gittins with margin 0.5
            out.append(Figure("tiresias", t, f"2d-gittins knob={k}, margin 0.5 (ours) over margin 0.5",
                              f"{TIRESIAS} §5.4, Fig. 14c (PROMOTEKNOB)",
                              f"{prefix}/2d-gittins/margin=0.5,knob={k}", f"{prefix}/2d-gittins/margin=0.5",
                              "avg_jct", point(1.0, 0.05), "about 1"))
    return out


# ---------------------------------------------------------------------------------------------- Dally
_DALLY_SYSTEMS = {"Dally": "dally", "Dally-manual": "dally-manual", "Tiresias": "2d-las", "Gandiva": "gandiva-like"}
_DALLY_HEADLINES = (  # (what, metric, baseline, arrival, band of Dally / baseline, claim, source)
    ("average JCT", "avg_jct", "Tiresias", "batch", improvement(19, 36), "19-36 %", "§5.2.1, Fig. 7"),
    ("average JCT", "avg_jct", "Gandiva", "batch", improvement(23, 51), "23-51 %", "§5.2.1, Fig. 7"),
    ("makespan", "makespan", "Tiresias", "batch", improvement(0, 69), "up to 69 %", "§5.2.1, Fig. 6"),
    ("makespan", "makespan", "Gandiva", "batch", improvement(0, 92), "up to 92 %", "§5.2.1, Fig. 6"),
    (">P95 queueing delay", "p95_queue", "Tiresias", "batch", improvement(58, 71), "58-71 %", "§5.2.2, Fig. 8"),
    (">P99 queueing delay", "p99_queue", "Tiresias", "batch", improvement(67, 78), "67-78 %", "§5.2.2, Fig. 8"),
    (">P95 waiting (all time queued)", "p95_waiting", "Tiresias", "batch", improvement(58, 71), "58-71 %",
     "§5.2.2, Fig. 8"),
    ("communication overhead", "comm_overhead", "Tiresias", "batch", improvement(53, 83), "53-83 %",
     "§5.2.3, Fig. 12"),
    ("average JCT", "avg_jct", "Tiresias", "poisson", improvement(16, 34), "16-34 %", "§5.3, Table 3 / Fig. 13"),
)


def _dally() -> list[Figure]:
    out: list[Figure] = []
    for table, arrival, name in ((TABLE2, "batch", "Table 2"), (TABLE3, "poisson", "Table 3")):
        t = f"{name} (8 racks, {arrival}): JCT statistics over Dally's"
        for stat, per in table.items():
            for system in ("Tiresias", "Gandiva", "Dally-manual"):
                v = per[system] / per["Dally"]
                out.append(Figure("dally", t, f"{stat} {system} / Dally", f"{DALLY} §5, {name}",
                                  f"{_DALLY_SYSTEMS[system]}/dally-8/{arrival}", f"dally/dally-8/{arrival}", stat,
                                  point(v), f"{v:.2f}x"))
    for what, metric, base, arrival, band, claim, src in _DALLY_HEADLINES:
        t = f"Headline improvements of Dally over {base} ({arrival}; 1 - Dally / {base}, %)"
        for r in (2, 4, 8, 16):
            out.append(Figure("dally", t, f"{what}, {r} racks", f"{DALLY} {src}", f"dally/dally-{r}/{arrival}",
                              f"{_DALLY_SYSTEMS[base]}/dally-{r}/{arrival}", metric, band, claim, show="improvement"))
    tuned = {("batch", 8): (improvement(5, 15), "9.6 % (Table 2)"), ("poisson", 8): (improvement(33, 53), "42.9 % (Table 3)")}
    for extra, how in (("", "the paper's algorithm"), ("[+upgrade]", "with move-up of running jobs (ours)"),
                       ("[no-preemption]", "both without preemption")):
        t = f"Auto-tuner: Dally vs Dally-manual (12 h + 12 h), average JCT, {how} (1 - Dally / Dally-manual, %)"
        for arrival in ("batch", "poisson"):
            for r in (2, 4, 8, 16):
                band, claim = tuned.get((arrival, r), ((0.0, 1.0), "Dally better (Fig. 11)"))
                den_extra = extra if extra == "[no-preemption]" else ""
                out.append(Figure("dally", t, f"{r} racks, {arrival}", f"{DALLY} §5.2.4, Fig. 11 / Tables 2-3",
                                  f"dally/dally-{r}/{arrival}{extra}", f"dally-manual/dally-{r}/{arrival}{den_extra}",
                                  "avg_jct", band, claim, show="improvement"))
    return out


# ---------------------------------------------------------------------------------------------- Rubick
def _rubick() -> tuple[list[Figure], list[Trend]]:
    out: list[Figure] = []
    for cal in CALIBRATIONS:  # the default's tables first, unlabelled; the others' only once they have runs
        out += _table4(cal)
    return out, _rubick_trends()


def _table4(cal: str) -> list[Figure]:
    """Table 4's ratios under the perf-model calibration ``cal`` (the rubick suite's ``calibrations``
    option): the default's cases are ``<workload>/<policy>``, another's ``cal=<name>/<workload>/<policy>``."""
    out: list[Figure] = []
    opt = cal != DEFAULT_CALIBRATION
    pre, tag = (f"cal={cal}/", f", perf-model calibration `{cal}`") if opt else ("", "")
    for what in ("trace", "gen"):
        t = (f"Table 4 ({'the artifact trace' if what == 'trace' else 'our generator'}{tag}): average JCT over "
             "Rubick's")
        for variant, per in TABLE4.items():
            for policy, (avg, _, _) in per.items():
                if policy == "rubick":
                    continue
                v = avg / per["rubick"][0]
                out.append(Figure("rubick", t, f"{variant.upper()} {policy} / rubick", f"{RUBICK} §7.2, Table 4",
                                  f"{pre}{variant}-{what}/{policy}", f"{pre}{variant}-{what}/rubick", "avg_jct",
                                  point(v), f"{v:.2f}x", optional=opt))
        for cls in ("guaranteed", "best-effort"):
            v = TABLE4_MT_CLASSES[("antman", cls)][0] / TABLE4_MT_CLASSES[("rubick", cls)][0]
            out.append(Figure("rubick", t, f"MT {cls} antman / rubick", f"{RUBICK} §7.2, Table 4", f"{pre}mt-{what}/antman",
                              f"{pre}mt-{what}/rubick", f"classes.{cls}.avg_jct", point(v), f"{v:.2f}x",
                              optional=opt))
    return out


def _rubick_trends() -> list[Trend]:
    return [
        Trend("rubick", "Sweeps (Figs. 10, 11): average JCT Synergy-like / Rubick", "load (Fig. 10)",
              f"{RUBICK} §7.3, Fig. 10", "load={x}/{policy}", ("0.5", "1", "2", "3"), "synergy", "rubick", "avg_jct",
              True, "grows with load, up to 3.5x"),
        Trend("rubick", "Sweeps (Figs. 10, 11): average JCT Synergy-like / Rubick",
              "large-model share, large = >= 1B parameters (ours)", f"{RUBICK} §7.3, Fig. 11",
              "large={x}/{policy}", ("0.25", "0.5", "0.75"), "synergy", "rubick", "avg_jct", True, "2.6x -> 3.4x"),
        Trend("rubick", "Sweeps (Figs. 10, 11): average JCT Synergy-like / Rubick",
              "large-model share, large = LLaMA only (the paper's)", f"{RUBICK} §7.3, Fig. 11",
              "large-llama={x}/{policy}", ("0.25", "0.5", "0.75"), "synergy", "rubick", "avg_jct", True,
              "2.6x -> 3.4x"),
    ]


def figures() -> list[Figure]:
    """Every ratio figure of the three papers."""
    return _tiresias() + _dally() + _rubick()[0]


def trends() -> list[Trend]:
    return _rubick()[1]


__all__ = ["MICRO_PAPER", "TABLE2", "TABLE3", "TABLE4", "TABLE4_MT_CLASSES", "Figure", "Trend", "figures",
           "improvement", "point", "trends"]
