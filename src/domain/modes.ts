// Test and live mode (docs/modes.md): every merchant account has one tenant per mode. Test mode runs every network on
// the sandbox chain with a test clock; live mode runs on real nodes only.
export const MODES = ['test', 'live'] as const;
export type Mode = (typeof MODES)[number];

export const isMode = (v: string): v is Mode => (MODES as readonly string[]).includes(v);

