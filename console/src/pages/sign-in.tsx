/** Sign-in: an API key or a pasted JWT, kept in this tab's sessionStorage and sent as the bearer token. */
import { useState } from 'preact/hooks';
import { Page } from '../components/page.tsx';
import { ErrorAlert } from '../components/status.tsx';

/** The sign-in page; `onSignIn` keeps the token and asks the API who it is. */
export function SignIn(props: { error: unknown; onSignIn(token: string): Promise<void> }) {
  const [token, setToken] = useState('');
  const [busy, setBusy] = useState(false);
  const submit = async (event: Event) => {
    event.preventDefault();
    setBusy(true);
    await props.onSignIn(token.trim());
    setBusy(false);
  };
  return (
    <main id="main" class="narrow">
      <Page title="Sign in">
        <form onSubmit={(event) => void submit(event)}>
          <label for="token">API key</label>
          <input id="token" type="password" autoComplete="off" required value={token} onInput={(e) => setToken(e.currentTarget.value)} />
          <p class="small muted">An API key of your tenant (gwk_…), or a JWT from your identity provider.</p>
          <button type="submit" disabled={busy}>
            Sign in
          </button>
        </form>
        <ErrorAlert error={props.error} />
      </Page>
    </main>
  );
}
