/** Builds the PGlite template (see sql/PgliteTemplate.ts); run by `npm install` after the build. */
import { Effect, Logger, LogLevel } from "effect"
import * as PgliteTemplate from "../sql/PgliteTemplate.js"

PgliteTemplate.build().pipe(
  Logger.withMinimumLogLevel(LogLevel.Warning),
  Effect.runPromise
).then(
  (bytes) => console.log(`PGlite template ready (${Math.round(bytes / 1024)} KiB): first starts skip initdb and migrations`),
  (error) => {
    // Only a slower first start without it: never fail the install for this.
    console.error(`PGlite template not built: ${String(error)}`)
  }
)
