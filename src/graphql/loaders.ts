// Per-request batching (dataloader) for fields that resolve one row at a time: every load of a request made in
// the same tick becomes one query, so a page of 100 parents costs the same statements as a page of one.
import DataLoader from 'dataloader';

const loadersOf = new WeakMap<object, Map<string, DataLoader<unknown, unknown>>>();

/**
 * A loader kind: `batch` answers one value per key, in key order. Each request context gets its own loader (no
 * cache shared between callers); `variant` separates loaders of one kind that must not share a batch (e.g. a
 * different selection of nested fields).
 */
export function contextLoader<K, V, C extends object>(name: string, batch: (keys: readonly K[], ctx: C, variant: unknown) => Promise<V[]>) {
  return (ctx: C, variant: unknown = null): DataLoader<K, V> => {
    let loaders = loadersOf.get(ctx);
    if (!loaders) loadersOf.set(ctx, (loaders = new Map()));
    const key = variant === null ? name : `${name}:${JSON.stringify(variant)}`;
    let loader = loaders.get(key) as DataLoader<K, V> | undefined;
    if (!loader) {
      loader = new DataLoader<K, V>((keys) => batch(keys, ctx, variant), { maxBatchSize: 1_000 });
      loaders.set(key, loader as DataLoader<unknown, unknown>);
    }
    return loader;
  };
}
