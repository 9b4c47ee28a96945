// The anvil of the EVM adapter's tests: the binary test/global-setup.ts found (@foundry-rs/anvil's platform
// package), or null where npm has none for this machine (then those tests do not run, and the closing line says so).
import { inject } from 'vitest';

export const ANVIL = inject('anvil');
