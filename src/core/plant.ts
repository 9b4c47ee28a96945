// Deliberate bugs the chaos soak plants in itself to prove its checks catch them (SOAK_PLANT, docs/soak.md):
// `skip-journal` leaves out the fee journal of every tenth invoice a process makes done; `double-deliver` sends every
// webhook twice, far beyond the duplicate bound. None everywhere but in that proof. Set once per process, at the
// platform's start, so the layers that act on it (invoices' lifecycle, the webhook worker) need nothing passed down.
export const PLANTS = ['skip-journal', 'double-deliver'] as const;
export type Plant = (typeof PLANTS)[number];

let planted: ReadonlySet<Plant> = new Set();
let journals = 0;

/** Every this many fee journals one is left out (not just the first: its transaction might roll back). */
const SKIP_EVERY = 10;

export function setPlants(plants: readonly Plant[]): void {
  planted = new Set(plants);
  journals = 0;
}

export const isPlanted = (plant: Plant): boolean => planted.has(plant);

/** `skip-journal`: true for the 1st, 11th, 21st... fee journal this process is about to write. */
export function skipThisJournal(): boolean {
  if (!planted.has('skip-journal')) return false;
  return journals++ % SKIP_EVERY === 0;
}
