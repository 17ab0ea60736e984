/** One message of a conversation: the person's, or an answer with how it was made and what it cost. */
import { credits } from "../../format.js"
import { ConsensusReport } from "./ConsensusReport.js"
import { References } from "./References.js"
import { type Stage, Stages } from "./Stages.js"
import type { Message, Reply } from "./wire.js"

/** What the page saw of an answer while it streamed: its stages, and the reply's own fields. */
export interface Seen {
  readonly stages: ReadonlyArray<Stage>
  readonly reply: Reply
}

interface Props {
  readonly message: Message
  readonly workspaceId: string | null
  readonly seen?: Seen | undefined
}

export const modeNames = { single: "Single", multi: "Multi", auto: "Auto" } as const

export const MessageView = ({ message, workspaceId, seen }: Props) => {
  if (message.role === "user") {
    return (
      <li class="message from-user">
        <p class="who">You{message.mode === null ? "" : ` · ${modeNames[message.mode]} mode`}</p>
        <p class="text">{message.content}</p>
      </li>
    )
  }
  return (
    <li class="message from-huddle">
      <p class="who">
        Huddle{message.mode === null ? "" : ` · answered in ${modeNames[message.mode]} mode`}
        {seen?.reply.mode_reason === undefined ? "" : ` (auto: ${seen.reply.mode_reason})`}
        {" · "}<span class="charged">{credits(message.credits_charged)} charged</span>
      </p>
      <div class="text">{message.content}</div>
      {message.models.length === 0 ? null : <p class="hint">Models: {message.models.join(", ")}</p>}
      <References references={message.references} workspaceId={workspaceId} />
      {message.consensus === undefined ? null : <ConsensusReport report={message.consensus} />}
      {seen === undefined || seen.stages.length === 0 ? null : (
        <details>
          <summary>How this answer was made</summary>
          <Stages stages={seen.stages} live={false} />
        </details>
      )}
    </li>
  )
}
