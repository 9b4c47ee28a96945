// The wrapper every real node's adapter runs behind: a node that fails while an address is handed out is a clear 503
// (logged with the cause), a refusal of the adapter's own passes through as it is, and an optional node that never
// answered refuses everything until its watcher has.
import { describe, expect, it } from 'vitest';
import type { AddressRequest } from '../../src/chains/adapter.ts';
import { GuardedAdapter, type NodeAdapter } from '../../src/chains/registry.ts';
import type { Watcher } from '../../src/chains/watch.ts';
import { AppError, ValidationError } from '../../src/errors/app-error.ts';
import { createLogger } from '../../src/logger.ts';

const request: AddressRequest = { paymentCurrency: 'ltc', ownerId: 'invoice-1' } as AddressRequest;

function guarded(allocate: () => Promise<never>, options: { reachable?: boolean; watcher?: 'ok' | 'failing' } = {}) {
  const lines: Record<string, unknown>[] = [];
  const logger = createLogger('error', { write: (line: string) => void lines.push(JSON.parse(line) as Record<string, unknown>) });
  const inner = { network: 'litecoin', allocateAddress: allocate } as unknown as NodeAdapter;
  const watcher = { health: { state: options.watcher ?? 'ok' } } as unknown as Watcher<unknown>;
  return { adapter: new GuardedAdapter(inner, watcher, options.reachable ?? true, logger), lines };
}

describe('GuardedAdapter.allocateAddress', () => {
  it('turns a node failure into 503 SERVICE_UNAVAILABLE naming the network, and logs the cause', async () => {
    const { adapter, lines } = guarded(() => Promise.reject(new Error('RPC importmulti: Requested wallet does not exist or is not loaded')));
    const error = await adapter.allocateAddress(request).catch((e: unknown) => e);
    expect(error).toBeInstanceOf(AppError);
    expect(error).toMatchObject({ code: 'SERVICE_UNAVAILABLE', status: 503, message: 'Payments on litecoin are unavailable now: its node failed while handing out an address; try again shortly' });
    expect(lines).toEqual([expect.objectContaining({ msg: 'an address could not be handed out', network: 'litecoin', err: expect.objectContaining({ message: expect.stringContaining('importmulti') }) })]);
  });

  it("passes the adapter's own refusals through unchanged", async () => {
    const refusal = new ValidationError([{ path: 'paymentCurrency', message: 'no usdtContract' }]);
    const { adapter, lines } = guarded(() => Promise.reject(refusal));
    await expect(adapter.allocateAddress(request)).rejects.toBe(refusal);
    expect(lines).toEqual([]);
  });

  it('refuses while an optional node has not answered yet', async () => {
    const { adapter } = guarded(() => Promise.reject(new Error('not reached')), { reachable: false, watcher: 'failing' });
    await expect(adapter.allocateAddress(request)).rejects.toMatchObject({ code: 'SERVICE_UNAVAILABLE', message: 'Payments on litecoin are unavailable now: its node does not answer' });
  });
});
