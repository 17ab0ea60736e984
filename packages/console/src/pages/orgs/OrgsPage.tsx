/** The person's organizations, with their role in each: open the one worked in, switch to another (and open it), or create one. */
import { OrgName } from "@huddle/domain/orgs/Organization"
import { Schema } from "effect"
import { useState } from "preact/hooks"
import type { Problem } from "../../api.js"
import { go, href } from "../../route.js"
import { Field } from "../../ui/Field.js"
import { Page } from "../../ui/Page.js"
import { Loading, ProblemNote } from "../../ui/Status.js"
import { useApi } from "../../ui/useApi.js"
import { validate } from "../../validate.js"
import { useOrgs } from "./OrgContext.js"
import "./orgs.css"

/** The payload of `POST /v1/orgs`, with the domain's rule for a name. */
const CreateOrg = Schema.Struct({ name: OrgName })

export const OrgsPage = () => {
  const orgs = useOrgs()
  const list = () => {
    if (orgs.profile._tag === "Loading") return <Loading what="your organizations" />
    if (orgs.profile._tag === "Failed") return <ProblemNote problem={orgs.profile.problem} />
    const mine = orgs.profile.value.orgs
    if (mine.length === 0) return <p class="empty">You do not belong to an organization yet. Create one below, or ask an admin to invite you.</p>
    return (
      <>
        {orgs.personal ? <p class="working-in">You are working personally: your own credits, memories and workspace.</p> : null}
        <ul class="org-list">
          {mine.map((org) => (
            <li key={org.id}>
              {orgs.current?.id === org.id
                ? <a class="org-name" href={href("org")}>{org.name}</a>
                : <span class="org-name">{org.name}</span>} <span class="role">{org.role === "admin" ? "Admin" : "Member"}</span>
              {orgs.current?.id === org.id
                ? <span class="working-in"> · working in it</span>
                : (
                  <button type="button" class="secondary" onClick={() => { orgs.choose(org.id); go("org") }} aria-label={`Work in ${org.name}`}>
                    Work in it
                  </button>
                )}
            </li>
          ))}
        </ul>
      </>
    )
  }
  return (
    <Page title="Organizations">
      <p>An organization shares a credit pool, memories and policies among its members. Its admins manage them.</p>
      {list()}
      <NewOrgForm />
    </Page>
  )
}

const NewOrgForm = () => {
  const api = useApi()
  const orgs = useOrgs()
  const [name, setName] = useState("")
  const [pending, setPending] = useState(false)
  const [problem, setProblem] = useState<Problem | null>(null)
  const onSubmit = async (event: Event) => {
    event.preventDefault()
    const payload = validate(CreateOrg, { name })
    if (payload._tag === "Left") return setProblem(payload.left)
    setPending(true)
    const created = await api((client) => client.orgs.create({ payload: payload.right }))
    setPending(false)
    if (created._tag === "Left") return setProblem(created.left)
    setProblem(null)
    setName("")
    orgs.choose(created.right.id)
    await orgs.reload()
    go("org")
  }
  return (
    <form class="card" onSubmit={onSubmit} noValidate aria-label="Create an organization">
      <h2>Create an organization</h2>
      <Field label="Name" required maxLength={100} value={name} onValue={setName} hint="You become its admin." />
      <ProblemNote problem={problem} />
      <button type="submit" disabled={pending}>{pending ? "Creating…" : "Create organization"}</button>
    </form>
  )
}
