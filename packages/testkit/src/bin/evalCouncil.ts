/**
 * `npm run eval:council`: the council against majority vote, single answers and auto mode, on
 * generated questions with known answers, answered by simulated participants (seeded, offline)
 * or, with `--real`, by the deployment's configured models. See docs/evals.md.
 *
 *   node packages/testkit/dist/bin/evalCouncil.js [--questions N] [--seed S] [--regime NAME]
 *     [--self-consistency P] [--difficulty SPREAD] [--outage P] [--transient P] [--real [--tier T]]
 */
import { ModelTier } from "@huddle/domain/settings/Preferences"
import { Effect, Schema } from "effect"
import * as Backends from "../evals/Backends.js"
import { type Backend, evaluate } from "../evals/CouncilEval.js"
import * as Questions from "../evals/Questions.js"
import * as Regimes from "../evals/Regimes.js"
import * as Report from "../evals/Report.js"

const usage = "usage: eval:council [--questions N] [--seed S] [--regime NAME] [--self-consistency P] [--difficulty SPREAD]\n" +
  "                    [--outage P] [--transient P]\n" +
  "                    [--real [--tier economy|standard|premium]]\n" +
  `regimes: ${Regimes.regimes.map((regime) => regime.name).join(", ")}`

const refuse = (message: string): never => {
  console.error(`${message}\n${usage}`)
  process.exit(2)
}

const parse = (argv: ReadonlyArray<string>) => {
  const options = {
    questions: 1000,
    seed: 1,
    regime: undefined as string | undefined,
    selfConsistency: undefined as number | undefined,
    difficulty: undefined as number | undefined,
    outage: undefined as number | undefined,
    transient: undefined as number | undefined,
    real: false,
    tier: "economy" as ModelTier
  }
  for (let i = 0; i < argv.length; i++) {
    const flag = argv[i]!
    const value = () => argv[++i] ?? refuse(`${flag} needs a value`)
    const count = (name: string) => {
      const n = Number(value())
      return Number.isSafeInteger(n) && n > 0 ? n : refuse(`${name} must be a positive integer`)
    }
    const probability = (name: string) => {
      const p = Number(value())
      return p >= 0 && p <= 1 ? p : refuse(`${name} must be between 0 and 1`)
    }
    switch (flag) {
      case "--questions":
        options.questions = count("--questions")
        break
      case "--seed":
        options.seed = count("--seed")
        break
      case "--regime":
        options.regime = value()
        break
      case "--self-consistency":
        options.selfConsistency = probability("--self-consistency")
        break
      case "--difficulty": {
        const spread = Number(value())
        options.difficulty = spread >= 0 && spread <= 10 ? spread : refuse("--difficulty must be between 0 and 10")
        break
      }
      case "--outage":
        options.outage = probability("--outage")
        break
      case "--transient":
        options.transient = probability("--transient")
        break
      case "--real":
        options.real = true
        break
      case "--tier": {
        const tier = value()
        options.tier = Schema.is(ModelTier)(tier) ? tier : refuse(`unknown tier ${tier}`)
        break
      }
      case "--help":
      case "-h":
        console.log(usage)
        process.exit(0)
        break
      default:
        refuse(`unknown option ${flag}`)
    }
  }
  return options
}

const options = parse(process.argv.slice(2))
const questions = Questions.generate(options.seed, options.questions)

const runs: ReadonlyArray<
  { readonly name: string; readonly heterogeneous: boolean; readonly stress: boolean; readonly backend: Backend; readonly about: string }
> =
  options.real
    ? Backends.realConfigured(process.env)
      ? [{
        name: `real-${options.tier}`,
        heterogeneous: true,
        stress: false,
        backend: Backends.real(options.tier),
        about: `real-${options.tier}: the configured providers' ${options.tier} models (default catalog or HUDDLE_CATALOG); real calls, real cost`
      }]
      : refuse("--real needs OPENAI_API_KEY or ANTHROPIC_API_KEY: no provider key is set, so no real model can answer (nothing was called)")
    : (options.regime === undefined
      ? Regimes.regimes
      : [Regimes.find(options.regime) ?? refuse(`unknown regime ${options.regime}`)]).map((named) => {
        const regime = {
          ...named,
          ...(options.selfConsistency === undefined ? {} : { selfConsistency: options.selfConsistency }),
          ...(options.difficulty === undefined ? {} : { difficulty: options.difficulty }),
          ...(options.outage === undefined ? {} : { outage: options.outage }),
          ...(options.transient === undefined ? {} : { transient: options.transient })
        }
        return {
          name: regime.name,
          heterogeneous: regime.heterogeneous,
          stress: regime.stress,
          backend: Backends.simulated(options.seed, regime, questions),
          about: Regimes.describe(regime)
        }
      })

const main = async () => {
  const started = Date.now()
  console.log(`Council evaluation: ${options.questions} questions a regime, seed ${options.seed}`)
  console.log("Every question runs through the real council (multi mode, then auto mode) over MeteredCall with in-memory credits.")
  console.log(options.real ? "Answers: real models." : "Answers: simulated participants (see docs/evals.md).")
  for (const run of runs) console.log(`  ${run.about}`)
  console.log("")
  const rows: Array<Report.Row> = []
  for (const run of runs) {
    const t0 = Date.now()
    const summary = await Effect.runPromise(
      evaluate(options.seed, run.backend, questions, (done) => {
        if (process.stderr.isTTY && done % 25 === 0) process.stderr.write(`\r${run.name}: ${done}/${questions.length}`)
      })
    )
    if (process.stderr.isTTY) process.stderr.write("\r\x1b[K")
    console.log(`${run.name}: ${((Date.now() - t0) / 1000).toFixed(1)} s`)
    rows.push({ name: run.name, heterogeneous: run.heterogeneous, stress: run.stress, summary })
  }
  console.log("")
  console.log("Accuracy (share of questions answered correctly; a failed run counts as wrong; * a stress regime)")
  console.log(Report.accuracyTable(rows))
  console.log("")
  const curves = Report.selfConsistencyTable(rows)
  if (curves !== undefined) {
    console.log("Self-consistency: seat 1 alone, a plurality of its first k answers to each question")
    console.log(curves)
    console.log("")
  }
  console.log("Auto mode (credits per question, as charged)")
  console.log(Report.autoTable(rows))
  for (const { name, summary } of rows) {
    if (summary.council.attempts > summary.council.calls) {
      console.log(
        `${name}: ${summary.council.calls.toFixed(2)} calls a multi run, tried ${summary.council.attempts.toFixed(2)} times ` +
          "(the router's retries of transient failures; a failed attempt consumed nothing)"
      )
    }
    if (summary.council.firstError !== undefined) console.log(`${name}: the first failed run: ${summary.council.firstError}`)
  }
  console.log("")
  const targets = Report.targets(rows)
  console.log(Report.targetLines(targets))
  console.log("")
  const judged = targets.filter((t) => !t.informational)
  const passed = judged.filter((t) => t.pass).length
  const info = targets.filter((t) => t.informational)
  console.log(
    `${passed === judged.length ? "ALL TARGETS MET" : "TARGETS MISSED"}: ${passed} of ${judged.length} passed in the default regimes` +
      (info.length === 0 ? "" : `; stress regimes, for information: ${info.filter((t) => t.pass).length} of ${info.length}`) +
      ` (${((Date.now() - started) / 1000).toFixed(1)} s)`
  )
}

main().catch((error: unknown) => {
  console.error(error)
  process.exitCode = 1
})
