/**
 * The web session: its token, kept in `sessionStorage` (the tab's own, gone when it closes;
 * docs/decisions/0023-web-console.md says why and what would be better), and a notice for the
 * login page (why the person is there).
 */
import { type ComponentChildren, createContext } from "preact"
import { useContext, useMemo, useState } from "preact/hooks"

const storageKey = "huddle.session"

/** Said on the login page: why the person is there, and the address to fill in. */
export interface Notice {
  readonly message: string
  readonly email?: string
}

export interface Session {
  readonly token: string | null
  readonly notice: Notice | null
  readonly begin: (token: string) => void
  /** Forgets the token (the server's session is ended, or ends by itself). */
  readonly end: (notice: Notice) => void
  readonly tell: (notice: Notice) => void
}

const SessionContext = createContext<Session | null>(null)

const stored = (): string | null => {
  try {
    return sessionStorage.getItem(storageKey)
  } catch {
    // Storage refused (a privacy setting): the session lasts as long as the page.
    return null
  }
}

const store = (token: string | null) => {
  try {
    if (token === null) sessionStorage.removeItem(storageKey)
    else sessionStorage.setItem(storageKey, token)
  } catch {
    // As above: kept in memory only.
  }
}

export const SessionProvider = ({ children }: { readonly children: ComponentChildren }) => {
  const [token, setToken] = useState(stored)
  const [notice, setNotice] = useState<Notice | null>(null)
  const session = useMemo<Session>(() => ({
    token,
    notice,
    begin: (next) => {
      store(next)
      setNotice(null)
      setToken(next)
    },
    end: (why) => {
      store(null)
      setNotice(why)
      setToken(null)
    },
    tell: setNotice
  }), [token, notice])
  return <SessionContext.Provider value={session}>{children}</SessionContext.Provider>
}

export const useSession = (): Session => {
  const session = useContext(SessionContext)
  if (session === null) throw new Error("useSession outside SessionProvider")
  return session
}
