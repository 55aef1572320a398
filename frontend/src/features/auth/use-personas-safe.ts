import type { Persona } from '../../api/types';
import { usePersonas } from './api/list-personas';

/** Personas are optional: any failure to list them just means no persona buttons. */
export function useListPersonasSafe(): Persona[] {
  const q = usePersonas();
  return Array.isArray(q.data) ? q.data : [];
}
