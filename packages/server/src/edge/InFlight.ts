/**
 * The requests whose handler is still running, whether or not their client is still there.
 * Shutdown waits for them, not for the sockets: a request whose client hung up has no connection
 * left, but its fiber is still settling or releasing its credits and closing its intent, and the
 * database must stay open until it has (the platform runs each handler in a fiber of its own and
 * does not track them).
 */
import type * as HttpApp from "@effect/platform/HttpApp"
import { Duration, Effect, Option, Scope } from "effect"

export interface InFlight {
  /** `app`, counted from its start until its request's scope has closed (its last finalizer). */
  readonly track: (app: HttpApp.Default) => HttpApp.Default
  /** How many handlers are running now. */
  readonly count: () => number
  /** Succeeds with true once none is running, or with false when `within` passes first. */
  readonly drained: (within: Duration.DurationInput) => Effect.Effect<boolean>
}

export const make = (): InFlight => {
  let running = 0
  // Open while none is running.
  const idle = Effect.unsafeMakeLatch(true)
  const done = Effect.sync(() => {
    if (--running === 0) idle.unsafeOpen()
  })
  return {
    // Counted until the request's scope closes, after the middleware has returned: its
    // finalizers (an idempotency key's release, say) may still write. Added first, run last.
    track: (app) =>
      Effect.flatMap(Effect.serviceOption(Scope.Scope), (scope) =>
        Effect.suspend(() => {
          if (running++ === 0) idle.unsafeClose()
          return Option.isSome(scope) ? Effect.zipRight(Scope.addFinalizer(scope.value, done), app) : Effect.ensuring(app, done)
        })),
    count: () => running,
    // Interruptible even where it is called from (a finalizer, which is not): otherwise the
    // timeout would wait for the latch it is meant to give up on.
    drained: (within) => Effect.timeoutTo(Effect.interruptible(idle.await), { duration: within, onSuccess: () => true, onTimeout: () => false })
  }
}
