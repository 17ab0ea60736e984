import { Schema } from "effect"
import { Line } from "../shared/WireString.js"

export const ApiKeyName = Line.pipe(
  Schema.compose(Schema.Trim),
  Schema.minLength(1, { message: () => "name must not be empty" }),
  Schema.maxLength(100, { message: () => "name must be at most 100 characters" })
)

/** An API key as listed: never the secret, only what identifies it to its owner. */
export class ApiKey extends Schema.Class<ApiKey>("ApiKey")({
  id: Schema.String,
  name: Schema.String,
  /** The non-secret start of the key (`hk_` and its lookup id), to tell keys apart. */
  prefix: Schema.String,
  last_four: Schema.String,
  org_id: Schema.NullOr(Schema.String),
  created_at: Schema.DateTimeUtc,
  last_used_at: Schema.NullOr(Schema.DateTimeUtc)
}) {}

/** The answer to creating a key: the only time the secret `key` is shown. */
export class CreatedApiKey extends Schema.Class<CreatedApiKey>("CreatedApiKey")({
  id: Schema.String,
  name: Schema.String,
  key: Schema.String,
  prefix: Schema.String,
  last_four: Schema.String,
  org_id: Schema.NullOr(Schema.String),
  created_at: Schema.DateTimeUtc
}) {}
