/**
 * The forward-only migrations, shared by PGlite and PostgreSQL. A new migration is a new
 * numbered file added to the record below; applied ones are never edited.
 */
import * as Migrator from "@effect/sql/Migrator"
import { SqlClient } from "@effect/sql/SqlClient"
import { Effect } from "effect"
import accounts from "../migrations/0001_accounts.js"
import organizations from "../migrations/0002_organizations.js"
import ledgerDeletions from "../migrations/0003_ledger_deletions.js"
import huddles from "../migrations/0004_huddles.js"
import idempotency from "../migrations/0005_idempotency.js"
import changeNotifications from "../migrations/0006_change_notifications.js"
import operatorCapsInstances from "../migrations/0007_operator_caps_instances.js"
import reservationParts from "../migrations/0008_reservation_parts.js"
import consensus from "../migrations/0009_consensus.js"
import codeGrounding from "../migrations/0010_code_grounding.js"
import groundingReports from "../migrations/0011_grounding_reports.js"
import creditLeases from "../migrations/0012_credit_leases.js"
import spend from "../migrations/0013_spend.js"
import orgIntents from "../migrations/0014_org_intents.js"
import heldByAccount from "../migrations/0015_held_by_account.js"
import memberLeases from "../migrations/0016_member_leases.js"
import ledgerTokens from "../migrations/0017_ledger_tokens.js"
import passwordResets from "../migrations/0018_password_resets.js"

export const loader = Migrator.fromRecord({
  "0001_accounts": accounts,
  "0002_organizations": organizations,
  "0003_ledger_deletions": ledgerDeletions,
  "0004_huddles": huddles,
  "0005_idempotency": idempotency,
  "0006_change_notifications": changeNotifications,
  "0007_operator_caps_instances": operatorCapsInstances,
  "0008_reservation_parts": reservationParts,
  "0009_consensus": consensus,
  "0010_code_grounding": codeGrounding,
  "0011_grounding_reports": groundingReports,
  "0012_credit_leases": creditLeases,
  "0013_spend": spend,
  "0014_org_intents": orgIntents,
  "0015_held_by_account": heldByAccount,
  "0016_member_leases": memberLeases,
  "0017_ledger_tokens": ledgerTokens,
  "0018_password_resets": passwordResets
})

/** An arbitrary constant: the advisory lock that serialises creating the migrations table. */
const tableLock = 0x68756464

/**
 * The migrator creates its table unguarded (look it up, create it if missing), so two instances
 * starting at once on an empty database could both try, and one would fail to start. Creating
 * it first, under an advisory lock, removes the race; the migrator's own table lock then
 * serialises the migrations.
 */
const ensureTable = Effect.flatMap(SqlClient, (sql) =>
  sql.withTransaction(
    Effect.zipRight(
      sql`SELECT pg_advisory_xact_lock(${tableLock})`,
      sql`CREATE TABLE IF NOT EXISTS effect_sql_migrations (
            migration_id integer primary key,
            created_at timestamp with time zone not null default now(),
            name text not null
          )`
    )
  ))

/** Applies what is pending; safe to run from several instances at once. */
export const run = Effect.zipRight(ensureTable, Migrator.make({})({ loader })).pipe(
  Effect.tap((applied) =>
    applied.length > 0
      ? Effect.logInfo("migrations applied").pipe(Effect.annotateLogs("migrations", applied.map(([id, name]) => `${id}_${name}`).join(",")))
      : Effect.void
  )
)
