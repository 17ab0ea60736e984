/**
 * The source of identifiers. Ids are opaque strings with a readable prefix (`usr_…`, `key_…`);
 * adapters decide how they are made (time-ordered, so that lists sort stably by creation).
 */
import { Context, type Effect } from "effect"

export type IdKind = "usr" | "ses" | "key" | "org" | "led" | "aud" | "mem" | "hud" | "msg" | "int" | "res" | "wsp" | "ins" | "rep" | "idx" | "pwr"

export interface Service {
  readonly next: (kind: IdKind) => Effect.Effect<string>
}

export class Ids extends Context.Tag("@huddle/domain/shared/Ids")<Ids, Service>() {}
