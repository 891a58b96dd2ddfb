/**
 * One engine process's identity cache by token hash, saving a round trip per call on the hot paths. A
 * principal's change is NOTIFYed in its transaction and every engine drops its identities on hearing it;
 * a listener reconnect (events may be missed) drops the whole cache.
 */
import type { Actor, EngineContext, EngineEvent } from '../common/index.js';
import type { refused } from './views.js';

/** An identity that acts, or why not (views.ts `refused`). */
type Identity = { actor: Actor; refusal: null } | ReturnType<typeof refused>;

const CACHE_MS = 5_000;
const MAX_ENTRIES = 10_000;

class IdentityCache {
  private readonly byHash = new Map<string, { actor: Actor; until: number }>();

  /** The cached actor of `key`, else what `load` answers: an actor is cached, a refusal is not. */
  async resolve(key: string, load: () => Promise<Identity>): Promise<Identity> {
    const now = Date.now();
    const hit = this.byHash.get(key);
    if (hit && hit.until > now) return { actor: hit.actor, refusal: null };
    if (hit) this.byHash.delete(key);
    const found = await load();
    if (found.actor) {
      if (this.byHash.size >= MAX_ENTRIES) this.byHash.clear();
      this.byHash.set(key, { actor: found.actor, until: now + CACHE_MS });
    }
    return found;
  }

  /** Forgets every cached identity of the principal (all its tokens). */
  drop(principalId: string): void {
    for (const [hash, v] of this.byHash) if (v.actor.principalId === principalId) this.byHash.delete(hash);
  }

  clear(): void {
    this.byHash.clear();
  }
}

/** One cache per engine context (two engines in one test process do not share one). */
const caches = new WeakMap<EngineContext, IdentityCache>();

export function identityCache(ctx: EngineContext): IdentityCache {
  const known = caches.get(ctx);
  if (known) return known;
  const cache = new IdentityCache();
  ctx.notifier?.on('event', (e: EngineEvent) => {
    if (e.type === 'principal') cache.drop(e.principalId);
  });
  ctx.notifier?.on('ready', () => cache.clear());
  caches.set(ctx, cache);
  return cache;
}
