/**
 * One conversation: its messages, the answer being made (stages and tokens as they come), and
 * the next message. A new conversation has no session until its first answer; the address then
 * becomes the session's, without a new entry in the history.
 */
import { MessageRequest, StartRequest } from "@huddle/server/contract"
import { Either } from "effect"
import { useEffect, useRef, useState } from "preact/hooks"
import { href } from "../../route.js"
import { useSession } from "../../session.js"
import { useOrgs } from "../orgs/OrgContext.js"
import { streamTurn, type Turn } from "../../stream.js"
import { Page } from "../../ui/Page.js"
import { Loading } from "../../ui/Status.js"
import { type Resource, useApi } from "../../ui/useApi.js"
import { validate } from "../../validate.js"
import { Composer } from "./Composer.js"
import { MessageView, modeNames, type Seen } from "./MessageView.js"
import { sayRefusal } from "./refusal.js"
import { type Stage, Stages } from "./Stages.js"
import type { Mode, SessionWithMessages } from "./wire.js"

interface Live {
  readonly question: string
  readonly mode: Mode
  readonly stages: ReadonlyArray<Stage>
  readonly text: string
}

export const Conversation = ({ id }: { readonly id: string | null }) => {
  const api = useApi()
  const session = useSession()
  const orgs = useOrgs()
  const [sessionId, setSessionId] = useState(id)
  const [loaded, setLoaded] = useState<Resource<SessionWithMessages> | null>(id === null ? null : { _tag: "Loading" })
  const [seen, setSeen] = useState<ReadonlyMap<string, Seen>>(new Map())
  const [live, setLive] = useState<Live | null>(null)
  const [problem, setProblem] = useState<string | null>(null)
  const [said, setSaid] = useState("")
  const [awaiting, setAwaiting] = useState(false)
  const problemRef = useRef<HTMLParagraphElement>(null)

  /** Where a session's references are read: its workspace, or else the caller's personal one, in which such a session's answers are grounded. */
  const [groundedIn, setGroundedIn] = useState<string | null>(null)
  const load = async (sid: string) => {
    const result = await api((client) => client.huddle.session({ path: { session_id: sid } }))
    setLoaded(result._tag === "Right" ? { _tag: "Loaded", value: result.right } : { _tag: "Failed", problem: result.left })
    if (result._tag === "Right" && result.right.workspace_id === null && groundedIn === null) {
      const workspaces = await api((client) => client.workspaces.list({ urlParams: { limit: 100 } }))
      if (workspaces._tag === "Right") setGroundedIn(workspaces.right.data.find((workspace) => workspace.personal)?.id ?? null)
    }
  }
  useEffect(() => {
    if (id !== null) void load(id)
  }, [])

  const refuse = (message: string) => {
    setProblem(message)
    // Said where the focus is, so a keyboard user hears it.
    setTimeout(() => problemRef.current?.focus())
  }

  const send = async (text: string, mode: Mode): Promise<boolean> => {
    // A new conversation runs in the org chosen in the header (its policies, memories, pool and
    // the member's cap); its next messages stay in the session's.
    const checked = sessionId === null
      ? Either.map(validate(StartRequest, { input: text, mode, ...(orgs.current === null ? {} : { org_id: orgs.current.id }) }), (payload): Turn => ({ to: "new", payload }))
      : Either.map(validate(MessageRequest, { content: text, mode }), (payload): Turn => ({ to: "session", sessionId, payload }))
    if (checked._tag === "Left") {
      refuse(`Your message ${checked.left.message}.`)
      return false
    }
    if (session.token === null) return false
    setProblem(null)
    setSaid("")
    setAwaiting(false)
    setLive({ question: text, mode, stages: [], text: "" })
    const stages: Array<Stage> = []
    const result = await streamTurn(session.token, checked.right, (event) => {
      if (event.event === "stage") {
        stages.push(event.data)
        setLive((now) => now === null ? now : { ...now, stages: [...stages] })
      }
      if (event.event === "token") setLive((now) => now === null ? now : { ...now, text: now.text + event.data.text })
    })
    if (result._tag === "Left") {
      setLive(null)
      const refusal = result.left
      if (refusal.signedOut) {
        session.end({ message: "Your session has ended. Log in again." })
        return false
      }
      let balance: number | null = null
      if (refusal.code === "INSUFFICIENT_CREDITS") {
        const me = await api((client) => client.me.me())
        if (me._tag === "Right") balance = me.right.credits.balance
      }
      refuse(sayRefusal(refusal, balance))
      return false
    }
    const reply = result.right
    const answered = reply.message_id
    if (answered !== null) setSeen((now) => new Map(now).set(answered, { stages, reply }))
    if (reply.status === "awaiting_review") {
      setSaid("This message awaits review: nothing runs or is charged until it is approved.")
      setAwaiting(true)
    }
    if (sessionId === null) {
      setSessionId(reply.session_id)
      // The address becomes the session's; no hashchange, so this page stays as it is.
      history.replaceState(null, "", href("sessions", [reply.session_id]))
    }
    await load(reply.session_id)
    setLive(null)
    return true
  }

  const orgName = (orgId: string) => orgs.profile._tag === "Loaded" ? orgs.profile.value.orgs.find((org) => org.id === orgId)?.name ?? orgId : orgId
  const contextOf = (orgId: string | null) =>
    orgId === null ? "A personal conversation: your own credits and memories." : `In ${orgName(orgId)}: its policies and memories apply.`
  const title = loaded?._tag === "Loaded" ? loaded.value.title : sessionId === null ? "New conversation" : "Conversation"
  const messages = loaded?._tag === "Loaded" ? loaded.value.messages : []
  const workspaceId = loaded?._tag === "Loaded" ? loaded.value.workspace_id ?? groundedIn : null

  return (
    <Page title={title}>
      <p><a href={href("sessions")}>All conversations</a></p>
      <p class="hint">{contextOf(loaded?._tag === "Loaded" ? loaded.value.org_id : sessionId === null ? orgs.current?.id ?? null : null)}</p>
      {loaded?._tag === "Loading" ? <Loading what="the conversation" /> : null}
      {loaded?._tag === "Failed" ? <p class="problem" role="alert">{loaded.problem.message}</p> : null}
      {messages.length === 0 && live === null && loaded?._tag !== "Loading"
        ? <p class="empty">Ask something to start. In multi mode a council of models answers and reports where it disagrees.</p>
        : null}
      <ol class="messages" aria-label="Messages">
        {messages.map((message) => <MessageView key={message.id} message={message} workspaceId={workspaceId} seen={seen.get(message.id)} />)}
        {live === null ? null : (
          <>
            <li class="message from-user">
              <p class="who">You · {modeNames[live.mode]} mode</p>
              <p class="text">{live.question}</p>
            </li>
            <li class="message from-huddle live" aria-busy="true">
              <p class="who">Huddle is answering…</p>
              <Stages stages={live.stages} live />
              {live.text === "" ? null : <div class="text streamed">{live.text}</div>}
            </li>
          </>
        )}
      </ol>
      <p class="notice" role="status">{said}</p>
      {awaiting ? <p><a href={href("reviews")}>Review it</a></p> : null}
      {problem === null ? null : <p class="problem" role="alert" tabIndex={-1} ref={problemRef}>{problem}</p>}
      {loaded?._tag === "Failed" ? null : <Composer pending={live !== null} first={sessionId === null} onSend={send} />}
    </Page>
  )
}
