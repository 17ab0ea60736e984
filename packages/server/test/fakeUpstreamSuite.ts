/**
 * For the enclosing `describe`: the in-process server in front of a fake OpenAI-compatible
 * upstream serving `models`, started once before its tests and stopped after them. `onStart`
 * receives both parts (tests keep them in variables of their own).
 */
import { WithFakeUpstream } from "@huddle/testkit"
import { afterAll, beforeAll } from "vitest"

export const fakeUpstreamSuite = (
  models: Parameters<typeof WithFakeUpstream.start>[0],
  onStart: (started: WithFakeUpstream.WithFakeUpstream) => void,
  options?: Parameters<typeof WithFakeUpstream.start>[1]
) => {
  let started: WithFakeUpstream.WithFakeUpstream | undefined
  beforeAll(async () => {
    started = await WithFakeUpstream.start(models, options)
    onStart(started)
  }, 60_000)
  afterAll(() => started?.stop())
}
