// The SQL Payrail issues per invoice, verbatim, so the baseline server can replay it without the service.
//
// Observed by wrapping pg's Client.prototype.query while the service handled single requests against
// PostgreSQL (Prisma 7.10 + @prisma/adapter-pg, token already in the authenticator's cache); the PGlite
// adapter sends the same texts. `checkStatements` in capture.ts re-observes them on every PostgreSQL run
// and warns when the service drifts from this list.
//
// REST/GraphQL create (createInvoice builds its answer from what it wrote; no read-back): createInvoice, one
//   statement: the invoice (createdAt on the merchant's test clock), its items, its event and its delivery
// REST read (getInvoiceRecord):  selectInvoice; then selectCompany, selectItems, selectAddress, selectTransfers,
//                               selectAutoswaps, selectRefund together
// GraphQL read (invoice query):  selectInvoiceOfCompany; then selectCompanyIn, selectItemsIn together (no address asked)
// First request per token only: a Company lookup by publicTokenHash (cached for 10 s afterwards; not replayed).

const INVOICE_COLUMNS = [
  'id', 'companyId', 'status"::text', 'invoiceCurrency', 'fixedPaymentCurrency', 'paymentCurrency', 'isMerchantPaysFee',
  'requestedRedirectUrl', 'redirectUrl', 'total', 'clientEmail', 'rate', 'rateDetails', 'invoiceFee', 'paymentAmount', 'paidAmount',
  'overpaidAmount', 'feeCharged', 'settledAt', 'acceptedAt', 'settlement', 'expiredAt', 'proceededAt', 'lang', 'paymentLinkId', 'orderId',
  'metadata', 'requestHash', 'createdAt', 'updatedAt',
]
  .map((c) => (c.endsWith('::text') ? `"public"."Invoice"."${c}` : `"public"."Invoice"."${c}"`))
  .join(', ');

const COMPANY_COLUMNS = [
  'id', 'accountId', 'mode"::text', 'name', 'logoUrl', 'redirectUrl', 'acceptedAssets', 'isMerchantPaysFee', 'publicTokenHash', 'secretKey', 'webhookUrl',
  'createdAt', 'updatedAt',
]
  .map((c) => (c.endsWith('::text') ? `"public"."Company"."${c}` : `"public"."Company"."${c}"`))
  .join(', ');

const ADDRESS_COLUMNS = ['id', 'companyId', 'invoiceId', 'asset', 'address', 'tag', 'createdAt']
  .map((c) => `"public"."PaymentAddress"."${c}"`)
  .join(', ');

