-- What an invoice's locked rate was made of (issue 25): its kind (live or static), each side's USD price with the
-- sources, markets, prices and fetch times used, and the spread. Written at proceed with the rate; null before, and
-- for invoices filled before this migration.
ALTER TABLE "Invoice" ADD COLUMN "rateDetails" JSONB;
