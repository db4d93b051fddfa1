// The signed-in key's name and role, for screens that show controls by role.
import { createContext } from 'preact';
import { useContext } from 'preact/hooks';
import type { Role, Session } from './types.js';

export const SessionContext = createContext<Session | null>(null);

const RANK: Record<Role, number> = { viewer: 0, operator: 1, admin: 2 };

/** Whether the signed-in role reaches `role` (the server checks again; this only hides controls). */
export function useCan(role: Role): boolean {
  const session = useContext(SessionContext);
  return session !== null && RANK[session.role] >= RANK[role];
}
