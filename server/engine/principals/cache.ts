/**
 * The identity cache of one engine process: caching the principal by token hash for a few seconds saves
 * a round trip per call on the hot paths. A change to a principal is announced through NOTIFY in its
 * transaction and every engine drops that principal's identities when it hears it, so the change holds
 * at once; when the listener reconnects (it may have missed events) the whole cache is dropped.
 */
import type { Actor, EngineContext, EngineEvent } from '../common/index.js';

const CACHE_MS = 5_000;
const MAX_ENTRIES = 10_000;

class IdentityCache {
  private readonly byHash = new Map<string, { actor: Actor; until: number }>();

  get(hash: string, now: number): Actor | null {
    const hit = this.byHash.get(hash);
    if (!hit) return null;
    if (hit.until > now) return hit.actor;
    this.byHash.delete(hash);
    return null;
  }

  set(hash: string, actor: Actor, now: number): void {
    if (this.byHash.size >= MAX_ENTRIES) this.byHash.clear();
    this.byHash.set(hash, { actor, until: now + CACHE_MS });
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
