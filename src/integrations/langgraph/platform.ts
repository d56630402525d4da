/**
 * @module integrations/langgraph/platform
 * `MemwardenPlatformStore`: one LangGraph store for a deployed graph with many users (issue 24,
 * ADR 0058). The first label of every namespace names the end user (LangGraph's own convention:
 * `[userId, "memories"]`); each user is its own principal, resolved through the platform with
 * `Memory.actFor(platform, { userId })` — provisioned on first use, isolated like any other —
 * and each operation runs in a {@link MemwardenStore} of that user. A listing without a user
 * (`listNamespaces` without a one-label prefix) is refused: no call reads two users' items.
 */
import {
  BaseStore,
  type ListNamespacesOperation,
  type Operation,
  type OperationResults,
} from '@langchain/langgraph-checkpoint';
import type { MemoryApi } from '../../memory/api.js';
import { MemwardenStore, type MemwardenStoreOptions } from './store.js';

export interface MemwardenPlatformStoreOptions extends Omit<MemwardenStoreOptions, 'principal'> {
  /** The platform principal (it holds a platform key over HTTP; in-process, its id). */
  readonly platform: string;
  readonly memory: MemoryApi;
}

/** The user an operation is for: the first namespace label (or prefix label). */
function userOf(op: Operation): string {
  let ns: readonly string[] | undefined;
  if ('namespacePrefix' in op) ns = op.namespacePrefix;
  else if ('namespace' in op) ns = op.namespace;
  else {
    const prefix = (op as ListNamespacesOperation).matchConditions?.find(
      (c) => c.matchType === 'prefix',
    )?.path;
    ns = prefix?.[0] === '*' ? undefined : prefix;
  }
  const user = ns?.[0];
  if (typeof user !== 'string' || user.length === 0) {
    throw new TypeError(
      'MemwardenPlatformStore: the first namespace label names the user (e.g. ["alice", "memories"])',
    );
  }
  return user;
}

export class MemwardenPlatformStore extends BaseStore {
  private readonly stores = new Map<string, Promise<MemwardenStore>>();

  constructor(private readonly opts: MemwardenPlatformStoreOptions) {
    super();
    if (typeof opts.platform !== 'string' || opts.platform.length === 0)
      throw new TypeError('MemwardenPlatformStore needs a platform principal');
  }

  /** The store of one end user (its principal resolved once). */
  storeFor(userId: string): Promise<MemwardenStore> {
    let s = this.stores.get(userId);
    if (s === undefined) {
      const { platform: _p, ...rest } = this.opts;
      s = this.opts.memory
        .actFor(this.opts.platform, { userId })
        .then((principal) => new MemwardenStore({ ...rest, principal }));
      s.catch(() => this.stores.delete(userId));
      this.stores.set(userId, s);
    }
    return s;
  }

  /** Each operation in its user's store; consecutive operations of one user run as one batch. */
  async batch<Op extends Operation[]>(operations: Op): Promise<OperationResults<Op>> {
    const users = operations.map(userOf); // every operation names its user, or none runs
    const out: unknown[] = [];
    for (let i = 0; i < operations.length;) {
      let j = i + 1;
      while (j < operations.length && users[j] === users[i]) j++;
      const store = await this.storeFor(users[i]!);
      out.push(...(await store.batch(operations.slice(i, j))));
      i = j;
    }
    return out as OperationResults<Op>;
  }
}
