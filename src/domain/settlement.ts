// Settlement rules shared by the invoice lifecycle and the ledger check.

/**
 * The most a merchant may tolerate, as a share of the invoice amount: an invoice is paid only once at least
 * 90% of its amount arrived confirmed, whatever the underpayment limits say (larger limits are capped).
 */
export const MAX_UNDERPAYMENT_PERCENT = 10;
