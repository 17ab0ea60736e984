import { Context, Duration } from "effect"

/** How streamed huddle answers behave: how often a heartbeat is sent while nothing else is said. */
export class SseSettings extends Context.Reference<SseSettings>()("@huddle/server/SseSettings", {
  defaultValue: (): { readonly heartbeat: Duration.Duration } => ({ heartbeat: Duration.seconds(15) })
}) {}
