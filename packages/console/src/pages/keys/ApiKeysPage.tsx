/**
 * API keys: create one (its secret shown once), list them, revoke one. The first page of keys
 * and the person's organizations (to bind a key to one, and to name it in the list) load
 * together; further pages on request.
 */
import { Effect } from "effect"
import { useRef, useState } from "preact/hooks"
import type { Problem } from "../../api.js"
import { Page } from "../../ui/Page.js"
import { Loading, ProblemNote } from "../../ui/Status.js"
import { useApi, useResource } from "../../ui/useApi.js"
import { KeyTable } from "./KeyTable.js"
import { NewKeyForm } from "./NewKeyForm.js"
import { NewKeySecret } from "./NewKeySecret.js"
import type { ApiKey, CreatedKey, KeyPage } from "./wire.js"

const pageSize = 50

export const ApiKeysPage = () => {
  const api = useApi()
  const [first, reload] = useResource((client) =>
    Effect.all({
      keys: client.apiKeys.list({ urlParams: { limit: pageSize } }),
      profile: client.me.me()
    }, { concurrency: "unbounded" })
  )
  /** Pages after the first, and keys revoked since it loaded. */
  const [more, setMore] = useState<ReadonlyArray<KeyPage>>([])
  const [revoked, setRevoked] = useState<ReadonlySet<string>>(new Set())
  const [created, setCreated] = useState<CreatedKey | null>(null)
  const [said, setSaid] = useState("")
  const [moreProblem, setMoreProblem] = useState<Problem | null>(null)
  const listHeading = useRef<HTMLHeadingElement>(null)

  const onCreated = (key: CreatedKey) => {
    setCreated(key)
    setMore([])
    void reload()
  }
  const onRevoked = (key: ApiKey) => {
    setRevoked(new Set(revoked).add(key.id))
    setSaid(`Revoked “${key.name}”. Programs using it are now refused.`)
    listHeading.current?.focus()
  }

  const body = () => {
    if (first._tag === "Loading") return <Loading what="your keys" />
    if (first._tag === "Failed") return <ProblemNote problem={first.problem} />
    const pages = [first.value.keys, ...more]
    const keys = pages.flatMap((page) => page.data).filter((key) => !revoked.has(key.id))
    const cursor = pages.at(-1)?.next_cursor ?? null
    const loadMore = async () => {
      if (cursor === null) return
      const next = await api((client) => client.apiKeys.list({ urlParams: { limit: pageSize, cursor } }))
      if (next._tag === "Left") return setMoreProblem(next.left)
      setMoreProblem(null)
      setMore([...more, next.right])
    }
    const orgs = first.value.profile.orgs
    return (
      <>
        {created === null ? null : <NewKeySecret created={created} onDone={() => setCreated(null)} />}
        <NewKeyForm orgs={orgs} onCreated={onCreated} />
        <h2 tabIndex={-1} ref={listHeading}>Your keys</h2>
        <p class="notice" role="status">{said}</p>
        {keys.length === 0
          ? <p class="empty">No API keys yet. Create one above to call Huddle from a program.</p>
          : <KeyTable keys={keys} orgs={orgs} onRevoked={onRevoked} />}
        <ProblemNote problem={moreProblem} />
        {cursor === null ? null : <button type="button" class="secondary" onClick={loadMore}>Show more keys</button>}
      </>
    )
  }

  return (
    <Page title="API keys">
      <p>
        Programs call Huddle with an API key, sent as <code>Authorization: Bearer hk_…</code>. A key acts for you,
        or in one of your organizations.
      </p>
      {body()}
    </Page>
  )
}
