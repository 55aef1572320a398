import { createContext, useContext, useEffect, useMemo, useState, type ReactNode } from 'react';
import { useQueryClient } from '@tanstack/react-query';
import { onSessionEnded } from '../api/client';
import { meQueryKey, useMe } from '../api/queries/get-me';
import type { Role, SignedIn } from '../api/types';
import { roleAtLeast } from './roles';
import { sessionFlag } from './session-flag';

export const SESSION_ENDED_MESSAGE = 'Your session ended (signed out or revoked) — sign in again';

export interface Session {
  user: SignedIn | null;
  loading: boolean;
  /** Why the user is looking at the login page, when it is not their first visit. */
  endedMessage: string | null;
  clearEndedMessage: () => void;
  can: (needed: Role) => boolean;
}

/** Exported for the project scope (lib/project-scope.tsx), which refines `can` to the chosen project. */
export const SessionContext = createContext<Session | null>(null);

export function SessionProvider({ children }: { children: ReactNode }) {
  const qc = useQueryClient();
  const me = useMe();
  const [endedMessage, setEndedMessage] = useState<string | null>(null);

  useEffect(
    () =>
      onSessionEnded(() => {
        // Only a session this tab had can "end"; a first visit just shows the login page.
        if (qc.getQueryData(meQueryKey) || sessionFlag.isSet()) setEndedMessage(SESSION_ENDED_MESSAGE);
        sessionFlag.clear();
        qc.setQueryData(meQueryKey, null);
        // Drop everything the old session loaded; keep the auth queries, which may be mid-flight.
        qc.removeQueries({ predicate: (q) => q.queryKey[0] !== 'auth' });
      }),
    [qc],
  );

  const user = me.data ?? null;
  useEffect(() => {
    if (user) {
      sessionFlag.set();
    } else if (me.data === null && sessionFlag.isSet()) {
      // Loaded without a session although this tab had one: it was revoked or expired meanwhile.
      sessionFlag.clear();
      setEndedMessage(SESSION_ENDED_MESSAGE);
    }
  }, [user, me.data]);
  const value = useMemo<Session>(
    () => ({
      user,
      loading: me.isPending,
      endedMessage,
      clearEndedMessage: () => setEndedMessage(null),
      can: (needed) => roleAtLeast(user?.role, needed),
    }),
    [user, me.isPending, endedMessage],
  );
  return <SessionContext.Provider value={value}>{children}</SessionContext.Provider>;
}

export function useSession(): Session {
  const s = useContext(SessionContext);
  if (!s) throw new Error('useSession outside SessionProvider');
  return s;
}

/** For tests and stories: a fixed session without the API. */
export function StaticSessionProvider({ user, children }: { user: SignedIn | null; children: ReactNode }) {
  const value = useMemo<Session>(
    () => ({
      user,
      loading: false,
      endedMessage: null,
      clearEndedMessage: () => {},
      can: (needed) => roleAtLeast(user?.role, needed),
    }),
    [user],
  );
  return <SessionContext.Provider value={value}>{children}</SessionContext.Provider>;
}
