/**
 * Vitest global setup: migrates one PGlite once per run and hands its data directory to every
 * test worker as a template (loading it is several times faster than migrating anew).
 *
 * The run also gets a temporary directory of its own (`TMPDIR` for the workers and the servers
 * they start), so that what the suites leave behind is theirs and not another run's: at the end,
 * anything left in it fails the run, and it is removed.
 */
import { mkdtempSync, readdirSync, rmSync, writeFileSync } from "node:fs"
import { tmpdir } from "node:os"
import { dirname, join } from "node:path"
import { buildTemplate, templateEnvVar } from "./TestDatabase.js"

const runDirVar = "HUDDLE_TEST_RUN_DIR"
const setupsVar = "HUDDLE_TEST_RUN_SETUPS"
const outerVar = "HUDDLE_TEST_OUTER_TMPDIR"

/**
 * Vitest runs this once per project, one after the other, in one process: the first makes the
 * run's directory and the template, the last checks and removes them.
 */
export default async function setup() {
  if (process.env[runDirVar] !== undefined) {
    process.env[setupsVar] = String(Number(process.env[setupsVar]) + 1)
    return leave
  }
  const runDir = mkdtempSync(join(tmpdir(), "huddle-test-run-"))
  Object.assign(process.env, { [runDirVar]: runDir, [setupsVar]: "1", [outerVar]: process.env.TMPDIR ?? "", TMPDIR: runDir })
  const templateDir = mkdtempSync(join(runDir, "huddle-template-"))
  const file = join(templateDir, "template.tar")
  writeFileSync(file, Buffer.from(await (await buildTemplate()).arrayBuffer()))
  process.env[templateEnvVar] = file
  return leave
}

const leave = () => {
  const setups = Number(process.env[setupsVar]) - 1
  process.env[setupsVar] = String(setups)
  if (setups > 0) return
  const runDir = process.env[runDirVar]!
  const template = process.env[templateEnvVar]
  const leftovers = readdirSync(runDir).filter((name) => template === undefined || join(runDir, name) !== dirname(template))
  rmSync(runDir, { recursive: true, force: true })
  const outer = process.env[outerVar]
  if (outer) process.env.TMPDIR = outer
  else delete process.env.TMPDIR
  for (const name of [runDirVar, setupsVar, outerVar, templateEnvVar]) delete process.env[name]
  if (leftovers.length > 0) {
    throw new Error(`The test suites left ${leftovers.length} temporary entries behind (removed now): ${leftovers.sort().join(", ")}`)
  }
}
