/** A row of a credit account's ledger as it is shown: to the operator for any account, to a user for their own. */
import { Schema } from "effect"

export class LedgerEntry extends Schema.Class<LedgerEntry>("LedgerEntry")({
  id: Schema.String,
  /** Positive: credits in (grant, settle and release give back); negative: a reservation taking them. */
  delta: Schema.Int,
  kind: Schema.Literal("grant", "reserve", "settle", "release"),
  reservation_id: Schema.NullOr(Schema.String),
  reason: Schema.String,
  /** The user who acted (the payer of a reservation); null for the operator and the service. */
  actor_id: Schema.NullOr(Schema.String),
  balance_after: Schema.Int,
  created_at: Schema.DateTimeUtc,
  input_tokens: Schema.NullOr(Schema.Int).annotations({
    description: "On a settle row of a model call: the prompt tokens it was charged for, those read from or written to a provider's cache included (as the model reported them, else estimated); otherwise null"
  }),
  output_tokens: Schema.NullOr(Schema.Int).annotations({
    description: "On a settle row of a model call: the output tokens it was charged for; otherwise null"
  })
}) {}
