/** Who signed in, as GET /internal/v1/me says, shared with every page. */
import { createContext } from 'preact';
import { useContext } from 'preact/hooks';

/** GET /internal/v1/me's answer. */
export interface Me {
  tenant: { id: string; name: string; operator: boolean };
  role: string;
  key_id: string | null;
  auth: 'api_key' | 'jwt';
  permissions: string[];
}

/** The signed-in principal and a test of its permissions. */
export interface Session {
  me: Me;
  can(permission: string): boolean;
}

/** Makes the session of a /me answer. */
export function sessionOf(me: Me): Session {
  const held = new Set(me.permissions);
  return { me, can: (permission) => held.has(permission) };
}

/** Carries the session to every page below the shell. */
export const SessionContext = createContext<Session | null>(null);

/** The session; pages render only after sign-in, inside its provider. */
export function useSession(): Session {
  const session = useContext(SessionContext);
  if (session === null) throw new Error('useSession outside a signed-in console');
  return session;
}
