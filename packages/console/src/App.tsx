/**
 * The shell: a header with the pages that work, the page of the address, and the rules between
 * them (without a session only logging in and signing up; with one, not those).
 */
import type { JSX } from "preact"
import { useEffect } from "preact/hooks"
import { AccountPage } from "./pages/AccountPage.js"
import { ApiKeysPage } from "./pages/keys/ApiKeysPage.js"
import { AuditPage } from "./pages/orgs/AuditPage.js"
import { DashboardPage } from "./pages/orgs/DashboardPage.js"
import { MembersPage } from "./pages/orgs/MembersPage.js"
import { OrgProvider } from "./pages/orgs/OrgContext.js"
import { OrgsPage } from "./pages/orgs/OrgsPage.js"
import { OrgSwitcher } from "./pages/orgs/OrgSwitcher.js"
import { PoliciesPage } from "./pages/orgs/PoliciesPage.js"
import { PoolPage } from "./pages/orgs/PoolPage.js"
import { SessionsPage } from "./pages/huddle/SessionsPage.js"
import { ReviewsPage } from "./pages/reviews/ReviewsPage.js"
import { FilePage } from "./pages/files/FilePage.js"
import { MemoriesPage } from "./pages/memories/MemoriesPage.js"
import { RepositoryPage } from "./pages/repository/RepositoryPage.js"
import { LoginPage } from "./pages/LoginPage.js"
import { SignupPage } from "./pages/SignupPage.js"
import { href, redirect, type Route, signedInOnly, useRoute } from "./route.js"
import { SessionProvider, useSession } from "./session.js"
import { LogoutButton } from "./LogoutButton.js"
import { Page } from "./ui/Page.js"

const pages: Record<Route, () => JSX.Element> = {
  login: LoginPage,
  signup: SignupPage,
  account: AccountPage,
  keys: ApiKeysPage,
  orgs: OrgsPage,
  org: DashboardPage,
  members: MembersPage,
  policies: PoliciesPage,
  pool: PoolPage,
  audit: AuditPage,
  sessions: SessionsPage,
  reviews: ReviewsPage,
  memories: MemoriesPage,
  repository: RepositoryPage,
  files: FilePage
}

/** Where a session (or its absence) may not be: the page to go to instead. */
const misplaced = (route: Route | "", signedIn: boolean): Route | null => {
  if (signedIn) return route === "" || !signedInOnly.includes(route) ? "account" : null
  return route === "" || signedInOnly.includes(route) ? "login" : null
}

const Shell = () => {
  const session = useSession()
  const route = useRoute()
  const signedIn = session.token !== null
  const elsewhere = route === null ? null : misplaced(route, signedIn)
  useEffect(() => {
    if (elsewhere !== null) redirect(elsewhere)
  }, [elsewhere])

  const Current = route === null ? NotFound : elsewhere === null && route !== "" ? pages[route] : null
  const link = (to: Route, label: string) => (
    <a href={href(to)} {...(route === to ? { "aria-current": "page" as const } : {})}>{label}</a>
  )
  return (
    <>
      <a class="skip" href="#main" onClick={(event) => {
        event.preventDefault()
        document.getElementById("main")?.focus()
      }}>Skip to content</a>
      <header>
        <span class="brand">Huddle</span>
        <nav aria-label="Console">
          {signedIn
            ? <>{link("account", "Account")}{link("keys", "API keys")}{link("sessions", "Conversations")}{link("reviews", "Reviews")}{link("memories", "Memories")}{link("repository", "Repositories")}{link("orgs", "Organizations")}<OrgSwitcher /><LogoutButton /></>
            : <>{link("login", "Log in")}{link("signup", "Sign up")}</>}
        </nav>
      </header>
      <main id="main" tabIndex={-1}>{Current === null ? null : <Current />}</main>
      <footer>
        <a href="/docs">API reference</a>
      </footer>
    </>
  )
}

const NotFound = () => (
  <Page title="Page not found">
    <p>There is no such page in the console. <a href="#/">Go to the start</a>.</p>
  </Page>
)

/** The organizations' context exists only with a session (it loads the profile). */
const Signed = () => useSession().token === null ? <Shell /> : <OrgProvider><Shell /></OrgProvider>

export const App = () => (
  <SessionProvider>
    <Signed />
  </SessionProvider>
)
