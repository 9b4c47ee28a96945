-- Live subscriptions resuming with `after` read one company's events in bus order ((txid, seq)) from a cursor.
CREATE INDEX "Event_companyId_txid_seq_idx" ON "Event"("companyId", "txid", "seq");
