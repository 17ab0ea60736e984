import { LoginRequest } from "@huddle/server/contract"
import { call } from "../api.js"
import { go, href } from "../route.js"
import { useSession } from "../session.js"
import { Page } from "../ui/Page.js"
import { CredentialsForm } from "./CredentialsForm.js"

export const LoginPage = () => {
  const session = useSession()
  return (
    <Page title="Log in">
      {session.notice === null ? null : <p class="notice" role="status">{session.notice.message}</p>}
      <CredentialsForm
        schema={LoginRequest}
        action="Log in"
        pendingAction="Logging in…"
        passwordAutoComplete="current-password"
        {...(session.notice?.email === undefined ? {} : { initialEmail: session.notice.email })}
        submit={async (payload) => {
          // No session yet: a 401 here is a wrong password, not an ended session.
          const result = await call(null, (client) => client.auth.login({ payload }))
          if (result._tag === "Left") return result.left
          session.begin(result.right.token)
          go("account")
          return null
        }}
      />
      <p>New to Huddle? <a href={href("signup")}>Create an account</a></p>
    </Page>
  )
}
