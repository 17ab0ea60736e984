import { Context, Duration } from "effect"
import type * as Sse from "./Sse.js"

/** How streamed answers behave (the heartbeat interval). */
export class SseSettings extends Context.Reference<SseSettings>()("@huddle/server/SseSettings", {
  defaultValue: (): Sse.Options => ({ heartbeat: Duration.seconds(15) })
}) {}
