// The risk hook (AML/TMS checks) every money movement to or from a third party passes: withdrawals before they
// are broadcast, deposits before they are credited. The default allows everything; a deny list blocks addresses
// or transaction hashes named in RISK_DENY_LIST. A real screening service plugs in behind the same interface.

export interface RiskSubject {
  kind: 'withdrawal' | 'deposit';
  companyId: string;
  /** Payment currency (asset plus network). */
  asset: string;
  /** The third party's address: the receiver of a withdrawal, the sender of a deposit (when known). */
  address: string | null;
  txHash?: string | null;
}

export type RiskVerdict = { allow: true } | { allow: false; reason: string };

export interface RiskHook {
  review(subject: RiskSubject): Promise<RiskVerdict>;
}

export const allowAll: RiskHook = { review: async () => ({ allow: true }) };

// EVM addresses and hex hashes are case-insensitive; other formats (base58, bech32 upper/lower) are compared as given
// and, for hex-looking values, in lower case.
const normalise = (value: string) => (/^(0x)?[0-9a-fA-F]+$/.test(value) ? value.toLowerCase() : value);

/** Blocks any subject whose address or txHash is listed; everything else goes to `next`. */
export function denyList(entries: readonly string[], next: RiskHook = allowAll): RiskHook {
  const denied = new Set(entries.map((e) => normalise(e.trim())).filter(Boolean));
  if (denied.size === 0) return next;
  return {
    async review(subject) {
      for (const value of [subject.address, subject.txHash]) {
        if (value && denied.has(normalise(value))) return { allow: false, reason: 'Blocked by the AML/TMS checks (deny list)' };
      }
      return next.review(subject);
    },
  };
}
