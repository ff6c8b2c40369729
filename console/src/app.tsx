/** The console's shell: sign-in, then the navigation the principal's permissions allow and the current page. */
import { useEffect, useMemo, useState } from 'preact/hooks';
import { api, getToken, setToken } from './api.ts';
import { Link, navigate, useRoute } from './router.tsx';
import { SessionContext, sessionOf, type Me, type Session } from './session.ts';
import { PAGES } from './pages.ts';
import { SignIn } from './pages/sign-in.tsx';
import { Page } from './components/page.tsx';
import { Loading } from './components/status.tsx';

/** The whole console. */
export function App() {
  const [session, setSession] = useState<Session | null>(null);
  const [restoring, setRestoring] = useState(() => getToken() !== null);
  const [signInError, setSignInError] = useState<unknown>(null);

  const signIn = async (token: string) => {
    setToken(token);
    try {
      setSession(sessionOf(await api<Me>('/internal/v1/me')));
      setSignInError(null);
    } catch (error) {
      setToken(null);
      setSignInError(error);
    }
  };
  // A reload of the tab keeps its token (sessionStorage): sign in with it again, quietly.
  useEffect(() => {
    const token = getToken();
    if (token !== null) void signIn(token).finally(() => setRestoring(false));
  }, []);
  const signOut = () => {
    setToken(null);
    setSession(null);
    navigate('', true);
  };

  if (restoring)
    return (
      <main>
        <Loading />
      </main>
    );
  if (session === null) return <SignIn error={signInError} onSignIn={signIn} />;
  return (
    <SessionContext.Provider value={session}>
      <Shell session={session} onSignOut={signOut} />
    </SessionContext.Provider>
  );
}

function Shell({ session, onSignOut }: { session: Session; onSignOut(): void }) {
  const route = useRoute();
  const pages = useMemo(() => PAGES.filter((page) => page.shown(session)), [session]);
  const first = pages[0];
  // /console/ (and the sign-in page's address) lead to the first page the principal may see.
  useEffect(() => {
    if (route === '' && first) navigate(first.route, true);
  }, [route, first]);
  const page = pages.find((entry) => entry.route === route);
  const Current = page?.component;
  return (
    <>
      <header class="top">
        <a class="brand" href="#main">
          Skip to content
        </a>
        <nav aria-label="Pages">
          <ul>
            {pages.map((entry) => (
              <li key={entry.route}>
                <Link to={entry.route} current={entry === page}>
                  {entry.title}
                </Link>
              </li>
            ))}
          </ul>
        </nav>
        <div class="who">
          <span>
            {session.me.role} · {session.me.tenant.id}
          </span>
          <button type="button" onClick={onSignOut}>
            Sign out
          </button>
        </div>
      </header>
      <main id="main">
        {Current ? (
          <Current key={route} />
        ) : route === '' && first ? (
          <Loading />
        ) : (
          <Page title="Not found">
            <p>{first ? 'No page at this address for your role.' : `No pages of this console are open to the role ${session.me.role}.`}</p>
          </Page>
        )}
      </main>
    </>
  );
}
