/** The huddle pages' data, as the typed client answers it. */
import type { HttpClientResponse } from "@effect/platform"
import type { Effect } from "effect"
import type { Client } from "../../api.js"
import type { Reply } from "../../stream.js"

type Answer<F extends (...args: never) => Effect.Effect<unknown, unknown>> = Exclude<
  Effect.Effect.Success<ReturnType<F>>,
  readonly [unknown, HttpClientResponse.HttpClientResponse]
>

export type SessionPage = Answer<Client["huddle"]["sessions"]>
export type Session = SessionPage["data"][number]
export type SessionWithMessages = Answer<Client["huddle"]["session"]>
export type Message = SessionWithMessages["messages"][number]
export type Mode = NonNullable<Message["mode"]>
export type Report = NonNullable<Reply["consensus"]>
export type Reference = Reply["references"][number]
export type { Reply }