export const SQL = {
  begin: 'BEGIN',
  commit: 'COMMIT',
  // $1 id, $2 companyId, $3 'created', $4 currency, $5 fixedPaymentCurrency, $6 isMerchantPaysFee,
  // $7 requestedRedirectUrl, $8 redirectUrl, $9 total (text), $10 createdAt, $11 updatedAt
  insertInvoice:
    `INSERT INTO "public"."Invoice" ("id","companyId","status","invoiceCurrency","fixedPaymentCurrency","isMerchantPaysFee","requestedRedirectUrl","redirectUrl","total","paidAmount","overpaidAmount","createdAt","updatedAt") VALUES ($1,$2,CAST($3::text AS "public"."InvoiceStatus"),$4,$5,$6,$7,$8,$9,$10,$11,$12,$13) RETURNING ${INVOICE_COLUMNS}`,
  // src/invoices/service.ts insertInvoice. $1 id, $2 companyId, $3 currency, $4 fixedPaymentCurrency,
  // $5 isMerchantPaysFee, $6 requestedRedirectUrl, $7 redirectUrl, $8 total, $9 paymentLinkId, $10 orderId, $11 metadata,
  // $12 requestHash, $13 now, $14 companyId, $15 id, $16-$18 item positions, names and prices, $19-$24 the event (id,
  // companyId, type, subject type and id, payload)
  createInvoice: "/* prepared */ \n          WITH new_invoice AS (\n            INSERT INTO \"Invoice\" (\"id\", \"companyId\", \"status\", \"invoiceCurrency\", \"fixedPaymentCurrency\", \"isMerchantPaysFee\",\n              \"requestedRedirectUrl\", \"redirectUrl\", \"total\", \"paymentLinkId\", \"orderId\", \"metadata\", \"requestHash\", \"createdAt\", \"updatedAt\")\n            VALUES ($1, $2::uuid, 'created', $3, $4, $5,\n              $6, $7, $8::numeric, $9,\n              $10, $11::json, $12,\n              ($13::timestamptz + COALESCE((SELECT sc.\"offsetMs\" FROM \"SandboxClock\" sc WHERE sc.\"companyId\" = $14::uuid), 0) * interval '1 millisecond'), now())\n            RETURNING \"id\", \"companyId\", \"status\", \"invoiceCurrency\", \"fixedPaymentCurrency\", \"paymentCurrency\", \"isMerchantPaysFee\", \"requestedRedirectUrl\", \"redirectUrl\", \"total\", \"clientEmail\", \"rate\", \"rateDetails\", \"invoiceFee\", \"paymentAmount\", \"paidAmount\", \"overpaidAmount\", \"feeCharged\", \"settledAt\", \"acceptedAt\", \"settlement\", \"expiredAt\", \"proceededAt\", \"lang\", \"paymentLinkId\", \"orderId\", \"metadata\", \"requestHash\", \"createdAt\", \"updatedAt\"\n          ),\n          new_items AS (\n            INSERT INTO \"InvoiceItem\" (\"invoiceId\", \"position\", \"name\", \"price\")\n            SELECT $15, t.\"position\", t.\"name\", t.\"price\"\n            FROM unnest($16::int[], $17::text[], $18::numeric[])\n              AS t(\"position\", \"name\", \"price\")\n          ),\n          recorded_event AS (INSERT INTO \"Event\" (\"id\", \"companyId\", \"type\", \"subjectType\", \"subjectId\", \"payload\") VALUES ($19, $20::uuid, $21, $22, $23, $24::json) RETURNING \"id\", \"seq\", \"companyId\"),\n    queued_delivery AS (\n      INSERT INTO \"WebhookDelivery\" (\"id\", \"eventId\", \"companyId\", \"url\", \"seq\", \"status\", \"nextAttemptAt\")\n      SELECT gen_random_uuid(), e.\"id\", e.\"companyId\", c.\"webhookUrl\", e.\"seq\", 'pending', now()\n      FROM recorded_event e JOIN \"Company\" c ON c.\"id\" = e.\"companyId\"\n      WHERE c.\"webhookUrl\" IS NOT NULL)\n          SELECT * FROM new_invoice",  // $1 id, $2 LIMIT '1', $3 OFFSET '0'
  selectInvoice: `SELECT ${INVOICE_COLUMNS} FROM "public"."Invoice" WHERE ("public"."Invoice"."id" = $1 AND 1=1) LIMIT $2 OFFSET $3`,
  // GraphQL: the invoice of the caller's company. $1 id, $2 companyId, $3 LIMIT '1', $4 OFFSET '0'
  selectInvoiceOfCompany: `SELECT ${INVOICE_COLUMNS} FROM "public"."Invoice" WHERE ("public"."Invoice"."id" = $1 AND "public"."Invoice"."companyId" = $2) LIMIT $3 OFFSET $4`,
  // GraphQL (batched by the data loader): $1 companyId, $2 OFFSET '0'
  selectCompanyIn: `SELECT ${COMPANY_COLUMNS} FROM "public"."Company" WHERE "public"."Company"."id" IN ($1) OFFSET $2`,
  // GraphQL (batched): $1 invoiceId, $2 OFFSET '0'
  selectItemsIn:
    'SELECT "public"."InvoiceItem"."invoiceId", "public"."InvoiceItem"."position", "public"."InvoiceItem"."name", "public"."InvoiceItem"."price" FROM "public"."InvoiceItem" WHERE "public"."InvoiceItem"."invoiceId" IN ($1) ORDER BY "public"."InvoiceItem"."position" ASC OFFSET $2',
  // $1 companyId, $2 OFFSET '0'
  selectCompany: `SELECT ${COMPANY_COLUMNS} FROM "public"."Company" WHERE "public"."Company"."id" = $1 OFFSET $2`,
  // $1 invoiceId, $2 OFFSET '0'
  selectItems:
    'SELECT "public"."InvoiceItem"."invoiceId", "public"."InvoiceItem"."position", "public"."InvoiceItem"."name", "public"."InvoiceItem"."price" FROM "public"."InvoiceItem" WHERE "public"."InvoiceItem"."invoiceId" = $1 ORDER BY "public"."InvoiceItem"."position" ASC OFFSET $2',
  // $1 invoiceId, $2 OFFSET '0'
  selectAddress: `SELECT ${ADDRESS_COLUMNS} FROM "public"."PaymentAddress" WHERE "public"."PaymentAddress"."invoiceId" = $1 OFFSET $2`,
  // $1 invoiceId, $2 OFFSET '0'
  selectTransfers: "SELECT \"public\".\"ChainTransfer\".\"id\", \"public\".\"ChainTransfer\".\"mode\"::text, \"public\".\"ChainTransfer\".\"network\", \"public\".\"ChainTransfer\".\"asset\", \"public\".\"ChainTransfer\".\"txHash\", \"public\".\"ChainTransfer\".\"outputIndex\", \"public\".\"ChainTransfer\".\"fromAddress\", \"public\".\"ChainTransfer\".\"toAddress\", \"public\".\"ChainTransfer\".\"tag\", \"public\".\"ChainTransfer\".\"amount\", \"public\".\"ChainTransfer\".\"confirmations\", \"public\".\"ChainTransfer\".\"blockNumber\", \"public\".\"ChainTransfer\".\"state\"::text, \"public\".\"ChainTransfer\".\"role\"::text, \"public\".\"ChainTransfer\".\"companyId\", \"public\".\"ChainTransfer\".\"invoiceId\", \"public\".\"ChainTransfer\".\"addressId\", \"public\".\"ChainTransfer\".\"seenAt\", \"public\".\"ChainTransfer\".\"confirmedAt\", \"public\".\"ChainTransfer\".\"droppedAt\", \"public\".\"ChainTransfer\".\"createdAt\" FROM \"public\".\"ChainTransfer\" WHERE \"public\".\"ChainTransfer\".\"invoiceId\" = $1 ORDER BY \"public\".\"ChainTransfer\".\"seenAt\" ASC, \"public\".\"ChainTransfer\".\"id\" ASC OFFSET $2",
  // $1 invoiceId, $2 OFFSET '0'
  selectAutoswaps: "SELECT \"public\".\"AutoSwap\".\"id\", \"public\".\"AutoSwap\".\"companyId\", \"public\".\"AutoSwap\".\"fromCurrency\", \"public\".\"AutoSwap\".\"toCurrency\", \"public\".\"AutoSwap\".\"amount\", \"public\".\"AutoSwap\".\"maxSlippagePercent\", \"public\".\"AutoSwap\".\"status\", \"public\".\"AutoSwap\".\"venue\", \"public\".\"AutoSwap\".\"minOut\", \"public\".\"AutoSwap\".\"quotedRate\", \"public\".\"AutoSwap\".\"deadline\", \"public\".\"AutoSwap\".\"ref\", \"public\".\"AutoSwap\".\"toAmount\", \"public\".\"AutoSwap\".\"venueFee\", \"public\".\"AutoSwap\".\"fee\", \"public\".\"AutoSwap\".\"failReason\", \"public\".\"AutoSwap\".\"lastError\", \"public\".\"AutoSwap\".\"attempts\", \"public\".\"AutoSwap\".\"nextAttemptAt\", \"public\".\"AutoSwap\".\"leaseUntil\", \"public\".\"AutoSwap\".\"claimGeneration\", \"public\".\"AutoSwap\".\"claim\", \"public\".\"AutoSwap\".\"invoiceId\", \"public\".\"AutoSwap\".\"transferId\", \"public\".\"AutoSwap\".\"addressId\", \"public\".\"AutoSwap\".\"createdAt\", \"public\".\"AutoSwap\".\"updatedAt\", \"public\".\"AutoSwap\".\"completedAt\" FROM \"public\".\"AutoSwap\" WHERE \"public\".\"AutoSwap\".\"invoiceId\" = $1 ORDER BY \"public\".\"AutoSwap\".\"createdAt\" ASC, \"public\".\"AutoSwap\".\"id\" ASC OFFSET $2",
  // $1 invoiceId, $2 OFFSET '0'
  selectRefund: 'SELECT "public"."Refund"."id", "public"."Refund"."invoiceId", "public"."Refund"."companyId", "public"."Refund"."asset", "public"."Refund"."amount", "public"."Refund"."networkFee", "public"."Refund"."toAddress", "public"."Refund"."tag", "public"."Refund"."status", "public"."Refund"."txHash", "public"."Refund"."failedSends", "public"."Refund"."createdAt", "public"."Refund"."sentAt", "public"."Refund"."confirmedAt" FROM "public"."Refund" WHERE "public"."Refund"."invoiceId" = $1 OFFSET $2',
} as const;

/** Statement texts per operation in issue order (the concurrent tail may arrive in any order). */
export const EXPECTED_STATEMENTS = {
  create: [SQL.createInvoice],
  restRead: [SQL.selectInvoice, SQL.selectCompany, SQL.selectItems, SQL.selectAddress, SQL.selectTransfers, SQL.selectAutoswaps, SQL.selectRefund],
  graphqlRead: [SQL.selectInvoiceOfCompany, SQL.selectCompanyIn, SQL.selectItemsIn],
};

/** Prisma sends timestamps as UTC text without a zone: `2026-11-22 00:03:36.119`. */
export const sqlTimestamp = (d: Date): string => d.toISOString().replace('T', ' ').replace('Z', '');
