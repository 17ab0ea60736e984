/**
 * The forward-only migrations, shared by PGlite and PostgreSQL. A new migration is a new
 * numbered file added to the record below; applied ones are never edited.
 */
import * as Migrator from "@effect/sql/Migrator"
import { Effect } from "effect"
import accounts from "../migrations/0001_accounts.js"
import organizations from "../migrations/0002_organizations.js"
import ledgerDeletions from "../migrations/0003_ledger_deletions.js"
import huddles from "../migrations/0004_huddles.js"
import idempotency from "../migrations/0005_idempotency.js"
import changeNotifications from "../migrations/0006_change_notifications.js"

export const loader = Migrator.fromRecord({
  "0001_accounts": accounts,
  "0002_organizations": organizations,
  "0003_ledger_deletions": ledgerDeletions,
  "0004_huddles": huddles,
  "0005_idempotency": idempotency,
  "0006_change_notifications": changeNotifications
})

/** Applies what is pending; safe to run from several instances at once (a table lock serialises them). */
export const run = Migrator.make({})({ loader }).pipe(
  Effect.tap((applied) =>
    applied.length > 0
      ? Effect.logInfo("migrations applied").pipe(Effect.annotateLogs("migrations", applied.map(([id, name]) => `${id}_${name}`).join(",")))
      : Effect.void
  )
)
