// Deliberate bugs the chaos soak plants in itself to prove its checks catch them (SOAK_PLANT, docs/soak.md):
// `skip-journal` leaves out the fee journal of every tenth invoice a process makes done; `double-deliver` sends every
// webhook twice, far beyond the duplicate bound. 'none' everywhere but in that proof. Set once per process, at the
// platform's start, so the layers that act on it (ledger, webhook worker) need no configuration passed down.
export const PLANTS = ['none', 'skip-journal', 'double-deliver'] as const;
export type Plant = (typeof PLANTS)[number];

let planted: Plant = 'none';
let journals = 0;

/** Every this many fee journals one is left out (not just the first: its transaction might roll back). */
const SKIP_EVERY = 10;

export function setPlant(plant: Plant): void {
  planted = plant;
  journals = 0;
}

export const plantedBug = (): Plant => planted;

/** `skip-journal`: true for the 1st, 11th, 21st... fee journal this process is about to write. */
export function skipThisJournal(): boolean {
  if (planted !== 'skip-journal') return false;
  return journals++ % SKIP_EVERY === 0;
}
