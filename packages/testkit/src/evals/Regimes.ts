/**
 * The simulated panels the evaluation runs, one factor changed at a time from the first. The
 * accuracies are those of the brief (a strong, a middling and a weak model; three middling ones);
 * the rest are guesses of plausible behaviour, printed with every table.
 */
import { participant, type Regime } from "./SimulatedPanel.js"

const heterogeneous = [participant("sim-1", 0.75), participant("sim-2", 0.6), participant("sim-3", 0.55)]
/** Questions the models mostly get right: not in the brief, to show where auto mode's rule saves most. */
const confident = [participant("sim-1", 0.9), participant("sim-2", 0.85), participant("sim-3", 0.8)]
const homogeneous = [participant("sim-1", 0.6), participant("sim-2", 0.6), participant("sim-3", 0.6)]

const base = { correlation: 0, conformity: 0.2, failure: 0 } as const

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
    name: "high-conformity",
    title: "heterogeneous, independent, high conformity",
    heterogeneous: true,
    participants: heterogeneous,
    ...base,
    conformity: 0.6
  },
  {
    name: "failures",
    title: "heterogeneous, independent, 10% of calls fail",
    heterogeneous: true,
    participants: heterogeneous,
    ...base,
    failure: 0.1
  },
  { name: "easy", title: "heterogeneous, independent, easier questions", heterogeneous: true, participants: confident, ...base }
]

export const find = (name: string): Regime | undefined => regimes.find((regime) => regime.name === name)

/** The regime's parameters in one line. */
export const describe = (regime: Regime): string =>
  `${regime.name}: ${regime.title}; accuracy ${regime.participants.map((p) => `${p.model} ${p.accuracy}`).join(", ")}; ` +
  `chair discernment ${regime.participants.map((p) => p.discernment).join("/")}; correlation ${regime.correlation}; ` +
  `conformity ${regime.conformity}; failure ${regime.failure}`
