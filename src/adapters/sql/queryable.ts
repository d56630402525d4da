/**
 * @module adapters/sql/queryable
 * The one driver-neutral seam between the shared Postgres dialect and the two drivers
 * (`pg`, PGlite), plus the scope wrapper every data query runs under.
 *
 * Isolation (article Pattern 4, DESIGN.md "Storage"): every data query runs inside a
 * transaction that first does `SET LOCAL ROLE <role>` and, for an agent principal,
 * `set_config('app.principal', id, true)`. Both are transaction-local, so a pooled connection
 * never carries one caller's principal into the next caller's transaction. Drivers call
 * {@link enterScope} from their connection wrapper; query modules never set scope themselves.
 */

/** Minimal query surface both drivers provide inside a transaction. */
export interface Queryable {
  /** One parameterised statement. Rows are driver-typed; map them with `./codec.js`. */
  query(sql: string, params?: readonly unknown[]): Promise<{ rows: Record<string, unknown>[] }>;
  /** Several statements without parameters (DDL, migrations). */
  exec(sql: string): Promise<void>;
}

/**
 * Who a transaction acts for.
 * - `system`: deployment tooling (log sequencing, checkpoints, registry admin, audit). Runs as
 *   role `memwarden_system`, whose policies see and write every row, OPERATOR rows included.
 * - `principal`: an agent/user principal. Runs as role `memwarden_app` with `app.principal`
 *   set; row-level security confines it to its own rows plus global OPERATOR rows.
 */
export type Scope =
  { readonly kind: 'system' } | { readonly kind: 'principal'; readonly id: string };

/** The non-superuser, NOBYPASSRLS role every agent-principal query runs as. */
export const APP_ROLE = 'memwarden_app';
/** The non-superuser role deployment tooling runs as (full-access RLS policies, not BYPASSRLS). */
export const SYSTEM_ROLE = 'memwarden_system';

/** The system scope singleton. */
export const SYSTEM_SCOPE: Scope = { kind: 'system' };

/** A principal scope; the id is validated by the caller (any non-empty string). */
export function principalScope(id: string): Scope {
  return { kind: 'principal', id };
}

/**
 * Enter `scope` for the rest of the current transaction. Must be the first statement after
 * BEGIN. Both the role (one of the two constant names) and the principal id travel as bound
 * parameters.
 */
export async function enterScope(q: Queryable, scope: Scope): Promise<void> {
  await q.query(ENTER_SCOPE_SQL, scopeParams(scope));
}

/**
 * {@link enterScope}'s one statement: `set_config('role', …, true)` is `SET LOCAL ROLE` (same
 * membership check), and a system transaction clears the principal explicitly so it is never
 * mistaken for one. Every read and write starts with it, so one round trip instead of two
 * matters (PGlite). Exported for a driver that sends it its own way (PGlite's raw protocol).
 */
export const ENTER_SCOPE_SQL =
  "SELECT set_config('role', $1::text, true), set_config('app.principal', $2::text, true)";

/** The role and principal id {@link ENTER_SCOPE_SQL} binds for `scope`. */
export function scopeParams(scope: Scope): [string, string] {
  return [
    scope.kind === 'system' ? SYSTEM_ROLE : APP_ROLE,
    scope.kind === 'system' ? '' : scope.id,
  ];
}

/** The principal id recorded as row owner for writes in `scope` (null for the system). */
export function scopeOwner(scope: Scope): string | null {
  return scope.kind === 'principal' ? scope.id : null;
}
