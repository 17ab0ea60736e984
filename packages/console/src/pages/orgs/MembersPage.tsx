/**
 * An organization's members and pending invitations (admins): invite, change a role, cap what a
 * member may take from the pool, remove. One call loads the first page (each member comes with
 * their cap and what they have spent); further pages on request, so a large org opens as fast
 * as a small one.
 */
import { useRef, useState } from "preact/hooks"
import type { Problem } from "../../api.js"
import { ProblemNote } from "../../ui/Status.js"
import { Loading } from "../../ui/Status.js"
import { useApi, useResource } from "../../ui/useApi.js"
import { InviteForm } from "./InviteForm.js"
import { MemberTable } from "./MemberTable.js"
import { OrgFrame } from "./OrgFrame.js"
import type { Member, MemberPage, Membership, Profile } from "./wire.js"

export const pageSize = 50

export const MembersPage = () => (
  <OrgFrame title="Members" adminOnly>
    {(org, profile) => <Members org={org} profile={profile} />}
  </OrgFrame>
)

const Members = ({ org, profile }: { readonly org: Membership; readonly profile: Profile }) => {
  const api = useApi()
  const [first, reload] = useResource((client) => client.orgAdmin.members({ path: { orgId: org.id }, urlParams: { limit: pageSize } }))
  const [more, setMore] = useState<ReadonlyArray<MemberPage>>([])
  /** Members changed or removed since their page loaded, by email. */
  const [changed, setChanged] = useState<ReadonlyMap<string, Member | null>>(new Map())
  const [said, setSaid] = useState("")
  const [moreProblem, setMoreProblem] = useState<Problem | null>(null)
  const listHeading = useRef<HTMLHeadingElement>(null)

  const change = (email: string, member: Member | null, message: string) => {
    setChanged(new Map(changed).set(email, member))
    setSaid(message)
  }
  const onInvited = (member: Member) => {
    setMore([])
    setChanged(new Map())
    setSaid(`Invited ${member.email}. They join when they sign up or log in with that address.`)
    void reload()
  }

  const body = () => {
    if (first._tag === "Loading") return <Loading what="the members" />
    if (first._tag === "Failed") return <ProblemNote problem={first.problem} />
    const pages = [first.value, ...more]
    const members = pages.flatMap((page) => page.data)
      .map((member) => changed.has(member.email) ? changed.get(member.email)! : member)
      .filter((member): member is Member => member !== null)
    const cursor = pages.at(-1)?.next_cursor ?? null
    const loadMore = async () => {
      if (cursor === null) return
      const next = await api((client) => client.orgAdmin.members({ path: { orgId: org.id }, urlParams: { limit: pageSize, cursor } }))
      if (next._tag === "Left") return setMoreProblem(next.left)
      setMoreProblem(null)
      setMore([...more, next.right])
    }
    return (
      <>
        <h2 tabIndex={-1} ref={listHeading}>Members and invitations</h2>
        <p class="notice" role="status">{said}</p>
        {members.length === 0
          ? <p class="empty">No members yet.</p>
          : (
            <MemberTable
              orgId={org.id}
              members={members}
              you={profile.user.id}
              onChanged={(member, message) => change(member.email, member, message)}
              onRemoved={(member) => {
                change(member.email, null, `Removed ${member.email}.`)
                listHeading.current?.focus()
              }}
            />
          )}
        <ProblemNote problem={moreProblem} />
        {cursor === null ? null : <button type="button" class="secondary" onClick={loadMore}>Show more members</button>}
      </>
    )
  }

  return (
    <>
      <InviteForm orgId={org.id} onInvited={onInvited} />
      {body()}
    </>
  )
}
