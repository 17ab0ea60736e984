/**
 * The simulated panels the evaluation runs, one factor changed at a time from the first. The
 * default regimes are panels a team would plausibly seat on a council (a strong, a middling and a
 * weaker model; three middling ones), and one under failures as providers have them; the targets
 * are judged on them. The stress regimes (a weak panel, a very conformist one, calls failing for
 * good each independently) are shown for information. Every parameter is printed with the table,
 * and docs/evals.md says where each comes from.
 */
import { participant, type Regime } from "./SimulatedPanel.js"

/** A strong, a middling and a weaker model. */
const heterogeneous = [participant("sim-1", 0.85), participant("sim-2", 0.75), participant("sim-3", 0.65)]
/** Three models of the middling one's accuracy. */
const homogeneous = [participant("sim-1", 0.75), participant("sim-2", 0.75), participant("sim-3", 0.75)]
/** The first evaluation's panel: a weak one, whose first two proposals disagree on most questions. */
const weak = [participant("sim-1", 0.75), participant("sim-2", 0.6), participant("sim-3", 0.55)]

/**
 * What every regime shares unless it says otherwise: independent wrong answers, a little
 * conformity, no failures; questions of spread difficulty; resamples that repeat an earlier
 * answer half of the time.
 */
export const base = {
  correlation: 0,
  conformity: 0.2,
  outage: 0,
  transient: 0,
  failure: 0,
  difficulty: 1.5,
  selfConsistency: 0.5,
  stress: false
} as const

export const regimes: ReadonlyArray<Regime> = [
  { name: "het-indep", title: "heterogeneous, independent errors", heterogeneous: true, participants: heterogeneous, ...base },
  {
    name: "het-corr",
    title: "heterogeneous, correlated errors",
    heterogeneous: true,
    participants: heterogeneous,
    ...base,
    correlation: 0.5
  },
  { name: "homo-indep", title: "homogeneous, independent errors", heterogeneous: false, participants: homogeneous, ...base },
  {
    name: "conformity",
    title: "heterogeneous, moderate conformity",
    heterogeneous: true,
    participants: heterogeneous,
    ...base,
    conformity: 0.4
  },
  {
    name: "failures",
    title: "heterogeneous, seats down for the rest of a run, transient failures retried",
    heterogeneous: true,
    participants: heterogeneous,
    ...base,
    outage: 0.1,
    transient: 0.1
  },
  {
    name: "stress-weak",
    title: "STRESS: a weak panel",
    heterogeneous: true,
    participants: weak,
    ...base,
    stress: true
  },
  {
    name: "stress-failures",
    title: "STRESS: heterogeneous, 10% of calls fail for good, each independently",
    heterogeneous: true,
    participants: heterogeneous,
    ...base,
    failure: 0.1,
    stress: true
  },
  {
    name: "stress-conformity",
    title: "STRESS: heterogeneous, high conformity",
    heterogeneous: true,
    participants: heterogeneous,
    ...base,
    conformity: 0.6,
    stress: true
  }
]

export const find = (name: string): Regime | undefined => regimes.find((regime) => regime.name === name)

/** The regime's parameters in one line. */
export const describe = (regime: Regime): string =>
  `${regime.name}: ${regime.title}; accuracy ${regime.participants.map((p) => `${p.model} ${p.accuracy}`).join(", ")}; ` +
  `chair discernment ${regime.participants.map((p) => p.discernment).join("/")}; correlation ${regime.correlation}; ` +
  `conformity ${regime.conformity}; outage ${regime.outage} a seat a run; transient ${regime.transient} an attempt (retried); ` +
  `independent failure ${regime.failure} a call; difficulty spread ${regime.difficulty}; ` +
  `self-consistency ${regime.selfConsistency}`
