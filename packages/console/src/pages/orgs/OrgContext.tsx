/**
 * The organizations the person belongs to, and the one they are working in: chosen in the
 * header and kept for the tab in `sessionStorage` (like the session itself), so that every org
 * page reads the same choice and a reload keeps it. A member may also choose to work personally
 * (their own credits, memories and workspace): no org is then current. The profile (`GET /v1/me`) is loaded once
 * here and shared: it names the orgs with the person's role in each, their user id and their
 * personal preferences, so that an org page needs only its own data besides.
 */
import { type ComponentChildren, createContext } from "preact"
import { useContext, useMemo, useState } from "preact/hooks"
import type { Problem } from "../../api.js"
import { type Resource, useResource } from "../../ui/useApi.js"
import type { Membership, Profile } from "./wire.js"

const storageKey = "huddle.org"
/** The personal choice, as stored and as the header's select names it; an org's id starts with `org_`, so none is this. */
export const personalChoice = "personal"

const stored = (): string | null => {
  try {
    return sessionStorage.getItem(storageKey)
  } catch {
    // Storage refused: the choice lasts as long as the page.
    return null
  }
}

const store = (choice: string) => {
  try {
    sessionStorage.setItem(storageKey, choice)
  } catch {
    // As above.
  }
}

export interface Orgs {
  readonly profile: Resource<Profile>
  /**
   * The org worked in: the one chosen if the person still belongs to it, else their first;
   * none when they chose to work personally or belong to no org.
   */
  readonly current: Membership | null
  /** Whether the person chose to work personally (as opposed to belonging to no org). */
  readonly personal: boolean
  /** Works in the org of this id, or personally with `null`. */
  readonly choose: (orgId: string | null) => void
  /** Loads the profile again (after creating an org, or a change of role). */
  readonly reload: () => Promise<void>
}

const OrgContext = createContext<Orgs | null>(null)

export const OrgProvider = ({ children }: { readonly children: ComponentChildren }) => {
  const [profile, reload] = useResource((client) => client.me.me())
  const [chosen, setChosen] = useState(stored)
  const orgs = useMemo<Orgs>(() => {
    const list = profile._tag === "Loaded" ? profile.value.orgs : []
    const personal = chosen === personalChoice
    return {
      profile,
      current: personal ? null : list.find((org) => org.id === chosen) ?? list[0] ?? null,
      personal,
      choose: (orgId) => {
        const choice = orgId ?? personalChoice
        store(choice)
        setChosen(choice)
      },
      reload
    }
  }, [profile, chosen, reload])
  return <OrgContext.Provider value={orgs}>{children}</OrgContext.Provider>
}

export const useOrgs = (): Orgs => {
  const orgs = useContext(OrgContext)
  if (orgs === null) throw new Error("useOrgs outside OrgProvider")
  return orgs
}

/** The problem of the profile's load, if it failed. */
export const profileProblem = (orgs: Orgs): Problem | null => orgs.profile._tag === "Failed" ? orgs.profile.problem : null
