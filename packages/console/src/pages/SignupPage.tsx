import { SignupRequest } from "@huddle/server/contract"
import { call } from "../api.js"
import { go, href } from "../route.js"
import { useSession } from "../session.js"
import { Page } from "../ui/Page.js"
import { CredentialsForm } from "./CredentialsForm.js"

export const SignupPage = () => {
  const session = useSession()
  return (
    <Page title="Create an account">
      <p>Every new account starts with a grant of personal credits.</p>
      <CredentialsForm
        schema={SignupRequest}
        action="Create account"
        pendingAction="Creating account…"
        passwordAutoComplete="new-password"
        passwordHint="8 to 256 characters."
        submit={async (payload) => {
          const result = await call(null, (client) => client.auth.signup({ payload }))
          if (result._tag === "Left") return result.left
          session.tell({ message: "Your account is ready. Log in to continue.", email: payload.email })
          go("login")
          return null
        }}
      />
      <p>Already have an account? <a href={href("login")}>Log in</a></p>
    </Page>
  )
}
