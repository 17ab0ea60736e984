/**
 * The pipeline's stages as they pass: each stage's start and end, and in a council each
 * participant as it finishes a round. A log region, so a screen reader hears each line once.
 */
import type { HuddleEvent } from "../../stream.js"

export type Stage = Extract<HuddleEvent, { readonly event: "stage" }>["data"]

const names: Record<Stage["stage"], string> = {
  context: "Context",
  retrieval: "Retrieval from the repository",
  planning: "Planning",
  review: "Review",
  execution: "Execution",
  proposals: "Council round 1: proposals",
  critique: "Council round 2: critique",
  synthesis: "Council round 3: synthesis",
  ratification: "Council round 4: ratification",
  completion: "Completion"
}

const text = (value: unknown): string | null => typeof value === "string" ? value : typeof value === "number" ? String(value) : null

/** One stage event in words. */
export const describe = (stage: Stage): string => {
  const name = names[stage.stage]
  switch (stage.status) {
    case "started":
      return `${name}: started`
    case "completed":
      return `${name}: done`
    case "skipped":
      return `${name}: skipped`
    case "progress": {
      const seat = text(stage["seat"])
      const model = text(stage["model"])
      const outcome = text(stage["outcome"]) ?? "finished"
      const reason = text(stage["reason"])
      const who = seat === null ? model ?? "A participant" : `Seat ${seat}${model === null ? "" : ` (${model})`}`
      return `${name}: ${who} ${outcome}${reason === null ? "" : `: ${reason}`}`
    }
  }
}

export const Stages = ({ stages, live }: { readonly stages: ReadonlyArray<Stage>; readonly live: boolean }) => {
  const list = (
    <ol class="stages" aria-label="Pipeline stages">
      {stages.map((stage, i) => <li key={i} class={`stage-${stage.status}`}>{describe(stage)}</li>)}
    </ol>
  )
  return live ? <div role="log">{list}</div> : list
}
