import { credits } from "../format.js"
import { Charges } from "./account/Charges.js"
import { PreferencesForm } from "./account/PreferencesForm.js"
import { Page } from "../ui/Page.js"
import { Loading, ProblemNote } from "../ui/Status.js"
import { Time } from "../ui/Time.js"
import { useResource } from "../ui/useApi.js"

export const AccountPage = () => {
  const [profile, reload] = useResource((client) => client.me.me())
  return (
    <Page title="Your account">
      {profile._tag === "Loading" ? <Loading what="your account" /> : null}
      {profile._tag === "Failed" ? <ProblemNote problem={profile.problem} /> : null}
      {profile._tag === "Loaded"
        ? (
          <dl class="card facts">
            <dt>Email</dt>
            <dd>{profile.value.user.email}</dd>
            <dt>Member since</dt>
            <dd><Time at={profile.value.user.created_at} /></dd>
            <dt>Personal credit balance</dt>
            <dd class="balance">{credits(profile.value.credits.balance)}</dd>
          </dl>
        )
        : null}
      {profile._tag === "Loaded" ? <PreferencesForm saved={profile.value.preferences} onSaved={reload} /> : null}
      <Charges />
    </Page>
  )
}
