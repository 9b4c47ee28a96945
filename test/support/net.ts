// Network helpers without vitest, for the tests and the benchmarks alike.
import { createServer, type AddressInfo } from 'node:net';

/** A TCP port free on 127.0.0.1 now (the OS's pick). */
export async function freePort(): Promise<number> {
  const server = createServer();
  await new Promise<void>((resolve, reject) => {
    server.once('error', reject);
    server.listen(0, '127.0.0.1', () => resolve());
  });
  const { port } = server.address() as AddressInfo;
  await new Promise<void>((resolve) => server.close(() => resolve()));
  return port;
}
