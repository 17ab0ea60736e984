/**
 * Vitest global setup: migrates one PGlite once per run and hands its data directory to every
 * test worker as a template (loading it is several times faster than migrating anew).
 */
import { mkdtempSync, rmSync, writeFileSync } from "node:fs"
import { tmpdir } from "node:os"
import { join } from "node:path"
import { buildTemplate, templateEnvVar } from "./TestDatabase.js"

export default async function setup() {
  const dir = mkdtempSync(join(tmpdir(), "huddle-template-"))
  const file = join(dir, "template.tar")
  writeFileSync(file, Buffer.from(await (await buildTemplate()).arrayBuffer()))
  process.env[templateEnvVar] = file
  return () => rmSync(dir, { recursive: true, force: true })
}
